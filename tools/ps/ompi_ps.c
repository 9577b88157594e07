/*
 * ompi_ps.c: ompi-ps, this user's crmpi jobs on this node, their checkpoint state and their
 * snapshots. It finds the jobs by their mpirun's control socket in the
 * session directories and asks each for its state (TOOL_STATUS).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component.h"
#include "crmpi_status.h"
#include "log.h"
#include "param.h"
#include "session.h"
#include "snapc.h"
#include "snapshot_commit.h"

static const char ompi_ps_usage[] =
    "Usage: ompi-ps [--mca NAME VALUE]...\n"
    "List this user's crmpi jobs on this node: jobid (mpirun's pid), ranks, whether\n"
    "checkpoint/restart is enabled, the state of checkpointing, the newest committed\n"
    "snapshot, and the program.\n";

/* "2 (seq 1, 2)" or "none" */
static void ompi_ps_snapshots(const crmpi_job_status_t *status, char *buf, size_t len)
{
    crmpi_filem_commit_t *commit;
    size_t used;

    if (!status->cr || crmpi_filem_commit_read(status->jobdir, &commit) != CRMPI_OK) {
        snprintf(buf, len, "none");
        return;
    }
    used = (size_t)snprintf(buf, len, "%s seq", status->jobdir);
    for (size_t i = 0; i < commit->num_seqs && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? "," : " ", commit->seqs[i]);
    crmpi_filem_commit_destroy(commit);
}

int main(int argc, char **argv)
{
    char parent[4096], snapshots[8192];
    struct dirent *entry;
    int jobs = 0, rc;
    DIR *dir;

    crmpi_log_set_who("ompi-ps");
    if (crmpi_catalog_register_all() != CRMPI_OK)
        return 1;
    for (int i = 1; i < argc; i++) {
        int mca;

        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(ompi_ps_usage, stdout);
            return 0;
        } else if ((mca = crmpi_param_parse_mca_arg(argc, argv, &i)) != 0) {
            if (mca < 0)
                return 2;
        } else {
            crmpi_log_error("unknown argument '%s' (see ompi-ps --help)", argv[i]);
            return 2;
        }
    }
    if (crmpi_session_parent(parent, sizeof(parent)) != CRMPI_OK)
        return 1;
    rc = crmpi_session_parent_check(parent);
    if (rc != CRMPI_OK && rc != CRMPI_ERR_NOT_FOUND)
        return 1;
    dir = opendir(parent);
    if (!dir) {
        if (errno != ENOENT) {
            crmpi_log_error("cannot read %s: %s", parent, strerror(errno));
            return 1;
        }
    }
    printf("%-8s %5s %-4s %-11s %6s  %s\n", "JOBID", "RANKS", "C/R", "STATE", "CKPTS", "PROGRAM");
    while (dir && (entry = readdir(dir)) != NULL) {
        crmpi_job_status_t status;
        char *end;
        unsigned long long jobid = strtoull(entry->d_name, &end, 10);

        if (*end || jobid == 0 || crmpi_session_job_status(jobid, &status) != CRMPI_OK)
            continue; /* not a job directory, or a job that has ended */
        printf("%-8llu %5u %-4s %-11s %6u  %s\n", (unsigned long long)status.jobid, status.np,
               status.cr ? "on" : "off", crmpi_snapc_state_name(status.state), status.last_seq,
               status.program);
        ompi_ps_snapshots(&status, snapshots, sizeof(snapshots));
        if (status.cr)
            printf("%-8s snapshots: %s\n", "", snapshots);
        if (status.ckpt_interval_ms)
            printf("%-8s periodic: every %.1f s%s\n", "", (double)status.ckpt_interval_ms / 1e3,
                   status.ckpt_auto ? " (auto, Daly's interval)" : "");
        jobs++;
    }
    if (dir)
        closedir(dir);
    if (jobs == 0)
        printf("(no crmpi job of this user runs on this node)\n");
    return 0;
}
