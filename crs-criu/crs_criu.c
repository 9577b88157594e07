/*
 * crs_criu.c: checkpoint and restart of one rank's pid namespace with libcriu (crs.h).
 *
 * libcriu runs "criu swrk" as a child of the caller for every request and talks to it over
 * a socketpair: criu reads the images directory through /proc/<caller>/fd/<n>, and takes
 * inherited descriptors from its own table, which is why they are passed as duplicates
 * without FD_CLOEXEC (crs_criu_restart).
 */
#include "config.h"

#include <criu.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <linux/mempolicy.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "crs_criu_int.h"
#include "fault.h"
#include "log.h"
#include "mempolicy.h"
#include "param.h"

/* Lines of CRIU's log quoted in a failure message, and the room for them. */
#define CRS_CRIU_QUOTED_LINES 3
#define CRS_CRIU_MESSAGE_MAX  1024

/* CRIU's log verbosity (its -v): 2 is errors and warnings, 4 is everything. */
#define CRS_CRIU_LOG_LEVEL 2

/*
 * CRIU's parasite, run inside the namespace's init, gets a /proc of the init's pid namespace
 * by mounting one at "proc.crtools" in the init's working directory, and removes it at once.
 * The dumps of inits that share a working directory (every rank of a job started in one
 * directory, on one node or on nodes that share its file system, all dumped at the same
 * moment) can meet there: the later mkdir fails with EEXIST before anything was dumped, and
 * the rank keeps running. Such a dump is run again after a random pause, a few times.
 */
#define CRS_CRIU_DUMP_TRIES     10
#define CRS_CRIU_COLLISION_LINE "Can't create a directory (-17)"
/* The pause before try t (from 1): a random time up to t times this many milliseconds. */
#define CRS_CRIU_COLLISION_PAUSE_MS 50

/*
 * Error lines CRIU writes on every run here, failed or not, so they explain nothing:
 * criu raises its own RLIMIT_NOFILE to the kernel's nr_open and logs at error level when
 * it may not (a container without CAP_SYS_RESOURCE), then goes on with its current limit.
 */
static const char *const crs_criu_benign_errors[] = {
    "rlimit: Can't setup RLIMIT_NOFILE",
};

static int crs_criu_error_is_benign(const char *line)
{
    for (size_t i = 0; i < sizeof(crs_criu_benign_errors) / sizeof(crs_criu_benign_errors[0]);
         i++) {
        if (strstr(line, crs_criu_benign_errors[i])) {
            return 1;
        }
    }
    return 0;
}

/* Format a failure once: log it and copy it for the caller. Returns rc. */
int crs_criu_fail(char *errbuf, size_t errbuf_len, int rc, const char *fmt, ...)
{
    char message[CRS_CRIU_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    crmpi_log_error("%s", message);
    if (errbuf && errbuf_len > 0) {
        snprintf(errbuf, errbuf_len, "%s", message);
    }
    return rc;
}

/*
 * The lines of CRIU's log that contain "Error", from that word on (the timestamp before it
 * says nothing to a user), joined by " | "; at most CRS_CRIU_QUOTED_LINES, the first ones,
 * since CRIU's first error is the cause and later ones are its consequences.
 */
static void crs_criu_quote_errors(const char *log_path, char *out, size_t out_len)
{
    char line[512];
    size_t used = 0;
    int quoted = 0, more = 0;
    FILE *f = fopen(log_path, "re");

    out[0] = '\0';
    if (!f) {
        snprintf(out, out_len, "CRIU wrote no log (%s: %s)", log_path, strerror(errno));
        return;
    }
    while (fgets(line, sizeof(line), f)) {
        char *error = strstr(line, "Error");
        if (!error || crs_criu_error_is_benign(error)) {
            continue;
        }
        if (quoted == CRS_CRIU_QUOTED_LINES) {
            more++;
            continue;
        }
        error[strcspn(error, "\n")] = '\0';
        int n = snprintf(out + used, out_len - used, "%s%s", quoted ? " | " : "", error);
        if (n < 0 || (size_t)n >= out_len - used) {
            break;
        }
        used += (size_t)n;
        quoted++;
    }
    fclose(f);
    if (quoted == 0) {
        snprintf(out, out_len, "no Error line in CRIU's log");
    } else if (more > 0 && used + 32 < out_len) {
        snprintf(out + used, out_len - used, " | (%d more)", more);
    }
}

int crs_criu_log_says_collision(const char *log_path)
{
    char line[512];
    int found = 0;
    FILE *f = fopen(log_path, "re");

    while (f && !found && fgets(line, sizeof(line), f))
        found = strstr(line, "parasite") && strstr(line, CRS_CRIU_COLLISION_LINE);
    if (f)
        fclose(f);
    return found;
}

/* The pause before dump try `attempt` (see CRS_CRIU_DUMP_TRIES): random, so that dumps that
 * met do not meet again. */
static void crs_criu_collision_pause(int attempt)
{
    static unsigned seed;
    struct timespec pause;
    long ms;

    if (!seed)
        seed = (unsigned)getpid() ^ (unsigned)time(NULL);
    ms = 1 + (long)(rand_r(&seed) % (attempt * CRS_CRIU_COLLISION_PAUSE_MS));
    pause.tv_sec = ms / 1000;
    pause.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&pause, &pause) < 0 && errno == EINTR) {
    }
}

/* The criu program to run: parameter crs_criu_binary; checked, so a bad one says so. */
static int crs_criu_binary(const char **path_out, char *errbuf, size_t errbuf_len)
{
    const char *path = NULL;
    if (crmpi_param_get_string("crs_criu_binary", &path) != CRMPI_OK || !path || !*path) {
        return crs_criu_fail(errbuf, errbuf_len, CRMPI_ERR_NOT_SUPPORTED,
                             "crs:criu: no criu program: configure found none and the "
                             "parameter crs_criu_binary is empty");
    }
    if (access(path, X_OK) < 0) {
        return crs_criu_fail(errbuf, errbuf_len, CRMPI_ERR_NOT_SUPPORTED,
                             "crs:criu: cannot run the criu program %s (parameter "
                             "crs_criu_binary): %s",
                             path, strerror(errno));
    }
    /* An ordinary user's CRIU takes CAP_CHECKPOINT_RESTORE from its file, permitted and
     * effective; without it CRIU refuses with a line on its standard error only. */
    if (geteuid() != 0) {
        cap_flag_value_t permitted = CAP_CLEAR, effective = CAP_CLEAR;
        cap_t caps = cap_get_file(path);

        if (caps) {
            cap_get_flag(caps, CAP_CHECKPOINT_RESTORE, CAP_PERMITTED, &permitted);
            cap_get_flag(caps, CAP_CHECKPOINT_RESTORE, CAP_EFFECTIVE, &effective);
            cap_free(caps);
        }
        if (permitted != CAP_SET || effective != CAP_SET)
            return crs_criu_fail(errbuf, errbuf_len, CRMPI_ERR_NOT_SUPPORTED,
                                 "crs:criu: %s lacks CAP_CHECKPOINT_RESTORE, which an ordinary "
                                 "user's checkpoint and restart need (an administrator runs "
                                 "'setcap cap_checkpoint_restore+ep %s' once; make install as "
                                 "root does it)",
                                 path, path);
    }
    *path_out = path;
    return CRMPI_OK;
}

/* In libcriu 4.1.1 but missing from its criu.h (the process-wide criu_set_unprivileged is
 * there; this one is its per-options form). */
void criu_local_set_unprivileged(criu_opts *opts, bool unprivileged);

/* Options common to dump and restore. `log_path` decides the work dir and log name:
 * CRIU takes the log as a bare name inside its work directory. */
static int crs_criu_opts_create(const char *binary, int images_fd, const char *log_path,
                                int *work_fd_out, criu_opts **opts_out)
{
    criu_opts *opts = NULL;
    char dir_copy[4096], base_copy[4096];

    snprintf(dir_copy, sizeof(dir_copy), "%s", log_path);
    snprintf(base_copy, sizeof(base_copy), "%s", log_path);
    int work_fd = open(dirname(dir_copy), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    if (work_fd < 0) {
        return CRMPI_ERR_IO;
    }
    if (criu_local_init_opts(&opts) < 0) {
        close(work_fd);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    if (criu_local_set_service_binary(opts, binary) < 0 ||
        criu_local_set_log_file(opts, basename(base_copy)) < 0) {
        criu_local_free_opts(opts);
        close(work_fd);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    criu_local_set_images_dir_fd(opts, images_fd);
    criu_local_set_work_dir_fd(opts, work_fd);
    criu_local_set_log_level(opts, CRS_CRIU_LOG_LEVEL);
    /* An ordinary user's CRIU runs with CAP_CHECKPOINT_RESTORE only (docs/design.md,
     * "Ordinary users"): it must be told, or it refuses to start. */
    criu_local_set_unprivileged(opts, geteuid() != 0);
    /* File locks the rank holds (a persistent heap's, on its file) are dumped and taken
     * again at the restore, which fails if another process holds a conflicting one then;
     * without it CRIU refuses a task that holds a lock. */
    criu_local_set_file_locks(opts, true);
    crs_criu_breakpoints_setup();
    *work_fd_out = work_fd;
    *opts_out = opts;
    return CRMPI_OK;
}

/* libcriu's return value, in words. */
static const char *crs_criu_strerror(int ret)
{
    switch (ret) {
    case -EBADE: return "CRIU reported a failure";
    case -ECONNREFUSED: return "cannot start criu";
    case -ECOMM: return "criu died or did not answer";
    case -EINVAL: return "libcriu rejected an option";
    default: return strerror(-ret);
    }
}

/* Sum of the sizes of the regular files in the images directory. */
static uint64_t crs_criu_dir_bytes(int dirfd)
{
    uint64_t total = 0;
    int fd = dup(dirfd);
    DIR *dir = fd < 0 ? NULL : fdopendir(fd);
    if (!dir) {
        if (fd >= 0) {
            close(fd);
        }
        return 0;
    }
    rewinddir(dir);
    struct dirent *ent;
    while ((ent = readdir(dir)) != NULL) {
        struct stat st;
        if (fstatat(dirfd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
            total += (uint64_t)st.st_size;
        }
    }
    closedir(dir);
    return total;
}

/* One protobuf varint at *p (bounded by end); 0 and *p unchanged when malformed. */
static int crs_criu_varint(const uint8_t **p, const uint8_t *end, uint64_t *value_out)
{
    uint64_t value = 0;
    for (int shift = 0; *p + shift / 7 < end && shift < 64; shift += 7) {
        uint8_t byte = (*p)[shift / 7];
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *p += shift / 7 + 1;
            *value_out = value;
            return 1;
        }
    }
    return 0;
}

/*
 * CRIU's stats-dump image: two magics (service, stats), a 32-bit length, then a protobuf
 * stats_entry whose field 1 is a dump_stats_entry (CRIU's images/stats.proto): varint
 * fields, 2 frozen_time, 3 memdump_time, 4 memwrite_time (microseconds), 7 pages_written.
 */
static void crs_criu_read_stats(int dirfd, crmpi_crs_ckpt_result_t *result)
{
    uint8_t buf[512];
    int fd = openat(dirfd, "stats-dump", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    ssize_t len = read(fd, buf, sizeof(buf));
    close(fd);
    uint32_t msg_len;
    if (len < 12) {
        return;
    }
    memcpy(&msg_len, buf + 8, sizeof(msg_len));
    const uint8_t *p = buf + 12, *end = buf + 12 + msg_len;
    uint64_t key, value;
    if (end > buf + len || !crs_criu_varint(&p, end, &key) || key != ((1 << 3) | 2) ||
        !crs_criu_varint(&p, end, &value) || p + value > end) {
        return;
    }
    end = p + value;
    while (p < end) {
        if (!crs_criu_varint(&p, end, &key) || (key & 7) != 0 ||
            !crs_criu_varint(&p, end, &value)) {
            return; /* every dump_stats_entry field is a varint */
        }
        switch (key >> 3) {
        case 2: result->frozen_us = value; break;
        case 3: result->memdump_us = value; break;
        case 4: result->memwrite_us = value; break;
        case 7: result->pages_written = value; break;
        default: break;
        }
    }
    result->have_stats = 1;
}

static double crs_criu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CRIU's input for an incremental dump, written into the images directory for the dump
 * only (crs_criu_incremental_clean removes it): the dirty map and the configuration file
 * that names it (libcriu has no option for it). */
#define CRS_CRIU_DIRTY_MAP  "crmpi-dirty.map"
#define CRS_CRIU_DIRTY_CONF "crmpi-criu.conf"
/* CRIU's link from an images directory to its parent images. */
#define CRS_CRIU_PARENT_LINK "parent"

/* Collect the pages written since the last dump and tell CRIU about them, and about the
 * parent images when there are. Without a parent the dump is full, but records what the
 * next one checks against (its uptime) and re-arms the tracking. */
static int crs_criu_incremental_setup(const crmpi_crs_ckpt_opts_t *opts, criu_opts *copts,
                                      crmpi_crs_ckpt_result_t *result)
{
    char map_path[4200], conf_path[4200];
    FILE *conf;
    int rc;

    snprintf(map_path, sizeof(map_path), "%s/%s", opts->images_dir, CRS_CRIU_DIRTY_MAP);
    snprintf(conf_path, sizeof(conf_path), "%s/%s", opts->images_dir, CRS_CRIU_DIRTY_CONF);
    rc = crs_criu_track_collect(opts->track, map_path, &result->pages_dirty);
    if (rc != CRMPI_OK)
        return crs_criu_fail(opts->errbuf, opts->errbuf_len, rc,
                             "crs:criu: cannot read which pages of the rank (init %d) were "
                             "written (%s)",
                             (int)opts->init_pid, crmpi_strerror(rc));
    conf = fopen(conf_path, "we");
    if (!conf || fprintf(conf, "dirty-map %s\n", map_path) < 0 || fclose(conf) != 0)
        return crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_IO,
                             "crs:criu: cannot write %s: %s", conf_path, strerror(errno));
    if (criu_local_set_config_file(copts, conf_path) < 0 ||
        (opts->parent_dir && criu_local_set_parent_images(copts, opts->parent_dir) < 0))
        return crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_OUT_OF_RESOURCE,
                             "crs:criu: out of memory building CRIU's options");
    return CRMPI_OK;
}

/* After the dump: the images directory keeps images only (the caller records the chain). */
static void crs_criu_incremental_clean(int images_fd)
{
    unlinkat(images_fd, CRS_CRIU_DIRTY_MAP, 0);
    unlinkat(images_fd, CRS_CRIU_DIRTY_CONF, 0);
    unlinkat(images_fd, CRS_CRIU_PARENT_LINK, 0);
}

/* Link images_dir to its parents for CRIU: images_dir/parent -> parents[0],
 * parents[0]/parent -> parents[1], ... (absolute paths). */
static int crs_criu_chain_link(const char *images_dir, const char *const *parents)
{
    const char *child = images_dir;
    char link_path[4200];

    for (size_t i = 0; parents && parents[i]; i++) {
        snprintf(link_path, sizeof(link_path), "%s/%s", child, CRS_CRIU_PARENT_LINK);
        unlink(link_path);
        if (symlink(parents[i], link_path) < 0)
            return CRMPI_ERR_IO;
        child = parents[i];
    }
    return CRMPI_OK;
}

/* The dump in progress, for its notifications (libcriu's callback takes no argument;
 * crs.h: calls are not concurrent). */
typedef struct crs_criu_dump_ctx {
    const crs_criu_meta_t *meta; /* the record, with the files mapped shared */
    int images_fd;               /* where their copies go */
    int rc;                      /* the copies' outcome */
    char why[CRS_CRIU_MESSAGE_MAX];
} crs_criu_dump_ctx_t;

static crs_criu_dump_ctx_t *crs_criu_dump_current;

/* CRIU's notifications during a dump. At "post-dump" the images are written and the
 * tasks are still frozen, CRIU waiting for the answer: the files the rank maps shared are
 * copied then, as its memory is (a failure makes CRIU fail the dump); and a test holds it
 * there to act while CRIU runs (fault point crs_criu_dump_pause). */
static int crs_criu_dump_notify(char *action, criu_notify_arg_t na)
{
    crs_criu_dump_ctx_t *ctx = crs_criu_dump_current;

    (void)na;
    if (strcmp(action, "post-dump") != 0)
        return 0;
    if (ctx) {
        ctx->rc = crs_criu_mapped_save(ctx->meta, ctx->images_fd, ctx->why, sizeof(ctx->why));
        if (ctx->rc != CRMPI_OK)
            return -1;
    }
    crmpi_fault_pause("crs_criu_dump_pause");
    return 0;
}

int crs_criu_checkpoint(const crmpi_crs_ckpt_opts_t *opts, crmpi_crs_ckpt_result_t *result_out)
{
    crmpi_crs_ckpt_result_t result;
    crs_criu_meta_t meta;
    criu_opts *copts;
    char log_path[4096], quoted[CRS_CRIU_MESSAGE_MAX];
    const char *binary;
    int work_fd, rc;

    memset(&result, 0, sizeof(result));
    if (opts->init_pid <= 0 || !opts->images_dir) {
        return crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_BAD_PARAM,
                             "crs:criu: checkpoint needs the init's pid and an images directory");
    }
    if ((rc = crs_criu_binary(&binary, opts->errbuf, opts->errbuf_len)) != CRMPI_OK) {
        return rc;
    }
    int images_fd = open(opts->images_dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    if (images_fd < 0) {
        return crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_IO,
                             "crs:criu: cannot open the images directory %s: %s", opts->images_dir,
                             strerror(errno));
    }
    double record_start = crs_criu_now();
    rc = crs_criu_meta_collect(opts->init_pid, &meta);
    double record_seconds = crs_criu_now() - record_start;
    if (rc != CRMPI_OK) {
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, rc,
                           "crs:criu: no rank namespace with init pid %d to checkpoint (%s)",
                           (int)opts->init_pid, strerror(errno));
        goto err_close_images;
    }
    if ((rc = crs_criu_meta_write(images_fd, &meta)) != CRMPI_OK) {
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, rc,
                           "crs:criu: cannot write the affinity and fd record in %s: %s",
                           opts->images_dir, strerror(errno));
        goto err_free_meta;
    }
    snprintf(log_path, sizeof(log_path), "%s", opts->log_path ? opts->log_path : "");
    if (!opts->log_path) {
        snprintf(log_path, sizeof(log_path), "%s/dump.log", opts->images_dir);
    }
    if ((rc = crs_criu_opts_create(binary, images_fd, log_path, &work_fd, &copts)) != CRMPI_OK) {
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, rc,
                           "crs:criu: cannot prepare CRIU's options (log %s): %s", log_path,
                           strerror(errno));
        goto err_free_meta;
    }
    criu_local_set_pid(copts, opts->init_pid);
    criu_local_set_leave_running(copts, !opts->terminate);
    criu_local_set_notify_cb(copts, crs_criu_dump_notify);
    if (opts->track && (rc = crs_criu_incremental_setup(opts, copts, &result)) != CRMPI_OK)
        goto err_free_opts;
    for (int fd = 0; fd < CRMPI_CRS_NUM_FDS; fd++) {
        unsigned long inode;
        char external[64];
        /* The control socket's peer is the agent, outside the dumped tree (crs.h). */
        if (meta.have_fd[fd] && sscanf(meta.key[fd], "socket:[%lu]", &inode) == 1) {
            snprintf(external, sizeof(external), "unix[%lu]", inode);
            if (criu_local_add_external(copts, external) < 0) {
                rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_OUT_OF_RESOURCE,
                                   "crs:criu: out of memory building CRIU's options");
                goto err_free_opts;
            }
        }
    }

    /* Not with --term: CRIU ends the tasks itself at the end of that dump. */
    crs_criu_watch_t *watch = NULL;
    if (!opts->terminate)
        crs_criu_watch_start(opts->init_pid, &watch); /* without it: CRIU unwatched */
    crs_criu_dump_ctx_t dump_ctx = {.meta = &meta, .images_fd = images_fd, .rc = CRMPI_OK};
    crs_criu_dump_current = &dump_ctx;
    double start = crs_criu_now();
    int ret = criu_local_dump(copts);
    for (int attempt = 1;
         ret < 0 && attempt < CRS_CRIU_DUMP_TRIES && crs_criu_log_says_collision(log_path);
         attempt++) {
        crmpi_fw_verbose(&crmpi_crs_framework, 10,
                         "crs:criu: dump of init %d met another dump in its working directory "
                         "(proc.crtools); trying again",
                         (int)opts->init_pid);
        crs_criu_collision_pause(attempt);
        ret = criu_local_dump(copts);
    }
    result.dump_seconds = crs_criu_now() - start;
    crs_criu_dump_current = NULL;
    bool rank_died = crs_criu_watch_stop(watch);
    crs_criu_incremental_clean(images_fd);
    if (ret < 0 && rank_died) {
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_PEER_GONE,
                           "crs:criu: a process of the rank's namespace (init %d) ended during "
                           "its dump (CRIU log: %s)",
                           (int)opts->init_pid, log_path);
        goto err_free_opts;
    }
    if (ret < 0 && dump_ctx.rc != CRMPI_OK) {
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, dump_ctx.rc,
                           "%s; the dump of the rank's namespace (init %d) failed, the rank "
                           "keeps running",
                           dump_ctx.why, (int)opts->init_pid);
        goto err_free_opts;
    }
    if (ret < 0) {
        crs_criu_quote_errors(log_path, quoted, sizeof(quoted));
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERROR,
                           "crs:criu: dump of the rank's namespace (init %d) failed (%s): %s "
                           "(CRIU log: %s); the rank keeps running",
                           (int)opts->init_pid, crs_criu_strerror(ret), quoted, log_path);
        goto err_free_opts;
    }
    result.image_bytes = crs_criu_dir_bytes(images_fd);
    result.num_threads = (unsigned)meta.num_threads;
    crs_criu_read_stats(images_fd, &result);
    crmpi_fw_verbose(&crmpi_crs_framework, 10,
                     "crs:criu: placement of init %d recorded in %.6f s: %u threads, %zu NUMA "
                     "nodes, %zu memory areas",
                     (int)opts->init_pid, record_seconds, result.num_threads, meta.num_nodes,
                     meta.num_vmas);
    crmpi_fw_verbose(&crmpi_crs_framework, 10,
                     "crs:criu: dumped init %d into %s%s%s: %.3f s, %llu bytes, %u threads, "
                     "%llu pages written since the last dump",
                     (int)opts->init_pid, opts->images_dir, opts->terminate ? " (terminated)" : "",
                     opts->track && opts->parent_dir ? " (incremental)" : "", result.dump_seconds,
                     (unsigned long long)result.image_bytes, result.num_threads,
                     (unsigned long long)result.pages_dirty);
    criu_local_free_opts(copts);
    close(work_fd);
    crs_criu_meta_free(&meta);
    close(images_fd);
    *result_out = result;
    return CRMPI_OK;

err_free_opts:
    crs_criu_incremental_clean(images_fd);
    criu_local_free_opts(copts);
    close(work_fd);
err_free_meta:
    crs_criu_meta_free(&meta);
err_close_images:
    close(images_fd);
    return rc;
}

/*
 * The restore in progress. libcriu's notify callback takes no user argument, hence one
 * process-wide context (crs.h: calls are not concurrent).
 */
typedef struct crs_criu_restore_ctx {
    const crmpi_crs_restart_opts_t *opts; /* the caller's options */
    const crs_criu_meta_t *meta;          /* the record read from the images directory */
    const cpu_set_t *new_cpuset;          /* remap target, or NULL */
    int affinity;                         /* re-apply thread masks (crs_criu_affinity) */
    const crs_criu_numa_plan_t *plan;     /* move pages back through it, or NULL */
    const crs_criu_numa_plan_t *policies; /* give threads their policies through it, or NULL */
    int signo;                            /* the signal that makes a thread set its policy */
    char *thread_policies;                /* those threads, for the rank (mempolicy.h) */
    uint64_t pages_moved;                 /* pages moved back to their node */
    pid_t init_pid;                       /* the restored init, from CRIU's notifications */
    int rc;                               /* first failure at pre-resume */
} crs_criu_restore_ctx_t;

static crs_criu_restore_ctx_t *crs_criu_restore_current;

static int crs_criu_notify(char *action, criu_notify_arg_t na)
{
    crs_criu_restore_ctx_t *ctx = crs_criu_restore_current;
    if (!ctx) {
        return 0;
    }
    /* CRIU sends the root task's pid with these two (cr-service.c), not with pre-resume. */
    if (strcmp(action, "setup-namespaces") == 0 || strcmp(action, "post-restore") == 0) {
        ctx->init_pid = (pid_t)criu_notify_pid(na);
        return 0;
    }
    if (strcmp(action, "pre-resume") != 0) {
        return 0;
    }
    if (ctx->init_pid <= 0) {
        ctx->rc = CRMPI_ERR_PROTO;
        crmpi_log_error("crs:criu: CRIU reached pre-resume without naming the restored init");
        return 0;
    }
    ctx->rc = ctx->affinity ? crs_criu_affinity_apply(ctx->meta, ctx->init_pid, ctx->new_cpuset)
                            : CRMPI_OK;
    if (ctx->rc == CRMPI_OK && ctx->plan) {
        uint64_t moved = 0, refused = 0;
        double start = crs_criu_now();
        /* A failure leaves the pages where the restorer put them: slower, still right. */
        if (crs_criu_numa_pages_restore(ctx->meta, ctx->plan, ctx->init_pid, &moved, &refused) ==
            CRMPI_OK) {
            ctx->pages_moved = moved;
            crmpi_fw_verbose(&crmpi_crs_framework, 10,
                             "crs:criu: pages of init %d placed in %.6f s: %llu moved back to "
                             "their node, %llu the kernel kept where they were",
                             (int)ctx->init_pid, crs_criu_now() - start, (unsigned long long)moved,
                             (unsigned long long)refused);
        }
    }
    /* Threads start with the restorer's policy; those that had another get theirs from the
     * rank, the only one that can set it. A failure leaves them with the restorer's. */
    if (ctx->rc == CRMPI_OK && ctx->policies &&
        crs_criu_numa_thread_policies(ctx->meta, ctx->policies, ctx->init_pid, ctx->signo,
                                      &ctx->thread_policies) != CRMPI_OK)
        crmpi_log_warn("crs:criu: cannot list the restored threads' memory policies: they keep "
                       "the restorer's");
    if (ctx->rc == CRMPI_OK && ctx->opts->pre_resume) {
        ctx->rc = ctx->opts->pre_resume(ctx->init_pid, ctx->opts->pre_resume_arg);
    }
    /* Always 0: CRIU only logs a refused pre-resume and resumes the tasks anyway, while
     * libcriu stops reading CRIU's messages and waits for a criu that never exits.
     * crs_criu_restart kills the restored tree afterwards when ctx->rc says so. */
    return 0;
}

/*
 * Every recorded descriptor needs its new one: an unmatched control socket could not be
 * restored, and a pipe CRIU recreated would connect the rank to nobody. The caller's
 * descriptors stay the caller's: CRIU gets duplicates (dups_out, -1 where none recorded).
 */
static int crs_criu_restart_dup_fds(const crmpi_crs_restart_opts_t *opts,
                                    const crs_criu_meta_t *meta, int *dups_out)
{
    for (int fd = 0; fd < CRMPI_CRS_NUM_FDS; fd++) {
        if (!meta->have_fd[fd])
            continue;
        for (size_t i = 0; i < opts->num_inherit; i++) {
            if (opts->inherit[i].rank_fd == fd) {
                dups_out[fd] = fcntl(opts->inherit[i].fd, F_DUPFD, 10);
                break;
            }
        }
        if (dups_out[fd] < 0)
            return crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_BAD_PARAM,
                                 "crs:criu: restart: no usable new descriptor for the rank's fd "
                                 "%d (%s)",
                                 fd, meta->key[fd]);
    }
    return CRMPI_OK;
}

/* Move CRIU's log at `log_path` to `keep_as` (NULL: leave it), making its directory, and
 * update `log_path` (room: `len`) when it moved. */
static void crs_criu_keep_log(char *log_path, const char *keep_as, size_t len)
{
    char dir[4096];

    if (!keep_as || strlen(keep_as) >= len)
        return;
    snprintf(dir, sizeof(dir), "%s", keep_as);
    if ((mkdir(dirname(dir), 0700) == 0 || errno == EEXIST) && rename(log_path, keep_as) == 0)
        snprintf(log_path, len, "%s", keep_as);
}

/* A boolean parameter of this component; an unregistered one (unit tests) is on. */
static int crs_criu_param_on(const char *name)
{
    bool on = true;
    crmpi_param_get_bool(name, &on);
    return on;
}

/* Entries of a mempolicy.h text (areas, or threads after their '/'). */
static size_t crs_criu_policy_count(const char *text)
{
    const char *p = text ? strchr(text, '/') : NULL;
    size_t count = 0;

    p = p ? p + 1 : text;
    if (!p || !*p)
        return 0;
    for (count = 1; *p; p++)
        count += *p == ',';
    return count;
}

/* One line of what the restart did with the rank's placement (crs_criu_placement_report,
 * which ompi-restart --info sets). */
static void crs_criu_placement_report(const crs_criu_restore_ctx_t *ctx, const char *areas,
                                      const char *hugepages)
{
    char old_cpus[CRS_CRIU_CPULIST_MAX], new_cpus[CRS_CRIU_CPULIST_MAX], nodes[512] = "";
    bool report = false;
    size_t used = 0;

    crmpi_param_get_bool("crs_criu_placement_report", &report);
    if (!report)
        return;
    crs_criu_cpulist_format(&ctx->meta->cpuset, old_cpus, sizeof(old_cpus));
    if (ctx->new_cpuset)
        crs_criu_cpulist_format(ctx->new_cpuset, new_cpus, sizeof(new_cpus));
    else
        snprintf(new_cpus, sizeof(new_cpus), "%s", old_cpus);
    const crs_criu_numa_plan_t *plan = ctx->plan ? ctx->plan : ctx->policies;
    for (size_t i = 0; plan && i < ctx->meta->num_nodes && used < sizeof(nodes) - 32; i++) {
        int from = ctx->meta->nodes[i].os_index;
        used += (size_t)snprintf(nodes + used, sizeof(nodes) - used, "%s%d->%d", i ? "," : "", from,
                                 plan->to_os[from]);
    }
    crmpi_log_info("crs:criu: placement: CPUs %s at the checkpoint -> %s here (thread masks %s); "
                   "NUMA nodes (OS) %s; %llu pages moved back; %zu areas and %zu threads given "
                   "their memory policy; %zu ranges made huge pages again",
                   old_cpus, new_cpus, ctx->affinity ? "restored" : "not restored",
                   plan ? nodes : "not placed (not recorded, or switched off)",
                   (unsigned long long)ctx->pages_moved, crs_criu_policy_count(areas),
                   crs_criu_policy_count(ctx->thread_policies), crs_criu_policy_count(hugepages));
}

/* The restart message's entries for the rank, "NAME=text" (mempolicy.h), from the texts of
 * its areas' policies, its threads' and its huge-page ranges (each NULL when there are
 * none), which it frees: a NULL-terminated array (malloc'ed, as its strings), or NULL
 * when there is nothing to send or no memory (the rank then keeps what CRIU gave it). */
static char **crs_criu_rank_entries(char *texts[3])
{
    static const char *const names[3] = {CRMPI_MEMPOLICY_ENV, CRMPI_TASKPOLICY_ENV,
                                         CRMPI_HUGEPAGES_ENV};
    char **entries = calloc(4, sizeof(*entries));
    size_t num = 0;

    for (int i = 0; i < 3; i++) {
        if (texts[i] && entries && asprintf(&entries[num], "%s=%s", names[i], texts[i]) >= 0)
            num++;
        free(texts[i]);
    }
    if (entries && num == 0) {
        free(entries);
        entries = NULL;
    }
    return entries;
}

/* The memory placement plan of a restart (crs_criu_numa.c), when the record has one and
 * either part of the placement is on. @return 1 (plan_out set) or 0. */
static int crs_criu_restart_plan(const crs_criu_meta_t *meta, const cpu_set_t *new_cpuset,
                                 crs_criu_numa_plan_t *plan_out)
{
    cpu_set_t binding;

    if (meta->num_nodes == 0 ||
        (!crs_criu_param_on("crs_criu_numa_pages") && !crs_criu_param_on("crs_criu_numa_policy")))
        return 0;
    /* Without a new cpuset the restored rank runs on the caller's CPUs (its binding). */
    if (new_cpuset)
        binding = *new_cpuset;
    else if (sched_getaffinity(0, sizeof(binding), &binding) < 0)
        return 0;
    if (crs_criu_numa_plan(meta, &binding, plan_out) != CRMPI_OK) {
        crmpi_log_warn("crs:criu: the restored rank's memory stays where CRIU puts it (no "
                       "topology to map its NUMA nodes onto)");
        return 0;
    }
    return 1;
}

/* The calling thread's memory policy, saved while the restorer runs under another one. */
typedef struct crs_criu_policy {
    int mode;            /* MPOL_*, with its MPOL_F_ flags */
    unsigned long nodes; /* its nodes (the first CRS_CRIU_NUMA_MAX_NODES) */
} crs_criu_policy_t;

/*
 * CRIU's restorer, forked by libcriu from this thread, writes the restored pages first and
 * so places them under this thread's policy: prefer `home` (the node that held most of the
 * rank's pages) for that time. A caller bound to nodes (--membind) keeps its binding.
 * @return 1 (saved_out holds the policy to put back) or 0 (nothing changed)
 */
static int crs_criu_restorer_prefer(int home, crs_criu_policy_t *saved_out)
{
    crs_criu_policy_t saved = {0};
    unsigned long mask = 1UL << home;

    if (home < 0 || home >= CRS_CRIU_NUMA_MAX_NODES ||
        syscall(SYS_get_mempolicy, &saved.mode, &saved.nodes,
                (unsigned long)CRS_CRIU_NUMA_MAX_NODES + 1, NULL, 0UL) < 0 ||
        (saved.mode & ~MPOL_MODE_FLAGS) == MPOL_BIND)
        return 0;
    if (syscall(SYS_set_mempolicy, MPOL_PREFERRED, &mask,
                (unsigned long)CRS_CRIU_NUMA_MAX_NODES + 1) < 0) {
        crmpi_fw_verbose(&crmpi_crs_framework, 10,
                         "crs:criu: cannot make the restorer prefer node %d: %s", home,
                         strerror(errno));
        return 0;
    }
    *saved_out = saved;
    return 1;
}

static void crs_criu_restorer_unprefer(const crs_criu_policy_t *saved)
{
    int mode = saved->mode & ~MPOL_MODE_FLAGS; /* get_mempolicy reports the flags too */
    int none = mode == MPOL_DEFAULT || mode == MPOL_LOCAL;
    syscall(SYS_set_mempolicy, saved->mode, none ? NULL : &saved->nodes,
            none ? 0UL : (unsigned long)CRS_CRIU_NUMA_MAX_NODES + 1);
}

/* Run CRIU's restore with the pre-resume context; @return the restored init's pid, or
 * libcriu's negative error. */
static int crs_criu_restore_run(criu_opts *copts, crs_criu_restore_ctx_t *ctx)
{
    sigset_t chld, saved;
    int pid;

    criu_local_set_notify_cb(copts, crs_criu_notify);
    /* libcriu wants SIGCHLD blocked while it forks criu and the tree comes back. */
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &saved);
    crs_criu_restore_current = ctx;
    pid = criu_local_restore_child(copts);
    crs_criu_restore_current = NULL;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return pid;
}

int crs_criu_restart(const crmpi_crs_restart_opts_t *opts, pid_t *init_pid_out)
{
    crs_criu_meta_t meta;
    crs_criu_restore_ctx_t ctx;
    criu_opts *copts;
    cpu_set_t new_cpuset;
    char log_path[4096], quoted[CRS_CRIU_MESSAGE_MAX];
    int dups[CRMPI_CRS_NUM_FDS];
    const char *binary;
    int images_fd, work_fd, pid, rc;

    for (int i = 0; i < CRMPI_CRS_NUM_FDS; i++)
        dups[i] = -1;
    if (!opts->images_dir)
        return crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_BAD_PARAM,
                             "crs:criu: restart needs an images directory");
    if (opts->cpuset && crs_criu_cpulist_parse(opts->cpuset, &new_cpuset) != CRMPI_OK)
        return crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_BAD_PARAM,
                             "crs:criu: restart: '%s' is not a CPU list", opts->cpuset);
    if ((rc = crs_criu_binary(&binary, opts->errbuf, opts->errbuf_len)) != CRMPI_OK)
        return rc;
    images_fd = open(opts->images_dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    if (images_fd < 0)
        return crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_IO,
                             "crs:criu: cannot open the images directory %s: %s", opts->images_dir,
                             strerror(errno));
    if ((rc = crs_criu_meta_read(images_fd, &meta)) != CRMPI_OK) {
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, rc,
                           "crs:criu: %s has no usable %s (%s); was it written by a checkpoint?",
                           opts->images_dir, CRS_CRIU_META_FILE, crmpi_strerror(rc));
        goto out_close_images;
    }
    if ((rc = crs_criu_restart_dup_fds(opts, &meta, dups)) != CRMPI_OK)
        goto out_close_dups;
    if (crs_criu_chain_link(opts->images_dir, opts->parents) != CRMPI_OK) {
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_IO,
                           "crs:criu: cannot link %s to its parent images: %s", opts->images_dir,
                           strerror(errno));
        goto out_close_dups;
    }
    if ((rc = crs_criu_mapped_restore(&meta, images_fd, quoted, sizeof(quoted))) != CRMPI_OK ||
        (rc = crs_criu_files_restore(&meta, quoted, sizeof(quoted))) != CRMPI_OK) {
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, rc, "%s", quoted);
        goto out_close_dups;
    }
    if (opts->log_path)
        snprintf(log_path, sizeof(log_path), "%s", opts->log_path);
    else
        snprintf(log_path, sizeof(log_path), "%s/restore.log", opts->images_dir);
    if ((rc = crs_criu_opts_create(binary, images_fd, log_path, &work_fd, &copts)) != CRMPI_OK) {
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, rc,
                           "crs:criu: cannot prepare CRIU's options (log %s): %s", log_path,
                           strerror(errno));
        goto out_close_dups;
    }
    for (int fd = 0; fd < CRMPI_CRS_NUM_FDS; fd++) {
        if (dups[fd] >= 0 && criu_local_add_inherit_fd(copts, dups[fd], meta.key[fd]) < 0) {
            rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_OUT_OF_RESOURCE,
                               "crs:criu: out of memory building CRIU's options");
            goto out_free_opts;
        }
    }
    memset(&ctx, 0, sizeof(ctx));
    ctx.opts = opts;
    ctx.meta = &meta;
    ctx.new_cpuset = opts->cpuset ? &new_cpuset : NULL;
    ctx.affinity = crs_criu_param_on("crs_criu_affinity");
    crs_criu_numa_plan_t plan;
    char *policies = NULL;
    int have_plan = crs_criu_restart_plan(&meta, ctx.new_cpuset, &plan);
    if (have_plan && crs_criu_param_on("crs_criu_numa_pages"))
        ctx.plan = &plan;
    if (have_plan && crs_criu_param_on("crs_criu_numa_policy")) {
        if (crs_criu_numa_policies(&meta, &plan, &policies) != CRMPI_OK) {
            rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_OUT_OF_RESOURCE,
                               "crs:criu: out of memory listing the rank's memory policies");
            goto out_free_opts;
        }
        int64_t signo = 0;
        crmpi_param_get_int("crs_criu_numa_signal", &signo);
        ctx.signo = signo >= SIGRTMIN && signo <= SIGRTMAX ? (int)signo : SIGRTMAX - 1;
        if (signo != 0 && ctx.signo != signo)
            crmpi_log_warn("crs:criu: crs_criu_numa_signal %lld is not a real-time signal "
                           "(%d-%d): using %d",
                           (long long)signo, SIGRTMIN, SIGRTMAX, ctx.signo);
        ctx.policies = &plan;
    }
    char *hugepages = NULL;
    if (crs_criu_param_on("crs_criu_numa_hugepages") &&
        crs_criu_numa_hugepages(&meta, &hugepages) != CRMPI_OK) {
        free(policies);
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERR_OUT_OF_RESOURCE,
                           "crs:criu: out of memory listing the rank's huge-page ranges");
        goto out_free_opts;
    }
    /* The restored threads inherit the preference, so it is given only when the rank can
     * take it back (policies on), and only when first touch would not land there anyway. */
    crs_criu_policy_t saved_policy;
    int placed = ctx.plan && ctx.policies && !plan.home_only &&
                 crs_criu_restorer_prefer(ctx.plan->home, &saved_policy);
    pid = crs_criu_restore_run(copts, &ctx);
    if (placed)
        crs_criu_restorer_unprefer(&saved_policy);
    if (pid < 0) {
        free(ctx.thread_policies);
        free(policies);
        free(hugepages);
        crs_criu_quote_errors(log_path, quoted, sizeof(quoted));
        crs_criu_keep_log(log_path, opts->keep_log_as, sizeof(log_path));
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, CRMPI_ERROR,
                           "crs:criu: restore from %s failed (%s): %s (CRIU log: %s)",
                           opts->images_dir, crs_criu_strerror(pid), quoted, log_path);
        goto out_free_opts;
    }
    if (ctx.rc != CRMPI_OK) {
        free(ctx.thread_policies);
        free(policies);
        free(hugepages);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        rc = crs_criu_fail(opts->errbuf, opts->errbuf_len, ctx.rc,
                           "crs:criu: restore from %s stopped at pre-resume (%s); the restored "
                           "rank was killed",
                           opts->images_dir, crmpi_strerror(ctx.rc));
        goto out_free_opts;
    }
    crs_criu_placement_report(&ctx, policies, hugepages);
    crmpi_fw_verbose(&crmpi_crs_framework, 10, "crs:criu: restored %s as init %d%s%s",
                     opts->images_dir, pid, opts->cpuset ? ", remapped onto CPUs " : "",
                     opts->cpuset ? opts->cpuset : "");
    char *texts[3] = {policies, ctx.thread_policies, hugepages};
    char **entries = crs_criu_rank_entries(texts);
    if (opts->rank_entries_out) {
        *opts->rank_entries_out = entries;
    } else {
        for (char **e = entries; e && *e; e++)
            free(*e);
        free(entries);
    }
    *init_pid_out = (pid_t)pid;
    rc = CRMPI_OK;

    /* The same cleanup on success and failure: CRIU's options, the duplicates (the
     * restored tree has its own copies), the record, the images directory. */
out_free_opts:
    criu_local_free_opts(copts);
    close(work_fd);
out_close_dups:
    for (int fd = 0; fd < CRMPI_CRS_NUM_FDS; fd++)
        if (dups[fd] >= 0)
            close(dups[fd]);
    crs_criu_meta_free(&meta);
out_close_images:
    close(images_fd);
    return rc;
}

static int crs_criu_query(const crmpi_component_t *component, int *priority_out,
                          const char **reason_out)
{
    static char reason[512];
    const char *path = NULL;
    (void)component;
    if (crmpi_param_get_string("crs_criu_binary", &path) != CRMPI_OK || !path || !*path) {
        *reason_out = "no criu program (configure found none; set crs_criu_binary)";
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    if (access(path, X_OK) < 0) {
        snprintf(reason, sizeof(reason), "cannot run %s (crs_criu_binary): %s", path,
                 strerror(errno));
        *reason_out = reason;
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    *priority_out = 10;
    return CRMPI_OK;
}

static const crmpi_crs_ops_t crs_criu_ops = {
    .checkpoint = crs_criu_checkpoint,
    .restart = crs_criu_restart,
    .recorded_key = crs_criu_recorded_key,
    .track_open = crs_criu_track_open,
    .track_close = crs_criu_track_close,
    .flatten = crs_criu_flatten,
};

static const crmpi_component_t crs_criu_component = {
    .info = &crmpi_crs_criu_info,
    .query = crs_criu_query,
    .ops = &crs_criu_ops,
};

static const crmpi_component_t *const crs_criu_components[] = {&crs_criu_component,
                                                               &crmpi_crs_pheap_component, NULL};

crmpi_framework_t crmpi_crs_framework = {
    .info = &crmpi_crs_framework_info,
    .components = crs_criu_components,
};

int crs_criu_recorded_key(const char *images_dir, int rank_fd, char *key_out, size_t key_len)
{
    crs_criu_meta_t meta;
    int images_fd = open(images_dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    if (images_fd < 0) {
        crmpi_log_error("crs:criu: cannot open the images directory %s: %s", images_dir,
                        strerror(errno));
        return CRMPI_ERR_IO;
    }
    int rc = crs_criu_meta_read(images_fd, &meta);
    close(images_fd);
    if (rc != CRMPI_OK) {
        crmpi_log_error("crs:criu: %s has no usable %s (%s)", images_dir, CRS_CRIU_META_FILE,
                        crmpi_strerror(rc));
        return rc;
    }
    if (rank_fd < 0 || rank_fd >= CRMPI_CRS_NUM_FDS || !meta.have_fd[rank_fd]) {
        crs_criu_meta_free(&meta);
        return CRMPI_ERR_NOT_FOUND;
    }
    snprintf(key_out, key_len, "%s", meta.key[rank_fd]);
    crs_criu_meta_free(&meta);
    return CRMPI_OK;
}
