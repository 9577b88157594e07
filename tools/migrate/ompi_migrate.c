/*
 * ompi_migrate.c: ompi-migrate, a running job moved off some of its hosts onto others.
 *
 *   job status (TOOL_STATUS: C/R on, no checkpoint running, its hosts) -> the new hosts
 *     -> ompi-checkpoint --stop JOBID      the job stopped, its snapshot committed
 *     -> ompi-restart -H NEW HANDLE        a child: it becomes the new job's mpirun
 *     -> wait until every rank of the new job runs (TOOL_STATUS of the child)
 *     -> SIGTERM to the old job, wait until its mpirun is gone
 *     -> wait for the new job; its exit status is ompi-migrate's
 *
 * The old job is ended only once the new one runs, and resumed (SIGCONT) when the restart
 * fails, does not run within --timeout, or ompi-migrate is interrupted before: a migration
 * that fails leaves the job where it was. Each way it can fail is said in one line.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "component.h"
#include "crmpi_status.h"
#include "log.h"
#include "session.h"
#include "snapc.h"

static const char ompi_migrate_usage[] =
    "Usage: ompi-migrate --off HOSTS --onto HOSTS [OPTION]... JOBID\n"
    "Move the running job JOBID (the pid of its mpirun, started with --with-ft cr) off the\n"
    "hosts of --off and onto those of --onto, the first onto the first and so on: the job\n"
    "is checkpointed and stopped, restarted with those hosts replaced (the others keep their\n"
    "ranks), and the old job is ended once the new one runs; if the restart fails, the old\n"
    "job is resumed where it was. ompi-migrate then stays with the new job, as ompi-restart\n"
    "does.\n"
    "\n"
    "  --off HOSTS        hosts to leave, comma-separated\n"
    "  --onto HOSTS       hosts to go to, as many, comma-separated\n"
    "  --timeout SECONDS  how long the restarted job may take to run (default 300)\n"
    "  --mca NAME VALUE   a parameter of the restarted job (passed to ompi-restart)\n"
    "  -v, --verbose      say each step\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: the new job's (as mpirun's), 1 when the job was not moved (the reason is\n"
    "on stderr; the job goes on where it was), 2 for a bad command line.\n";

/* The most hosts one job may have, and one --off or --onto list. */
#define OMPI_MIGRATE_HOSTS_MAX 1024
/* --timeout's default: the restart's copy of the images and CRIU's restores. */
#define OMPI_MIGRATE_TIMEOUT_S 300
/* How long the old job may take to end once told (its agents' kill grace, and more). */
#define OMPI_MIGRATE_END_S 60

typedef struct ompi_migrate_options {
    uint64_t jobid;
    char *off[OMPI_MIGRATE_HOSTS_MAX]; /* --off, split */
    size_t num_off;
    char *onto[OMPI_MIGRATE_HOSTS_MAX]; /* --onto, split */
    size_t num_onto;
    int timeout_s;
    char **mca; /* NAME, VALUE pairs, borrowed from argv */
    size_t num_mca;
    int verbose;
} ompi_migrate_options_t;

/* SIGINT, SIGTERM or SIGHUP came: the migration stops (the job goes back where it was). */
static volatile sig_atomic_t ompi_migrate_interrupted;

static void ompi_migrate_on_signal(int sig)
{
    ompi_migrate_interrupted = sig;
}

/* "a,b,c" into `out` (strings malloc'ed). @return the count, or -1 (said why). */
static int ompi_migrate_split(const char *option, const char *list, char **out)
{
    int count = 0;

    while (*list) {
        size_t len = strcspn(list, ",");

        if (len == 0 || count == OMPI_MIGRATE_HOSTS_MAX) {
            crmpi_log_error("%s '%s': %s", option, list,
                            len == 0 ? "an empty host name" : "too many hosts");
            return -1;
        }
        out[count] = strndup(list, len);
        if (!out[count])
            return -1;
        count++;
        list += len + (list[len] == ',');
    }
    return count;
}

/* @return 0 (parsed), 1 (--help shown), 2 (bad command line, said why) */
static int ompi_migrate_parse(int argc, char **argv, ompi_migrate_options_t *opts)
{
    const char *jobid_text = NULL;
    int count;

    opts->timeout_s = OMPI_MIGRATE_TIMEOUT_S;
    opts->mca = calloc((size_t)argc, sizeof(char *));
    if (!opts->mca)
        return 2;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool takes_value = strcmp(arg, "--off") == 0 || strcmp(arg, "--onto") == 0 ||
                           strcmp(arg, "--timeout") == 0;

        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(ompi_migrate_usage, stdout);
            return 1;
        }
        if (takes_value && i + 1 >= argc) {
            crmpi_log_error("%s needs a value (see ompi-migrate --help)", arg);
            return 2;
        }
        if (strcmp(arg, "--off") == 0 || strcmp(arg, "--onto") == 0) {
            bool off = arg[3] == 'f';

            count = ompi_migrate_split(arg, argv[++i], off ? opts->off : opts->onto);
            if (count < 0)
                return 2;
            *(off ? &opts->num_off : &opts->num_onto) = (size_t)count;
        } else if (strcmp(arg, "--timeout") == 0) {
            char *end;
            long value = strtol(argv[++i], &end, 10);

            if (*end || value < 1 || value > 86400) {
                crmpi_log_error("--timeout: '%s' is not a number of seconds", argv[i]);
                return 2;
            }
            opts->timeout_s = (int)value;
        } else if (strcmp(arg, "--mca") == 0 || strcmp(arg, "-mca") == 0) {
            if (i + 2 >= argc) {
                crmpi_log_error("%s needs a name and a value", arg);
                return 2;
            }
            opts->mca[opts->num_mca++] = argv[++i];
            opts->mca[opts->num_mca++] = argv[++i];
        } else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
            opts->verbose++;
        } else if (arg[0] == '-' || jobid_text) {
            crmpi_log_error("%s '%s' (see ompi-migrate --help)",
                            arg[0] == '-' ? "unknown option" : "one jobid only; also", arg);
            return 2;
        } else {
            jobid_text = arg;
        }
    }
    if (!jobid_text) {
        crmpi_log_error("no jobid given (the pid of the job's mpirun; see --help)");
        return 2;
    }
    char *end;
    opts->jobid = strtoull(jobid_text, &end, 10);
    if (*end || opts->jobid == 0 || opts->jobid > INT_MAX) {
        crmpi_log_error("'%s' is not a jobid (the pid of the job's mpirun)", jobid_text);
        return 2;
    }
    if (opts->num_off == 0 || opts->num_off != opts->num_onto) {
        crmpi_log_error("--off and --onto name the hosts to leave and those to go to, as many "
                        "of each (%zu and %zu given)",
                        opts->num_off, opts->num_onto);
        return 2;
    }
    return 0;
}

/* The program `name` beside this one (the same installation). */
static int ompi_migrate_tool_path(const char *name, char *path, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n < 0)
        return CRMPI_ERR_NOT_FOUND;
    self[n] = '\0';
    if ((size_t)snprintf(path, len, "%s/%s", dirname(self), name) >= len)
        return CRMPI_ERR_BAD_PARAM;
    if (access(path, X_OK) < 0) {
        crmpi_log_error("cannot find %s beside ompi-migrate (%s)", name, strerror(errno));
        return CRMPI_ERR_NOT_FOUND;
    }
    return CRMPI_OK;
}

/*
 * The job's state; a job that cannot be migrated is said in one line: not there, not
 * crmpi's, without C/R, busy with a checkpoint, stopped, not running all its ranks.
 */
static int ompi_migrate_job_status(const ompi_migrate_options_t *opts, crmpi_job_status_t *status)
{
    unsigned long long jobid = (unsigned long long)opts->jobid;
    int rc = crmpi_session_job_status(opts->jobid, status);

    if (rc == CRMPI_ERR_NOT_FOUND) {
        crmpi_log_error("no process %llu: no job to migrate (see ompi-ps)", jobid);
        return rc;
    }
    if (rc != CRMPI_OK) {
        if (rc != CRMPI_ERR_ACCESS) /* that one is said already */
            crmpi_log_error("process %llu is not a crmpi mpirun of this user, or it has ended "
                            "(see ompi-ps)",
                            jobid);
        return rc;
    }
    if (!status->cr) {
        crmpi_log_error("job %llu runs without --with-ft cr: it cannot be checkpointed, so it "
                        "cannot be migrated",
                        jobid);
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    if (status->state == CRMPI_SNAPC_STOPPED) {
        crmpi_log_error("job %llu is stopped after checkpoint %u (--stop): resume it first with "
                        "kill -CONT %llu",
                        jobid, status->last_seq, jobid);
        return CRMPI_ERR_RESOURCE_BUSY;
    }
    if (status->state != CRMPI_SNAPC_IDLE) {
        crmpi_log_error("job %llu is being checkpointed; migrate it when that has ended", jobid);
        return CRMPI_ERR_RESOURCE_BUSY;
    }
    if (status->running != status->np) {
        crmpi_log_error("job %llu runs %u of its %u ranks (it is starting, or ending): nothing "
                        "to migrate now",
                        jobid, status->running, status->np);
        return CRMPI_ERR_RESOURCE_BUSY;
    }
    return CRMPI_OK;
}

/* The job's hosts ("n1:2,n2:2") with --off's replaced by --onto's, into `out`. */
static int ompi_migrate_new_hosts(const ompi_migrate_options_t *opts, const char *hosts, char *out,
                                  size_t len)
{
    bool found[OMPI_MIGRATE_HOSTS_MAX] = {false};
    const char *entry = hosts;
    size_t used = 0;

    out[0] = '\0';
    while (*entry) {
        size_t entry_len = strcspn(entry, ",");
        size_t name_len = strcspn(entry, ":,");
        const char *name = entry, *ranks = entry + name_len; /* ":2" */
        size_t new_len = name_len;

        for (size_t h = 0; h < opts->num_off; h++) {
            if (strlen(opts->off[h]) == name_len && strncmp(opts->off[h], entry, name_len) == 0) {
                name = opts->onto[h];
                new_len = strlen(name);
                found[h] = true;
            }
        }
        used += (size_t)snprintf(out + used, len - used, "%s%.*s%.*s", used ? "," : "",
                                 (int)new_len, name, (int)(entry_len - name_len), ranks);
        if (used >= len) {
            crmpi_log_error("the new host list is too long");
            return CRMPI_ERR_BAD_PARAM;
        }
        entry += entry_len + (entry[entry_len] == ',');
    }
    for (size_t h = 0; h < opts->num_off; h++) {
        if (!found[h]) {
            crmpi_log_error("--off %s: job %llu has no rank there (its hosts: %s); nothing was "
                            "changed",
                            opts->off[h], (unsigned long long)opts->jobid, hosts);
            return CRMPI_ERR_BAD_PARAM;
        }
    }
    return CRMPI_OK;
}

/* Every --onto host resolves: a misspelt one is said before the job is stopped. */
static int ompi_migrate_onto_resolve(const ompi_migrate_options_t *opts)
{
    for (size_t h = 0; h < opts->num_onto; h++) {
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *found = NULL;
        int rc = getaddrinfo(opts->onto[h], NULL, &hints, &found);

        if (rc != 0) {
            crmpi_log_error("--onto %s: the host cannot be resolved (%s); nothing was changed",
                            opts->onto[h], gai_strerror(rc));
            return CRMPI_ERR_NOT_FOUND;
        }
        freeaddrinfo(found);
    }
    return CRMPI_OK;
}

/* ompi-checkpoint --stop: the snapshot handle into `handle`. Its own messages go to our
 * stderr. */
static int ompi_migrate_checkpoint(const ompi_migrate_options_t *opts, char *handle, size_t len)
{
    char tool[PATH_MAX], jobid[32];
    int out_pipe[2], status;
    pid_t pid;

    if (ompi_migrate_tool_path("ompi-checkpoint", tool, sizeof(tool)) != CRMPI_OK)
        return CRMPI_ERR_NOT_FOUND;
    snprintf(jobid, sizeof(jobid), "%llu", (unsigned long long)opts->jobid);
    if (pipe2(out_pipe, O_CLOEXEC) < 0)
        return CRMPI_ERR_IO;
    pid = fork();
    if (pid == 0) {
        char *argv[] = {tool, "--stop", jobid, NULL, NULL};

        if (opts->verbose) {
            argv[2] = "-v";
            argv[3] = jobid;
        }
        dup2(out_pipe[1], 1);
        execv(tool, argv);
        _exit(127);
    }
    close(out_pipe[1]);
    FILE *out = pid > 0 ? fdopen(out_pipe[0], "r") : NULL;
    char line[4096];

    handle[0] = '\0';
    while (out && fgets(line, sizeof(line), out)) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(handle, len, "%s", line); /* the last line is the handle */
    }
    if (out)
        fclose(out);
    else
        close(out_pipe[0]);
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !*handle)
        return CRMPI_ERR_CKPT_ABORTED;
    return CRMPI_OK;
}

/* ompi-restart -H HOSTS HANDLE, as a child that becomes the new job's mpirun. */
static pid_t ompi_migrate_restart(const ompi_migrate_options_t *opts, const char *hosts,
                                  const char *handle)
{
    char tool[PATH_MAX];
    char **argv;
    size_t n = 0;
    pid_t pid;

    if (ompi_migrate_tool_path("ompi-restart", tool, sizeof(tool)) != CRMPI_OK)
        return -1;
    argv = calloc(8 + opts->num_mca * 2, sizeof(char *));
    if (!argv)
        return -1;
    argv[n++] = tool;
    argv[n++] = "-H";
    argv[n++] = (char *)hosts;
    for (size_t i = 0; i < opts->num_mca; i++) {
        if (i % 2 == 0)
            argv[n++] = "--mca";
        argv[n++] = opts->mca[i];
    }
    if (opts->verbose)
        argv[n++] = "-v";
    argv[n++] = (char *)handle;
    argv[n] = NULL;
    pid = fork();
    if (pid == 0) {
        sigset_t none;

        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execv(tool, argv);
        _exit(127);
    }
    free(argv);
    return pid;
}

/*
 * Wait until every rank of the new job (mpirun `pid`, our child) runs. @return CRMPI_OK;
 * CRMPI_ERR_PEER_GONE (it ended: *status_out is its wait status); CRMPI_ERR_TIMEOUT;
 * CRMPI_ERR_CKPT_ABORTED (interrupted).
 */
static int ompi_migrate_wait_running(const ompi_migrate_options_t *opts, pid_t pid, uint32_t np,
                                     int *status_out)
{
    double deadline = crmpi_clock_s() + opts->timeout_s;

    for (;;) {
        crmpi_job_status_t status;

        if (waitpid(pid, status_out, WNOHANG) == pid)
            return CRMPI_ERR_PEER_GONE;
        if (ompi_migrate_interrupted)
            return CRMPI_ERR_CKPT_ABORTED;
        if (crmpi_session_job_status((uint64_t)pid, &status) == CRMPI_OK && status.running == np)
            return CRMPI_OK;
        if (crmpi_clock_s() >= deadline)
            return CRMPI_ERR_TIMEOUT;
        usleep(50000);
    }
}

/* Until process `pid` (not our child) is gone, at most `seconds`. @return true if gone. */
static bool ompi_migrate_wait_gone(pid_t pid, int seconds)
{
    double deadline = crmpi_clock_s() + seconds;

    while (kill(pid, 0) == 0 || errno != ESRCH) {
        if (crmpi_clock_s() >= deadline)
            return false;
        usleep(50000);
    }
    return true;
}

/* The migration failed after the job was stopped: the job goes on where it was. */
static int ompi_migrate_resume(const ompi_migrate_options_t *opts, const char *why)
{
    unsigned long long jobid = (unsigned long long)opts->jobid;

    if (kill((pid_t)opts->jobid, SIGCONT) < 0) {
        crmpi_log_error("%s; and job %llu cannot be resumed (%s): its snapshot is committed, "
                        "ompi-restart can start it again",
                        why, jobid, strerror(errno));
        return 1;
    }
    crmpi_log_error("%s; job %llu is resumed where it was", why, jobid);
    return 1;
}

int main(int argc, char **argv)
{
    ompi_migrate_options_t opts = {0};
    crmpi_job_status_t status;
    char hosts[4096], handle[4096];
    struct sigaction on_signal = {.sa_handler = ompi_migrate_on_signal};
    int rc, child_status;
    pid_t child;

    crmpi_log_set_who("ompi-migrate");
    if (crmpi_catalog_register_all() != CRMPI_OK)
        return 1;
    rc = ompi_migrate_parse(argc, argv, &opts);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (ompi_migrate_job_status(&opts, &status) != CRMPI_OK ||
        ompi_migrate_new_hosts(&opts, status.hosts, hosts, sizeof(hosts)) != CRMPI_OK ||
        ompi_migrate_onto_resolve(&opts) != CRMPI_OK)
        return 1;
    /* From the checkpoint on, an interruption must bring the job back: the signals only
     * set a flag (a terminal's Ctrl-C reaches our children too, which act on it). */
    sigaction(SIGINT, &on_signal, NULL);
    sigaction(SIGTERM, &on_signal, NULL);
    sigaction(SIGHUP, &on_signal, NULL);
    if (opts.verbose)
        fprintf(stderr, "ompi-migrate: job %llu on %s: checkpointing and stopping it\n",
                (unsigned long long)opts.jobid, status.hosts);
    if (ompi_migrate_checkpoint(&opts, handle, sizeof(handle)) != CRMPI_OK) {
        crmpi_log_error("job %llu could not be checkpointed (the reason is above); it goes on "
                        "where it was",
                        (unsigned long long)opts.jobid);
        return 1;
    }
    if (ompi_migrate_interrupted)
        return ompi_migrate_resume(&opts, "interrupted after the checkpoint");
    if (opts.verbose)
        fprintf(stderr, "ompi-migrate: restarting %s on %s\n", handle, hosts);
    child = ompi_migrate_restart(&opts, hosts, handle);
    if (child < 0)
        return ompi_migrate_resume(&opts, "cannot run ompi-restart");
    rc = ompi_migrate_wait_running(&opts, child, status.np, &child_status);
    if (rc != CRMPI_OK) {
        char why[256];

        if (rc == CRMPI_ERR_PEER_GONE) {
            snprintf(why, sizeof(why), "the restart on %s failed (the reason is above)", hosts);
        } else {
            snprintf(why, sizeof(why), "%s on %s",
                     rc == CRMPI_ERR_TIMEOUT ? "the restarted job did not run within --timeout"
                                             : "interrupted during the restart",
                     hosts);
            kill(child, SIGTERM); /* its mpirun ends what it started */
            while (waitpid(child, &child_status, 0) < 0 && errno == EINTR) {
            }
        }
        return ompi_migrate_resume(&opts, why);
    }
    /* The new job runs: the old one goes. */
    kill((pid_t)opts.jobid, SIGTERM);
    if (!ompi_migrate_wait_gone((pid_t)opts.jobid, OMPI_MIGRATE_END_S))
        crmpi_log_warn("job %llu (stopped, its snapshot taken) did not end within %d s of "
                       "SIGTERM; end it with kill -KILL %llu",
                       (unsigned long long)opts.jobid, OMPI_MIGRATE_END_S,
                       (unsigned long long)opts.jobid);
    fprintf(stderr, "ompi-migrate: job %llu (%s) now runs as job %d on %s\n",
            (unsigned long long)opts.jobid, status.hosts, (int)child, hosts);
    /* From here the signals are the new job's (its mpirun has them from the terminal). */
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    while (waitpid(child, &child_status, 0) < 0) {
        if (errno != EINTR)
            return 1;
        if (ompi_migrate_interrupted == SIGTERM) {
            kill(child, SIGTERM);
            ompi_migrate_interrupted = 0;
        }
    }
    if (WIFSIGNALED(child_status))
        return 128 + WTERMSIG(child_status);
    return WEXITSTATUS(child_status);
}
