/*
 * test_crs_criu.c: the criu CRS end to end (crs.h), with the test in the agent's place.
 *
 * crs_target runs as a rank started by crmpi_agent_ns_start() (its own pid namespace under an
 * init), keeps a counter, 1 MiB of heap, an open file and a worker thread, and answers on
 * its control socket. The steps run in order and share one rank:
 *   leave-running checkpoint, the rank goes on; affinity set on the worker thread;
 *   second checkpoint, rank killed, restored with new pipes and a new socketpair: its
 *   state continues exactly from the image, it talks over the new socket and pipe, and the
 *   worker has its recorded CPUs again; the same images restored a second time, remapped
 *   onto another cpuset; a --term checkpoint and its restore; CRIU failures quoted, rank
 *   still running.
 * Needs root and a working CRIU; otherwise the whole test is skipped (exit 77) and says why.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <criu.h>

#include "agent_ns.h"
#include "component.h"
#include "crmpi_status.h"
#include "crs.h"
#include "crs_criu_int.h"
#include "fault.h"
#include "param.h"

#define TST_RANK_PID      4242
#define TST_TIMEOUT_MS    20000
#define TST_ALARM_SECONDS 300

/* The rank under test, as an agent would hold it. */
typedef struct tst_rank {
    pid_t init_pid; /* its namespace's init, our child */
    int ctl_fd;     /* our end of its control socket */
    int out_fd;     /* read end of its stdout */
    int err_fd;     /* read end of its stderr */
} tst_rank_t;

static tst_rank_t tst_rank;
static char tst_base[256];   /* scratch directory of this run */
static char tst_target[512]; /* the crs_target program */
static char tst_file[300];   /* the file the rank keeps open */
static char tst_skip_reason[256];
static const crmpi_crs_ops_t *tst_ops; /* the selected crs component's operations */

/* Read one line from fd within the timeout; returns its length or -1. */
static int tst_read_line(int fd, char *line, size_t len)
{
    size_t used = 0;
    while (used + 1 < len) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, TST_TIMEOUT_MS) != 1) {
            return -1;
        }
        char byte;
        if (read(fd, &byte, 1) != 1) {
            return -1;
        }
        if (byte == '\n') {
            break;
        }
        line[used++] = byte;
    }
    line[used] = '\0';
    return (int)used;
}

/* Send a command (with a descriptor when pass_fd >= 0) and read the reply line. */
static int tst_command(const char *cmd, int pass_fd, char *reply, size_t len)
{
    char text[64];
    snprintf(text, sizeof(text), "%s\n", cmd);
    struct iovec iov = {.iov_base = text, .iov_len = strlen(text)};
    char control[CMSG_SPACE(sizeof(int))];
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (pass_fd >= 0) {
        memset(control, 0, sizeof(control));
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cmsg), &pass_fd, sizeof(int));
    }
    if (sendmsg(tst_rank.ctl_fd, &msg, MSG_NOSIGNAL) != (ssize_t)strlen(text)) {
        return -1;
    }
    return tst_read_line(tst_rank.ctl_fd, reply, len);
}

/* The state the rank reports after a tick. */
typedef struct tst_state {
    unsigned n, file;
    unsigned sum;
    long fpos;
    int pid;
    char aff[64];
} tst_state_t;

static uint32_t tst_expected_sum(unsigned counter)
{
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < (1u << 20); i++) {
        hash = (hash ^ (uint8_t)(counter * 7u + i)) * 16777619u;
    }
    return hash;
}

/* Tick the rank, check its state is self-consistent and return it; also check that its
 * stdout line arrived on the pipe we hold. */
static tst_state_t tst_tick(void)
{
    char reply[256], out[64], want_out[64];
    tst_state_t st;
    memset(&st, 0, sizeof(st));
    assert_true(tst_command("tick", -1, reply, sizeof(reply)) > 0);
    assert_int_equal(sscanf(reply, "n=%u sum=%x fpos=%ld file=%u pid=%d aff=%63s", &st.n, &st.sum,
                            &st.fpos, &st.file, &st.pid, st.aff),
                     6);
    assert_int_equal(st.sum, tst_expected_sum(st.n));
    assert_int_equal(st.fpos, (long)st.n);
    assert_int_equal(st.file, st.n);
    assert_int_equal(st.pid, TST_RANK_PID);
    assert_true(tst_read_line(tst_rank.out_fd, out, sizeof(out)) > 0);
    snprintf(want_out, sizeof(want_out), "tick %u", st.n);
    assert_string_equal(out, want_out);
    return st;
}

static void tst_dir(const char *name, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", tst_base, name);
    mkdir(path, 0700);
}

static int tst_checkpoint(const char *name, int terminate, crmpi_crs_ckpt_result_t *result,
                          char *errbuf, size_t errlen)
{
    char dir[300];
    tst_dir(name, dir, sizeof(dir));
    crmpi_crs_ckpt_opts_t opts = {.init_pid = tst_rank.init_pid,
                                  .images_dir = dir,
                                  .terminate = terminate,
                                  .errbuf = errbuf,
                                  .errbuf_len = errlen};
    return tst_ops->checkpoint(&opts, result);
}

static void tst_rank_kill(void)
{
    int status;
    kill(tst_rank.init_pid, SIGKILL);
    assert_int_equal(waitpid(tst_rank.init_pid, &status, 0), tst_rank.init_pid);
    close(tst_rank.ctl_fd);
    close(tst_rank.out_fd);
    close(tst_rank.err_fd);
}

/* What the pre-resume hook saw. */
static pid_t tst_hook_pid;

static int tst_pre_resume(pid_t init_pid, void *arg)
{
    (void)arg;
    tst_hook_pid = init_pid;
    return CRMPI_OK;
}

/* Restore `name` (an incremental dump: through `parents`, else NULL) with fresh pipes and
 * a fresh socketpair, as a new agent would; the descriptor `omit_fd` of the rank is not
 * given (-1: all are). On success the restored rank becomes tst_rank. */
static int tst_restore_with(const char *name, const char *const *parents, const char *cpuset,
                            crmpi_crs_pre_resume_fn_t hook, int omit_fd, char *errbuf,
                            size_t errlen)
{
    int in_pipe[2], out_pipe[2], err_pipe[2], ctl[2];
    char dir[300];
    pid_t init_pid = -1;

    snprintf(dir, sizeof(dir), "%s/%s", tst_base, name);
    assert_int_equal(pipe2(in_pipe, O_CLOEXEC), 0);
    assert_int_equal(pipe2(out_pipe, O_CLOEXEC), 0);
    assert_int_equal(pipe2(err_pipe, O_CLOEXEC), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl), 0);
    crmpi_crs_inherit_t inherit[4], all[] = {
                                        {.rank_fd = 0, .fd = in_pipe[0]},
                                        {.rank_fd = 1, .fd = out_pipe[1]},
                                        {.rank_fd = 2, .fd = err_pipe[1]},
                                        {.rank_fd = 3, .fd = ctl[1]},
                                    };
    size_t num = 0;
    for (size_t i = 0; i < 4; i++) {
        if (all[i].rank_fd != omit_fd) {
            inherit[num++] = all[i];
        }
    }
    crmpi_crs_restart_opts_t opts = {.images_dir = dir,
                                     .inherit = inherit,
                                     .num_inherit = num,
                                     .cpuset = cpuset,
                                     .parents = parents,
                                     .pre_resume = hook,
                                     .errbuf = errbuf,
                                     .errbuf_len = errlen};
    tst_hook_pid = -1;
    int rc = tst_ops->restart(&opts, &init_pid);
    close(in_pipe[0]);
    close(in_pipe[1]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    close(ctl[1]);
    if (rc != CRMPI_OK) {
        close(out_pipe[0]);
        close(err_pipe[0]);
        close(ctl[0]);
        return rc;
    }
    assert_true(init_pid > 0);
    assert_int_equal(tst_hook_pid, init_pid);
    tst_rank.init_pid = init_pid;
    tst_rank.ctl_fd = ctl[0];
    tst_rank.out_fd = out_pipe[0];
    tst_rank.err_fd = err_pipe[0];
    return CRMPI_OK;
}

static void tst_restore(const char *name, const char *cpuset)
{
    char errbuf[1024];
    if (tst_restore_with(name, NULL, cpuset, tst_pre_resume, -1, errbuf, sizeof(errbuf)) !=
        CRMPI_OK) {
        fail_msg("restore of %s failed: %s", name, errbuf);
    }
}

/* The rank's host pid: its init's one child. */
static pid_t tst_rank_pid(void)
{
    char path[96];
    int rank = -1;
    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", tst_rank.init_pid, tst_rank.init_pid);
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &rank), 1);
    fclose(f);
    return rank;
}

/* Host tid of the rank's worker thread: the rank's other thread. */
static pid_t tst_worker_tid(void)
{
    char path[96];
    int rank = tst_rank_pid();
    for (int tid = rank + 1; tid < rank + 64; tid++) {
        snprintf(path, sizeof(path), "/proc/%d/task/%d", rank, tid);
        if (access(path, F_OK) == 0) {
            return tid;
        }
    }
    fail_msg("no worker thread under rank %d", rank);
    return -1;
}

static void test_start(void **state)
{
    (void)state;
    char *argv[] = {tst_target, tst_file, NULL};
    char *envp[] = {NULL};
    crmpi_agent_ns_child_t child;
    assert_int_equal(crmpi_agent_ns_start(tst_target, argv, envp, TST_RANK_PID, &child), CRMPI_OK);
    tst_rank.init_pid = child.init_pid;
    tst_rank.ctl_fd = child.ctl_fd;
    tst_rank.out_fd = child.out_fd;
    tst_rank.err_fd = child.err_fd;
    for (unsigned i = 1; i <= 3; i++) {
        assert_int_equal(tst_tick().n, i);
    }
}

/* Leave-running checkpoint: the rank goes on from where it was. */
static void test_checkpoint_leave_running(void **state)
{
    (void)state;
    crmpi_crs_ckpt_result_t result;
    char errbuf[1024];
    if (tst_checkpoint("first", 0, &result, errbuf, sizeof(errbuf)) != CRMPI_OK) {
        fail_msg("checkpoint failed: %s", errbuf);
    }
    assert_true(result.image_bytes > (1u << 20)); /* the heap at least */
    assert_true(result.num_threads >= 3);         /* init, rank, worker */
    assert_true(result.have_stats);
    assert_true(result.pages_written >= 256);
    printf("# dump %.3f s, %llu bytes, %u threads, frozen %llu us, %llu pages\n",
           result.dump_seconds, (unsigned long long)result.image_bytes, result.num_threads,
           (unsigned long long)result.frozen_us, (unsigned long long)result.pages_written);
    assert_int_equal(tst_tick().n, 4);
}

/* Pin the worker to CPU 1, checkpoint (n=4 in the image), tick to 5, kill, restore with new
 * pipes and socket: n continues at 5 from the image, and the worker is on CPU 1 again. */
static void test_restore_new_fds(void **state)
{
    (void)state;
    crmpi_crs_ckpt_result_t result;
    char errbuf[1024], key[CRMPI_CRS_KEY_MAX], dir[300];
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(1, &one);
    assert_int_equal(sched_setaffinity(tst_worker_tid(), sizeof(one), &one), 0);
    assert_string_equal(tst_tick().aff, "1"); /* n = 5 */
    if (tst_checkpoint("second", 0, &result, errbuf, sizeof(errbuf)) != CRMPI_OK) {
        fail_msg("checkpoint failed: %s", errbuf);
    }
    snprintf(dir, sizeof(dir), "%s/second", tst_base);
    assert_int_equal(tst_ops->recorded_key(dir, 3, key, sizeof(key)), CRMPI_OK);
    assert_memory_equal(key, "socket:[", 8);
    assert_int_equal(tst_ops->recorded_key(dir, 1, key, sizeof(key)), CRMPI_OK);
    assert_memory_equal(key, "pipe:[", 6);
    assert_int_equal(tst_tick().n, 6);
    tst_rank_kill();

    /* The restorer runs with our affinity: make it all CPUs, so only the re-application
     * can give the worker CPU 1 alone. */
    cpu_set_t all;
    CPU_ZERO(&all);
    CPU_SET(0, &all);
    CPU_SET(1, &all);
    assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
    tst_restore("second", NULL);
    tst_state_t st = tst_tick();
    assert_int_equal(st.n, 6);
    assert_string_equal(st.aff, "1");
    assert_int_equal(tst_tick().n, 7);
}

/* The same images restored again, remapped onto CPU 0 only: the worker follows. */
static void test_restore_twice_remapped(void **state)
{
    (void)state;
    tst_rank_kill();
    tst_restore("second", "0");
    tst_state_t st = tst_tick();
    assert_int_equal(st.n, 6);
    assert_string_equal(st.aff, "0");
}

/* --term: the rank is gone after the dump, and comes back from that image. */
static void test_checkpoint_term(void **state)
{
    (void)state;
    crmpi_crs_ckpt_result_t result;
    char errbuf[1024];
    int status;
    assert_int_equal(tst_tick().n, 7);
    if (tst_checkpoint("term", 1, &result, errbuf, sizeof(errbuf)) != CRMPI_OK) {
        fail_msg("checkpoint --term failed: %s", errbuf);
    }
    assert_int_equal(waitpid(tst_rank.init_pid, &status, 0), tst_rank.init_pid);
    assert_true(WIFSIGNALED(status));
    close(tst_rank.ctl_fd);
    close(tst_rank.out_fd);
    close(tst_rank.err_fd);
    tst_restore("term", NULL);
    assert_int_equal(tst_tick().n, 8);
}

/* The rank's userfaultfd, received with its reply to "track"; -1 when it has none. */
static int tst_track_fd(void)
{
    char text[16] = "", control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = text, .iov_len = sizeof(text) - 1};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control,
                         .msg_controllen = sizeof(control)};
    int fd = -1;

    assert_int_equal(write(tst_rank.ctl_fd, "track\n", 6), 6);
    assert_true(recvmsg(tst_rank.ctl_fd, &msg, 0) > 0);
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    if (cmsg && cmsg->cmsg_type == SCM_RIGHTS)
        memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
    return fd;
}

static unsigned tst_poke(unsigned pages)
{
    char cmd[32], reply[64];
    unsigned hash = 0;
    snprintf(cmd, sizeof(cmd), "poke %u", pages);
    assert_true(tst_command(cmd, -1, reply, sizeof(reply)) > 0);
    assert_int_equal(sscanf(reply, "big=%x", &hash), 1);
    return hash;
}

/* One dump of the tracked rank into `name`, against the images `parent` (NULL: full). */
static void tst_checkpoint_tracked(crmpi_crs_track_t *track, const char *name, const char *parent,
                                   crmpi_crs_ckpt_result_t *result)
{
    char dir[300], parent_dir[300], errbuf[1024];
    tst_dir(name, dir, sizeof(dir));
    snprintf(parent_dir, sizeof(parent_dir), "%s/%s", tst_base, parent ? parent : "");
    crmpi_crs_ckpt_opts_t opts = {.init_pid = tst_rank.init_pid,
                                  .images_dir = dir,
                                  .track = track,
                                  .parent_dir = parent ? parent_dir : NULL,
                                  .errbuf = errbuf,
                                  .errbuf_len = sizeof(errbuf)};
    if (tst_ops->checkpoint(&opts, result) != CRMPI_OK)
        fail_msg("checkpoint %s failed: %s", name, errbuf);
    printf("# %s: %llu pages written to the image, %llu found written since the last dump\n", name,
           (unsigned long long)result->pages_written, (unsigned long long)result->pages_dirty);
}

/* Incremental dumps: a full one, then two that hold little more than the pages the rank
 * wrote; the rank restored from the chain has every page as it was at the last one. */
static void test_incremental(void **state)
{
    (void)state;
    crmpi_crs_ckpt_result_t full, inc1, inc2;
    crmpi_crs_track_t *track = NULL;
    int uffd = tst_track_fd();

    if (uffd < 0)
        skip(); /* the kernel has no asynchronous write-protect */
    assert_int_equal(tst_ops->track_open(tst_rank_pid(), uffd, &track), CRMPI_OK);
    tst_checkpoint_tracked(track, "inc0", NULL, &full);
    assert_true(full.pages_written >= 4096); /* the 16 MiB area, at least */
    tst_poke(3);
    tst_checkpoint_tracked(track, "inc1", "inc0", &inc1);
    assert_true(inc1.pages_dirty >= 3);
    assert_true(inc1.pages_written >= 3);
    assert_true(inc1.pages_written < full.pages_written / 8);
    /* New, moved and dropped mappings between two dumps (crs_target.c, "churn"). */
    char reply[64];
    assert_true(tst_command("churn", -1, reply, sizeof(reply)) > 0);
    assert_memory_equal(reply, "big=", 4);
    tst_poke(40);
    tst_checkpoint_tracked(track, "inc2", "inc1", &inc2);
    assert_true(inc2.pages_written >= 40 + 256 + 512); /* pokes, fresh MiB, extra area */
    assert_true(inc2.pages_written < full.pages_written / 2);
    unsigned at_inc2 = tst_poke(0);
    tst_poke(100); /* after the dump: lost by the restore */
    tst_ops->track_close(track);
    tst_rank_kill();

    char inc1_dir[300], inc0_dir[300], inc2_dir[300], flat_dir[300], errbuf[1024];
    tst_dir("inc1", inc1_dir, sizeof(inc1_dir));
    tst_dir("inc0", inc0_dir, sizeof(inc0_dir));
    tst_dir("inc2", inc2_dir, sizeof(inc2_dir));
    tst_dir("flat2", flat_dir, sizeof(flat_dir)); /* made, empty */
    const char *parents[] = {inc1_dir, inc0_dir, NULL};
    if (tst_restore_with("inc2", parents, NULL, tst_pre_resume, -1, errbuf, sizeof(errbuf)) !=
        CRMPI_OK)
        fail_msg("restore from the chain failed: %s", errbuf);
    assert_int_equal(tst_poke(0), at_inc2);
    tst_rank_kill();

    /* The chain flattened into one full image: restored without its parents, the same. */
    uint64_t bytes = 0;
    if (crs_criu_flatten(inc2_dir, parents, flat_dir, &bytes, errbuf, sizeof(errbuf)) != CRMPI_OK)
        fail_msg("flatten: %s", errbuf);
    printf("# flat2: %llu pages from the chain\n",
           (unsigned long long)(bytes / (uint64_t)sysconf(_SC_PAGESIZE)));
    /* The 16 MiB area but the dropped MiB, and the extra 2 MiB. The dropped MiB reads as
     * the zero page since: CRIU leaves such pages out when it can tell them (kernels and
     * transparent huge pages differ), so they are not counted on. */
    assert_true(bytes / (uint64_t)sysconf(_SC_PAGESIZE) >= 4096 - 256 + 512);
    char link_path[320];
    snprintf(link_path, sizeof(link_path), "%s/parent", flat_dir);
    assert_int_equal(access(link_path, F_OK), -1);
    if (tst_restore_with("flat2", NULL, NULL, tst_pre_resume, -1, errbuf, sizeof(errbuf)) !=
        CRMPI_OK)
        fail_msg("restore of the flattened chain failed: %s", errbuf);
    assert_int_equal(tst_poke(0), at_inc2);
}

/* The kernel's memory for the page tables of a process, in KiB (VmPTE). */
static long tst_page_tables_kib(pid_t pid)
{
    char path[64], line[128];
    long kib = -1;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *status = fopen(path, "re");
    assert_non_null(status);
    while (fgets(line, sizeof(line), status))
        if (sscanf(line, "VmPTE: %ld kB", &kib) == 1)
            break;
    fclose(status);
    return kib;
}

/* A huge reserved area that the rank barely touched (an AddressSanitizer build's shadow
 * is terabytes of it): tracking it costs page tables for the touched pages only, where
 * protecting every page of it once took the machine's whole memory. */
static void test_incremental_reserved(void **state)
{
    (void)state;
    crmpi_crs_ckpt_result_t full, inc;
    crmpi_crs_track_t *track = NULL;
    char reply[32];
    int uffd = tst_track_fd();

    if (uffd < 0)
        skip();
    assert_true(tst_command("reserve", -1, reply, sizeof(reply)) > 0);
    if (strncmp(reply, "ok", 2) != 0) {
        close(uffd);
        skip(); /* no room for 4 GiB of address space without reservation */
    }
    assert_int_equal(tst_ops->track_open(tst_rank_pid(), uffd, &track), CRMPI_OK);
    tst_checkpoint_tracked(track, "res0", NULL, &full);
    /* Every page of 4 GiB protected takes 8 MiB of page tables, and CRIU, seeing them
     * protected, read them all into the image (a fresh page each, in the rank too). */
    long kib = tst_page_tables_kib(tst_rank_pid());
    printf("# page tables of the rank: %ld KiB\n", kib);
    assert_true(kib >= 0 && kib < 4 * 1024);
    assert_true(full.pages_written < (256u << 20) / 4096);
    assert_true(tst_command("reserve", -1, reply, sizeof(reply)) > 0);
    tst_checkpoint_tracked(track, "res1", "res0", &inc);
    assert_true(inc.pages_dirty >= 16);
    assert_true(inc.pages_written >= 16 && inc.pages_written < full.pages_written / 8);
    tst_ops->track_close(track);
}

/* CRIU fails (the rank holds a unix socket to the outside that nobody declared): the error
 * lines of CRIU's log are quoted, the log is kept, and the rank runs on. */
static void test_criu_failure_quoted(void **state)
{
    (void)state;
    crmpi_crs_ckpt_result_t result;
    char errbuf[1024], reply[64], log_path[300];
    int extra[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, extra), 0);
    assert_true(tst_command("recvfd", extra[1], reply, sizeof(reply)) > 0);
    assert_string_equal(reply, "ok");
    close(extra[1]);
    errbuf[0] = '\0';
    assert_int_equal(tst_checkpoint("fail", 0, &result, errbuf, sizeof(errbuf)), CRMPI_ERROR);
    printf("# %s\n", errbuf);
    assert_non_null(strstr(errbuf, "Error ("));
    assert_non_null(strstr(errbuf, "External socket is used")); /* CRIU's own cause */
    assert_non_null(strstr(errbuf, "CRIU log:"));
    assert_non_null(strstr(errbuf, "the rank keeps running"));
    snprintf(log_path, sizeof(log_path), "%s/fail/dump.log", tst_base);
    assert_int_equal(access(log_path, R_OK), 0);
    assert_int_equal(tst_tick().n, 9);
    assert_true(tst_command("closefd", -1, reply, sizeof(reply)) > 0);
    close(extra[0]);
    /* Without the stray socket the same rank checkpoints again. */
    if (tst_checkpoint("after-fail", 0, &result, errbuf, sizeof(errbuf)) != CRMPI_OK) {
        fail_msg("checkpoint after the failure failed: %s", errbuf);
    }
    assert_int_equal(tst_tick().n, 10);
}

/*
 * Two dumps whose inits share a working directory met in CRIU's "proc.crtools" (crs_criu.c):
 * the directory is made here, as the other dump would have it, and removed by a child once
 * CRIU's log says the dump met it; the dump is tried again and succeeds. Before the retry,
 * the checkpoint failed.
 */
static void test_checkpoint_collision(void **state)
{
    (void)state;
    crmpi_crs_ckpt_result_t result;
    char errbuf[1024], meeting[64], log_path[300];
    int status;
    pid_t remover;

    snprintf(meeting, sizeof(meeting), "/proc/%d/cwd/proc.crtools", (int)tst_rank.init_pid);
    tst_dir("collision", log_path, sizeof(log_path));
    strncat(log_path, "/dump.log", sizeof(log_path) - strlen(log_path) - 1);
    assert_int_equal(mkdir(meeting, 0700), 0);
    remover = fork();
    assert_true(remover >= 0);
    if (remover == 0) {
        /* Until CRIU's log names the meeting (the first try failed on it), then leave. */
        for (int i = 0; i < TST_TIMEOUT_MS / 10; i++) {
            if (crs_criu_log_says_collision(log_path)) {
                rmdir(meeting);
                _exit(0);
            }
            usleep(10000);
        }
        rmdir(meeting);
        _exit(1);
    }
    int rc = tst_checkpoint("collision", 0, &result, errbuf, sizeof(errbuf));
    assert_int_equal(waitpid(remover, &status, 0), remover);
    rmdir(meeting);
    if (rc != CRMPI_OK) {
        fail_msg("the dump did not get past the other dump's proc.crtools: %s", errbuf);
    }
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0); /* it did meet it */
}

/* A criu program that does not exist (parameter crs_criu_binary): a clear message. */
static void test_missing_binary(void **state)
{
    (void)state;
    crmpi_crs_ckpt_result_t result;
    char errbuf[1024], missing[300];
    const char *saved = NULL;
    assert_int_equal(crmpi_param_get_string("crs_criu_binary", &saved), CRMPI_OK);
    char *saved_copy = strdup(saved);
    snprintf(missing, sizeof(missing), "%s/no-such-criu", tst_base);
    assert_int_equal(crmpi_param_set_override("crs_criu_binary", missing), CRMPI_OK);
    int rc = tst_checkpoint("nobinary", 0, &result, errbuf, sizeof(errbuf));
    /* Selection says no too (and why, in the log). */
    const crmpi_component_t *selected = NULL;
    crmpi_framework_close(&crmpi_crs_framework);
    assert_int_equal(crmpi_framework_open(&crmpi_crs_framework), CRMPI_OK);
    int select_rc = crmpi_framework_select_one(&crmpi_crs_framework, &selected);
    crmpi_framework_close(&crmpi_crs_framework);
    assert_int_equal(crmpi_param_set_override("crs_criu_binary", saved_copy), CRMPI_OK);
    assert_int_equal(select_rc, CRMPI_ERR_NOT_FOUND);
    assert_null(selected);
    free(saved_copy);
    assert_int_equal(rc, CRMPI_ERR_NOT_SUPPORTED);
    assert_non_null(strstr(errbuf, "crs_criu_binary"));
    assert_non_null(strstr(errbuf, missing));
    assert_int_equal(tst_tick().n, 11);
}

static int tst_pre_resume_refuse(pid_t init_pid, void *arg)
{
    (void)arg;
    tst_hook_pid = init_pid;
    return CRMPI_ERR_CKPT_ABORTED;
}

/* Restores that cannot work: each says why, and leaves nothing running. */
static void test_restore_failures(void **state)
{
    (void)state;
    char errbuf[1024], cmd[1200];
    tst_rank_t running = tst_rank;

    /* No new descriptor for the control socket. */
    assert_int_equal(
        tst_restore_with("second", NULL, NULL, tst_pre_resume, 3, errbuf, sizeof(errbuf)),
        CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(errbuf, "fd 3 (socket:["));
    /* The record without CRIU's images: CRIU's own error is quoted. */
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/noimages' && cp '%s/second/%s' '%s/noimages/'",
             tst_base, tst_base, CRS_CRIU_META_FILE, tst_base);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(
        tst_restore_with("noimages", NULL, NULL, tst_pre_resume, -1, errbuf, sizeof(errbuf)),
        CRMPI_ERROR);
    printf("# %s\n", errbuf);
    assert_non_null(strstr(errbuf, "Error ("));
    assert_non_null(strstr(errbuf, "restore.log"));
    /* The pre-resume hook refuses: the restored tree is killed and reaped. */
    assert_int_equal(
        tst_restore_with("second", NULL, NULL, tst_pre_resume_refuse, -1, errbuf, sizeof(errbuf)),
        CRMPI_ERR_CKPT_ABORTED);
    assert_true(tst_hook_pid > 0);
    assert_int_equal(kill(tst_hook_pid, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_non_null(strstr(errbuf, "pre-resume"));
    /* The rank that was running is untouched. */
    tst_rank = running;
    assert_int_equal(tst_tick().n, 12);
}

/* A pid that is no rank: refused before CRIU runs, nothing else disturbed. */
static void test_bad_pid(void **state)
{
    (void)state;
    crmpi_crs_ckpt_result_t result;
    char errbuf[1024], dir[300];
    pid_t gone = fork();
    if (gone == 0) {
        _exit(0);
    }
    waitpid(gone, NULL, 0);
    tst_dir("badpid", dir, sizeof(dir));
    crmpi_crs_ckpt_opts_t opts = {
        .init_pid = gone, .images_dir = dir, .errbuf = errbuf, .errbuf_len = sizeof(errbuf)};
    assert_int_equal(tst_ops->checkpoint(&opts, &result), CRMPI_ERR_NOT_FOUND);
    assert_non_null(strstr(errbuf, "no rank namespace"));
    assert_int_equal(tst_tick().n, 13);
    tst_rank_kill();
}

/* The breakpoint probe answers the same every time, and the first checkpoint acted on it:
 * CRIU told not to use breakpoints exactly when they do not fire here (the dumps above would
 * have hung otherwise, on a machine where they do not). */
static void test_breakpoints(void **state)
{
    (void)state;
    int fire = crs_criu_breakpoints_fire();
    const char *fault = getenv("CRIU_FAULT");

    assert_true(fire == 0 || fire == 1);
    assert_int_equal(crs_criu_breakpoints_fire(), fire);
    printf("# hardware breakpoints %s here\n", fire ? "fire" : "do not fire");
    if (fire)
        assert_null(fault);
    else
        assert_string_equal(fault, "130");
}

/* Run when CRIU is unusable here: one skipped case, so every report counts a skip. */
static void test_criu_usable(void **state)
{
    (void)state;
    printf("# skipped: %s\n", tst_skip_reason);
    skip();
}

/* Why this machine cannot run the test, or NULL. */
static const char *tst_unusable(void)
{
    const char *binary = NULL;
    criu_opts *opts = NULL;
    if (geteuid() != 0) {
        snprintf(tst_skip_reason, sizeof(tst_skip_reason), "CRIU needs root");
        return tst_skip_reason;
    }
    if (crmpi_param_get_string("crs_criu_binary", &binary) != CRMPI_OK || !*binary ||
        access(binary, X_OK) < 0) {
        snprintf(tst_skip_reason, sizeof(tst_skip_reason), "no criu program (crs_criu_binary=%s)",
                 binary ? binary : "");
        return tst_skip_reason;
    }
    if (criu_local_init_opts(&opts) < 0 || criu_local_set_service_binary(opts, binary) < 0) {
        snprintf(tst_skip_reason, sizeof(tst_skip_reason), "libcriu cannot allocate its options");
        return tst_skip_reason;
    }
    int version = criu_local_get_version(opts);
    criu_local_free_opts(opts);
    if (version < 40000) {
        snprintf(tst_skip_reason, sizeof(tst_skip_reason),
                 "%s does not answer as CRIU 4.x (version code %d)", binary, version);
        return tst_skip_reason;
    }
    return NULL;
}

/* The killer of test_rank_killed_during_dump: once CRIU has seized the rank (tracing
 * stop), kill it, then let CRIU go on from its post-dump notification. */
typedef struct tst_killer {
    pid_t rank;
    char release[300];
} tst_killer_t;

static void *tst_killer_main(void *arg)
{
    tst_killer_t *killer = arg;
    char path[64], line[128];
    bool seized = false;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)killer->rank);
    while (!seized) {
        FILE *status = fopen(path, "re");
        if (!status)
            break;
        while (fgets(line, sizeof(line), status))
            if (strncmp(line, "State:", 6) == 0)
                seized = strchr(line, 't') != NULL && strstr(line, "tracing stop") != NULL;
        fclose(status);
        if (!seized)
            usleep(1000);
    }
    kill(killer->rank, SIGKILL);
    int fd = open(killer->release, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* The rank killed while CRIU holds it seized (held at CRIU's post-dump notification by the
 * fault point crs_criu_dump_pause): CRIU is stopped and the checkpoint fails saying that the
 * rank ended, where CRIU once succeeded after the kill or, killed earlier, waited forever
 * for the dead rank's threads. */
static void test_rank_killed_during_dump(void **state)
{
    crmpi_crs_ckpt_result_t result;
    char dir[300], errbuf[1024];
    tst_killer_t killer;
    pthread_t thread;
    int status;

    test_start(state); /* a fresh rank: test_bad_pid ended the last one */
    killer.rank = tst_rank_pid();
    snprintf(killer.release, sizeof(killer.release), "%s/release", tst_base);
    setenv("CRMPI_FAULT_RELEASE", killer.release, 1);
    assert_int_equal(crmpi_fault_configure("crs_criu_dump_pause"), CRMPI_OK);
    tst_dir("killed", dir, sizeof(dir));
    crmpi_crs_ckpt_opts_t opts = {.init_pid = tst_rank.init_pid,
                                  .images_dir = dir,
                                  .errbuf = errbuf,
                                  .errbuf_len = sizeof(errbuf)};
    assert_int_equal(pthread_create(&thread, NULL, tst_killer_main, &killer), 0);
    int rc = tst_ops->checkpoint(&opts, &result);
    pthread_join(thread, NULL);
    crmpi_fault_configure(NULL);
    unsetenv("CRMPI_FAULT_RELEASE");
    assert_int_equal(rc, CRMPI_ERR_PEER_GONE);
    assert_non_null(strstr(errbuf, "ended during its dump"));
    /* What is left of the namespace ends: its init follows its only child. */
    assert_int_equal(waitpid(tst_rank.init_pid, &status, 0), tst_rank.init_pid);
    close(tst_rank.ctl_fd);
    close(tst_rank.out_fd);
    close(tst_rank.err_fd);
    tst_rank.init_pid = -1;
}

int main(int argc, char **argv)
{
    /* crmpi_agent_ns_start's init executes this program again, as it does the agent. */
    if (argc > 1 && strcmp(argv[1], "--ns-init") == 0)
        crmpi_agent_ns_init_run(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start),
        cmocka_unit_test(test_checkpoint_leave_running),
        cmocka_unit_test(test_breakpoints),
        cmocka_unit_test(test_restore_new_fds),
        cmocka_unit_test(test_restore_twice_remapped),
        cmocka_unit_test(test_checkpoint_term),
        cmocka_unit_test(test_incremental),
        cmocka_unit_test(test_incremental_reserved),
        cmocka_unit_test(test_criu_failure_quoted),
        cmocka_unit_test(test_checkpoint_collision),
        cmocka_unit_test(test_missing_binary),
        cmocka_unit_test(test_restore_failures),
        cmocka_unit_test(test_bad_pid),
        cmocka_unit_test(test_rank_killed_during_dump),
    };
    char self[480];

    if (crmpi_catalog_register_all() != CRMPI_OK) {
        return 1;
    }
    /* A CRIU or libcriu that hangs fails the test instead of blocking make check (the
     * ranks die with us: their inits have PR_SET_PDEATHSIG). CRMPI_TEST_ALARM_S gives a
     * slower build (the sanitizers') more. */
    const char *alarm_s = getenv("CRMPI_TEST_ALARM_S");
    alarm(alarm_s && atoi(alarm_s) > 0 ? (unsigned)atoi(alarm_s) : TST_ALARM_SECONDS);
    const char *why = tst_unusable();
    if (why) {
        const struct CMUnitTest unusable[] = {cmocka_unit_test(test_criu_usable)};
        cmocka_run_group_tests(unusable, NULL, NULL);
        return 77; /* automake's SKIP */
    }
    const crmpi_component_t *selected = NULL;
    if (crmpi_framework_open(&crmpi_crs_framework) != CRMPI_OK ||
        crmpi_framework_select_one(&crmpi_crs_framework, &selected) != CRMPI_OK) {
        return 1;
    }
    tst_ops = selected->ops;
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len < 0) {
        return 1;
    }
    self[len] = '\0';
    *strrchr(self, '/') = '\0';
    snprintf(tst_target, sizeof(tst_target), "%s/crs_target", self);
    const char *tmp = getenv("TMPDIR");
    snprintf(tst_base, sizeof(tst_base), "%s/crs-criu-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
    if (!mkdtemp(tst_base)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(tst_file, sizeof(tst_file), "%s/state", tst_base);
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (failed == 0 && !getenv("CRS_KEEP")) {
        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tst_base);
        if (system(cmd) != 0) {
            fprintf(stderr, "could not remove %s\n", tst_base);
        }
    } else {
        fprintf(stderr, "images and CRIU logs kept in %s\n", tst_base);
    }
    return failed ? 1 : 0;
}
