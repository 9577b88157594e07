/*
 * fake_rte.c: modex and fences through files, for BTL unit tests (fake_rte.h).
 *
 * publish(key) writes <dir>/<rank>.<key>; a fence writes <dir>/fence.<n>.<rank> and waits
 * until every rank's file for fence n exists; lookup reads the peer's file. Writes go
 * through a temporary name and rename(), so a reader never sees a partial value.
 */
#include "config.h"

#include "fake_rte.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crmpi_status.h"

/* One contiguous byte (fake_rte.h). */
static const crmpi_dt_run_t fake_byte_run = {.disp = 0, .len = 1, .basic_size = 1};
const struct crmpi_datatype_s crmpi_btl_test_byte_type = {
    .name = "test byte",
    .size = 1,
    .extent = 1,
    .true_extent = 1,
    .predefined = true,
    .committed = true,
    .refcount = 1,
    .runs = (crmpi_dt_run_t *)&fake_byte_run,
    .num_runs = 1,
    .basic_count = 1,
    .contiguous = true,
    .run_len = 1,
    .runs_regular = true,
    .align = 1,
};

/* The job this process plays a rank of. */
static crmpi_rte_job_info_t fake_job;
/* The shared directory. */
static char fake_dir[512];
/* Fences done so far. */
static unsigned fake_fences;

void crmpi_btl_test_rte_setup(const char *dir, uint32_t rank, uint32_t size,
                              const uint32_t *node_of_rank, crmpi_rte_job_info_t *job_out)
{
    uint32_t local_rank = 0;
    uint32_t local_size = 0;
    uint32_t num_nodes = 0;

    snprintf(fake_dir, sizeof(fake_dir), "%s", dir);
    fake_fences = 0;
    memset(&fake_job, 0, sizeof(fake_job));
    fake_job.jobid = (uint64_t)getppid();
    fake_job.rank = rank;
    fake_job.size = size;
    fake_job.node_of_rank = calloc(size, sizeof(uint32_t));
    for (uint32_t r = 0; r < size; r++) {
        fake_job.node_of_rank[r] = node_of_rank ? node_of_rank[r] : 0;
        if (fake_job.node_of_rank[r] + 1 > num_nodes)
            num_nodes = fake_job.node_of_rank[r] + 1;
    }
    fake_job.node_id = fake_job.node_of_rank[rank];
    for (uint32_t r = 0; r < size; r++) {
        if (fake_job.node_of_rank[r] != fake_job.node_id)
            continue;
        if (r < rank)
            local_rank++;
        local_size++;
    }
    fake_job.local_rank = local_rank;
    fake_job.local_size = local_size;
    fake_job.num_nodes = num_nodes;
    snprintf(fake_job.nodename, sizeof(fake_job.nodename), "node%u", fake_job.node_id);
    snprintf(fake_job.session_dir, sizeof(fake_job.session_dir), "%s", dir);
    /* The same key in every rank of the test (they share the parent), as mpirun's agents
     * give it; test_btl_tcp's intruders know the jobid but not this. */
    for (uint32_t i = 0; i < CRMPI_RTE_KEY_LEN; i++)
        fake_job.job_key[i] = (uint8_t)((fake_job.jobid >> (8 * (i % 8))) ^ (i * 37u));
    fake_job.job_key_len = CRMPI_RTE_KEY_LEN;
    *job_out = fake_job;
}

const crmpi_rte_job_info_t *crmpi_rte_job(void)
{
    return &fake_job;
}

static int fake_write(const char *name, const void *data, size_t len)
{
    char path[600];
    char tmp[610];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", fake_dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f)
        return CRMPI_ERR_IO;
    if (len && fwrite(data, 1, len, f) != len) {
        fclose(f);
        return CRMPI_ERR_IO;
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        return CRMPI_ERR_IO;
    return CRMPI_OK;
}

int crmpi_rte_modex_publish(const char *key, const void *data, size_t len)
{
    char name[300];

    snprintf(name, sizeof(name), "%u.%s", fake_job.rank, key);
    return fake_write(name, data, len);
}

int crmpi_rte_fence(int collect)
{
    char name[64];
    char path[600];
    struct stat st;
    int rc;

    (void)collect;
    snprintf(name, sizeof(name), "fence.%u.%u", fake_fences, fake_job.rank);
    rc = fake_write(name, "", 0);
    if (rc != CRMPI_OK)
        return rc;
    for (uint32_t r = 0; r < fake_job.size; r++) {
        snprintf(path, sizeof(path), "%s/fence.%u.%u", fake_dir, fake_fences, r);
        while (stat(path, &st) != 0)
            usleep(1000);
    }
    fake_fences++;
    return CRMPI_OK;
}

int crmpi_rte_modex_lookup(uint32_t peer_rank, const char *key, void **data_out, size_t *len_out)
{
    char path[600];
    FILE *f;
    long len;
    void *data;

    snprintf(path, sizeof(path), "%s/%u.%s", fake_dir, peer_rank, key);
    f = fopen(path, "r");
    if (!f)
        return CRMPI_ERR_NOT_FOUND;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    data = malloc(len > 0 ? (size_t)len : 1);
    if (!data || (len > 0 && fread(data, 1, (size_t)len, f) != (size_t)len)) {
        free(data);
        fclose(f);
        return CRMPI_ERR_IO;
    }
    fclose(f);
    *data_out = data;
    *len_out = (size_t)len;
    return CRMPI_OK;
}

int crmpi_rte_init(void)
{
    return CRMPI_OK;
}

bool crmpi_rte_connected(void)
{
    return true;
}

int crmpi_rte_abort(int errcode, const char *message)
{
    fprintf(stderr, "fake rte: abort %d: %s\n", errcode, message);
    _exit(errcode ? errcode : 1);
}

int crmpi_rte_finalize(void)
{
    return CRMPI_OK;
}

/* Remove `path` and everything under it (scenarios give each cycle a subdirectory). */
static void fake_dir_remove(const char *path)
{
    DIR *dir = opendir(path);
    struct dirent *entry;

    if (!dir)
        return;
    while ((entry = readdir(dir)) != NULL) {
        char file[1024];
        struct stat st;

        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        snprintf(file, sizeof(file), "%s/%s", path, entry->d_name);
        if (lstat(file, &st) == 0 && S_ISDIR(st.st_mode))
            fake_dir_remove(file);
        else
            unlink(file);
    }
    closedir(dir);
    rmdir(path);
}

int crmpi_btl_test_run_ranks(const char *name, uint32_t size, unsigned timeout_s,
                             crmpi_btl_test_scenario_fn_t scenario, void *arg,
                             uint32_t *skipped_out)
{
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    const char *tmp = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    char dir[512];
    pid_t pids[size];
    uint32_t left = 0, skipped = 0;
    int failed = 0;

    snprintf(dir, sizeof(dir), "%s/crmpi-%s-XXXXXX", tmp, name);
    if (!mkdtemp(dir))
        return -1;
    fflush(NULL);
    for (uint32_t r = 0; r < size; r++) {
        pids[r] = fork();
        if (pids[r] < 0) {
            for (uint32_t o = 0; o < r; o++)
                kill(pids[o], SIGKILL);
            failed = -1;
            break;
        }
        if (pids[r] == 0) {
            for (size_t s = 0; s < sizeof(fatal) / sizeof(fatal[0]); s++)
                signal(fatal[s], SIG_DFL);
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            alarm(timeout_s);
            scenario(r, size, dir, arg);
            _exit(0);
        }
        left++;
    }
    while (left > 0) {
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        uint32_t r;

        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        for (r = 0; r < size && pids[r] != pid; r++)
            ;
        if (r == size)
            continue;
        pids[r] = 0;
        left--;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            continue;
        if (WIFEXITED(status) && WEXITSTATUS(status) == CRMPI_BTL_TEST_EXIT_SKIP) {
            skipped++;
            continue;
        }
        if (WIFSIGNALED(status))
            fprintf(stderr, "rank %u killed by signal %d%s\n", r, WTERMSIG(status),
                    WTERMSIG(status) == SIGALRM ? " (timeout: deadlock?)" : "");
        else
            fprintf(stderr, "rank %u exited with %d\n", r, WEXITSTATUS(status));
        if (failed == 0) {
            for (uint32_t o = 0; o < size; o++) {
                if (pids[o] > 0)
                    kill(pids[o], SIGKILL);
            }
        }
        if (failed >= 0)
            failed++;
    }
    fake_dir_remove(dir);
    if (skipped_out)
        *skipped_out = skipped;
    return failed;
}
