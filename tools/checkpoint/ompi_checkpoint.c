/*
 * ompi_checkpoint.c: ompi-checkpoint, a global snapshot of a running job. It asks the job's mpirun,
 * whose global coordinator runs the checkpoint (snapc.h), shows progress when the checkpoint takes
 * more than a second, and prints the snapshot handle as the last line of its standard output.
 *
 * Interrupting it (Ctrl-C) before the images are written aborts the checkpoint; the job
 * goes on.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "component.h"
#include "clock.h"
#include "crmpi_status.h"
#include "ctl.h"
#include "log.h"
#include "param.h"
#include "session.h"
#include "snapc.h"
#include "snapshot_commit.h"

static const char ompi_checkpoint_usage[] =
    "Usage: ompi-checkpoint [OPTION]... JOBID\n"
    "Take a global snapshot of the running job JOBID (the pid of its mpirun, which was\n"
    "started with --with-ft cr). The last line of the output is the snapshot handle, the\n"
    "directory to give to ompi-restart.\n"
    "\n"
    "  --term           terminate the job once the snapshot is committed\n"
    "  --stop           stop the job (SIGSTOP) after its dump; it stays stopped, with the\n"
    "                   snapshot committed, until 'kill -CONT JOBID' resumes it\n"
    "  -w, --nowait     return once the checkpoint has started (the handle is printed)\n"
    "  -s, --status     print the job's checkpoint state instead of checkpointing\n"
    "  -l, --list       list the job's committed snapshots instead of checkpointing\n"
    "  --mca NAME VALUE set a parameter (runtime_session_dir_base, ...)\n"
    "  -v, --verbose    show every step of the checkpoint\n"
    "  -h, --help       this help\n"
    "\n"
    "Exit status: 0 when the snapshot was taken, 1 when it was not (the reason is on\n"
    "stderr, and the job goes on), 2 for a bad command line.\n";

typedef struct ompi_checkpoint_options {
    uint64_t jobid;
    uint32_t flags; /* CRMPI_SNAPC_* */
    int verbose;
    bool status; /* --status */
    bool list;   /* --list */
} ompi_checkpoint_options_t;

/* @return 0 (parsed), 1 (--help shown), 2 (bad command line, said why) */
static int ompi_checkpoint_parse(int argc, char **argv, ompi_checkpoint_options_t *opts)
{
    const char *jobid_text = NULL;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int mca;

        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(ompi_checkpoint_usage, stdout);
            return 1;
        } else if (strcmp(arg, "--term") == 0) {
            opts->flags |= CRMPI_SNAPC_TERM;
        } else if (strcmp(arg, "--stop") == 0) {
            opts->flags |= CRMPI_SNAPC_STOP;
        } else if (strcmp(arg, "-w") == 0 || strcmp(arg, "--nowait") == 0) {
            opts->flags |= CRMPI_SNAPC_NOWAIT;
        } else if (strcmp(arg, "-s") == 0 || strcmp(arg, "--status") == 0) {
            opts->status = true;
        } else if (strcmp(arg, "-l") == 0 || strcmp(arg, "--list") == 0) {
            opts->list = true;
        } else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
            opts->verbose++;
        } else if ((mca = crmpi_param_parse_mca_arg(argc, argv, &i)) != 0) {
            if (mca < 0)
                return 2;
        } else if (arg[0] == '-') {
            crmpi_log_error("unknown option '%s' (see ompi-checkpoint --help)", arg);
            return 2;
        } else if (jobid_text) {
            crmpi_log_error("one jobid only ('%s' and '%s' given)", jobid_text, arg);
            return 2;
        } else {
            jobid_text = arg;
        }
    }
    if ((opts->flags & CRMPI_SNAPC_TERM) && (opts->flags & CRMPI_SNAPC_STOP)) {
        crmpi_log_error("--term and --stop exclude each other");
        return 2;
    }
    if (!jobid_text) {
        crmpi_log_error("no jobid given (the pid of the job's mpirun; see --help)");
        return 2;
    }
    char *end;
    errno = 0;
    unsigned long long jobid = strtoull(jobid_text, &end, 10);
    if (errno || *end || jobid == 0 || jobid_text[0] == '-') {
        crmpi_log_error("'%s' is not a jobid (the pid of the job's mpirun)", jobid_text);
        return 2;
    }
    opts->jobid = jobid;
    return 0;
}

/* Connect to the job's mpirun; says why not. @return the socket or -1. */
static int ompi_checkpoint_connect(uint64_t jobid)
{
    int fd = -1;

    switch (crmpi_session_job_connect(jobid, &fd)) {
    case CRMPI_OK: return fd;
    case CRMPI_ERR_ACCESS: break; /* said */
    case CRMPI_ERR_NOT_FOUND:
        crmpi_log_error("no job %llu: no process has that pid (the jobid is the pid of the "
                        "job's mpirun; see ompi-ps)",
                        (unsigned long long)jobid);
        break;
    default:
        crmpi_log_error("process %llu is not a crmpi mpirun of this user, or it has ended "
                        "(see ompi-ps)",
                        (unsigned long long)jobid);
        break;
    }
    return -1;
}

/* --status and --list: what mpirun says, and the job's committed snapshots. */
static int ompi_checkpoint_status(const ompi_checkpoint_options_t *opts)
{
    crmpi_job_status_t status;
    crmpi_filem_commit_t *commit = NULL;
    int fd = ompi_checkpoint_connect(opts->jobid);

    if (fd < 0)
        return 1;
    close(fd);
    if (crmpi_session_job_status(opts->jobid, &status) != CRMPI_OK) {
        crmpi_log_error("job %llu did not answer its status request",
                        (unsigned long long)opts->jobid);
        return 1;
    }
    if (opts->status) {
        char note[128] = "";

        if (status.state == CRMPI_SNAPC_STOPPED)
            snprintf(note, sizeof(note), " (after checkpoint %u; kill -CONT %llu resumes it)",
                     status.last_seq, (unsigned long long)status.jobid);
        else if (status.state != CRMPI_SNAPC_IDLE)
            snprintf(note, sizeof(note), " (a checkpoint is in progress)");
        printf("job %llu: %u ranks of %s; checkpoint/restart %s; %s%s\n",
               (unsigned long long)status.jobid, status.np, status.program,
               status.cr ? "enabled" : "not enabled (no --with-ft cr)",
               crmpi_snapc_state_name((crmpi_snapc_state_t)status.state), note);
        if (status.ckpt_interval_ms && status.ckpt_auto)
            printf("job %llu: periodic checkpoints every %.1f s (Daly's interval for an MTBF of "
                   "%llu s and the measured cost of a checkpoint)\n",
                   (unsigned long long)status.jobid, (double)status.ckpt_interval_ms / 1e3,
                   (unsigned long long)status.mtbf_s);
        else if (status.ckpt_interval_ms)
            printf("job %llu: periodic checkpoints every %.1f s\n",
                   (unsigned long long)status.jobid, (double)status.ckpt_interval_ms / 1e3);
    }
    if (opts->list) {
        if (!status.cr || crmpi_filem_commit_read(status.jobdir, &commit) != CRMPI_OK) {
            printf("job %llu: no committed snapshot\n", (unsigned long long)status.jobid);
            return 0;
        }
        for (size_t i = 0; i < commit->num_seqs; i++)
            printf("%s --seq %u%s\n", status.jobdir, commit->seqs[i],
                   i + 1 == commit->num_seqs ? " (newest)" : "");
        crmpi_filem_commit_destroy(commit);
    }
    return 0;
}

int main(int argc, char **argv)
{
    ompi_checkpoint_options_t opts = {0};
    crmpi_buf_t buf;
    double start, last_note;
    int fd, rc;

    crmpi_log_set_who("ompi-checkpoint");
    if (crmpi_catalog_register_all() != CRMPI_OK)
        return 1;
    rc = ompi_checkpoint_parse(argc, argv, &opts);
    if (rc)
        return rc == 1 ? 0 : 2;
    crmpi_param_warn_unknown("ompi-checkpoint");
    signal(SIGPIPE, SIG_IGN);
    if (opts.status || opts.list)
        return ompi_checkpoint_status(&opts);
    fd = ompi_checkpoint_connect(opts.jobid);
    if (fd < 0)
        return 1;

    crmpi_buf_init(&buf);
    crmpi_buf_put_u32(&buf, opts.flags);
    rc = crmpi_ctl_send(fd, CRMPI_CTL_TOOL_CKPT, 0, CRMPI_OK, buf.data, buf.len);
    crmpi_buf_free(&buf);
    if (rc != CRMPI_OK) {
        crmpi_log_error("cannot send the request to mpirun: %s", crmpi_strerror(rc));
        return 1;
    }
    start = last_note = crmpi_clock_s();
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        crmpi_ctl_msg_t msg;
        const char *text = "";

        if (poll(&pfd, 1, 1000) == 0) {
            double now = crmpi_clock_s();

            /* Long checkpoints show they are alive, once a second at most. */
            if (now - last_note >= 1.0) {
                fprintf(stderr, "ompi-checkpoint: job %llu: checkpoint in progress (%.0f s)\n",
                        (unsigned long long)opts.jobid, now - start);
                last_note = now;
            }
            continue;
        }
        rc = crmpi_ctl_recv(fd, &msg);
        if (rc != CRMPI_OK) {
            crmpi_log_error("mpirun closed the connection before answering (the job may have "
                            "ended): %s",
                            crmpi_strerror(rc));
            return 1;
        }
        crmpi_buf_init_read(&buf, msg.payload, msg.hdr.len);
        crmpi_buf_get_str(&buf, &text);
        if (msg.hdr.type == CRMPI_CTL_TOOL_PROGRESS && msg.hdr.status != CRMPI_OK) {
            crmpi_log_warn("%s", text); /* always shown */
            crmpi_ctl_msg_free(&msg);
            continue;
        }
        if (msg.hdr.type == CRMPI_CTL_TOOL_PROGRESS) {
            if (opts.verbose || crmpi_clock_s() - start >= 1.0) {
                fprintf(stderr, "ompi-checkpoint: %s\n", text);
                last_note = crmpi_clock_s();
            }
            crmpi_ctl_msg_free(&msg);
            continue;
        }
        rc = msg.hdr.type == CRMPI_CTL_REPLY ? msg.hdr.status : CRMPI_ERR_PROTO;
        if (rc == CRMPI_OK) {
            if (opts.verbose)
                fprintf(stderr, "ompi-checkpoint: checkpoint %u taken in %.3f s\n", msg.hdr.seq,
                        crmpi_clock_s() - start);
            if (opts.flags & CRMPI_SNAPC_STOP)
                fprintf(stderr,
                        "ompi-checkpoint: job %llu is stopped; 'kill -CONT %llu' "
                        "resumes it\n",
                        (unsigned long long)opts.jobid, (unsigned long long)opts.jobid);
            printf("%s\n", text);
        } else {
            crmpi_log_error("%s", *text ? text : crmpi_strerror(rc));
        }
        crmpi_ctl_msg_free(&msg);
        close(fd);
        return rc == CRMPI_OK ? 0 : 1;
    }
}
