/*
 * filem_levels.c: the storage levels of a checkpoint (filem.h, "levels"): the filem_levels
 * parameter and its schedule, and where the node-local level keeps a rank's images.
 */
#include "config.h"

#include "filem.h"
#include "filem_fs.h"
#include "snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"
#include "param.h"
#include "session.h"

int crmpi_filem_levels_parse(const char *text, crmpi_filem_levels_t *levels_out, char *problem,
                             size_t problem_len)
{
    crmpi_filem_levels_t levels = {0};
    char *copy = strdup(text), *save = NULL;
    int rc = CRMPI_OK;

    if (!copy)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (char *item = strtok_r(copy, ",", &save); item && rc == CRMPI_OK;
         item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':'), *end = NULL;
        unsigned long interval = 1;
        int level = -1;

        if (colon) {
            *colon = '\0';
            errno = 0;
            interval = strtoul(colon + 1, &end, 10);
            if (errno || !colon[1] || *end || interval < 1 || interval > UINT_MAX) {
                snprintf(problem, problem_len,
                         "'%s' is not an interval: give every Nth checkpoint as %s:N, N >= 1",
                         colon + 1, item);
                rc = CRMPI_ERR_BAD_PARAM;
                break;
            }
        }
        for (int i = 0; i < CRMPI_FILEM_NUM_LEVELS; i++)
            if (strcmp(item, crmpi_filem_level_name(i)) == 0)
                level = i;
        if (level < 0) {
            snprintf(problem, problem_len,
                     "'%s' is not a level (the levels are local, partner "
                     "and global)",
                     item);
            rc = CRMPI_ERR_BAD_PARAM;
        } else if (levels.mask & (1u << level)) {
            snprintf(problem, problem_len, "%s is named twice", item);
            rc = CRMPI_ERR_BAD_PARAM;
        } else {
            levels.mask |= 1u << level;
            levels.interval[level] = (unsigned)interval;
        }
    }
    free(copy);
    if (rc == CRMPI_OK && !levels.mask) {
        snprintf(problem, problem_len,
                 "no level is named (the levels are local, partner and global)");
        rc = CRMPI_ERR_BAD_PARAM;
    }
    if (rc == CRMPI_OK)
        *levels_out = levels;
    return rc;
}

int crmpi_filem_base_levels(crmpi_filem_levels_t *levels_out)
{
    char problem[256];
    const char *value;
    int rc = crmpi_param_get_string("filem_levels", &value);

    if (rc != CRMPI_OK)
        return rc;
    rc = crmpi_filem_levels_parse(value, levels_out, problem, sizeof(problem));
    if (rc == CRMPI_ERR_BAD_PARAM)
        crmpi_log_error("filem_levels '%s': %s", value, problem);
    return rc;
}

unsigned crmpi_filem_levels_due(const crmpi_filem_levels_t *levels, unsigned ordinal)
{
    unsigned due = 0;

    for (int i = 0; i < CRMPI_FILEM_NUM_LEVELS; i++)
        if ((levels->mask & (1u << i)) && ordinal >= 1 && (ordinal - 1) % levels->interval[i] == 0)
            due |= 1u << i;
    return due;
}

int crmpi_filem_local_seq_dir(const char *jobdir, unsigned seq, char **dir_out)
{
    char base[PATH_MAX], name[PATH_MAX];
    const char *value = "";

    if (crmpi_param_get_string("filem_local_dir", &value) != CRMPI_OK || !value)
        value = "";
    if (value[0]) {
        snprintf(base, sizeof(base), "%s", value);
    } else {
        char parent[PATH_MAX - 8];

        if (crmpi_session_parent(parent, sizeof(parent)) != CRMPI_OK)
            return CRMPI_ERR_BAD_PARAM;
        snprintf(base, sizeof(base), "%s/local", parent);
    }
    /* The job directory's own name (<jobid>.ckpt): the same on every node, and at restart. */
    snprintf(name, sizeof(name), "%s", jobdir);
    if (asprintf(dir_out, "%s/%s/%u", base, basename(name), seq) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    return CRMPI_OK;
}

void crmpi_filem_local_prune(const char *jobdir, unsigned seq, int rank, const uint32_t *keep,
                             uint32_t num_keep)
{
    char *seq_dir = NULL, job_dir[PATH_MAX], rank_dir[PATH_MAX + 300];
    struct dirent *found;
    DIR *dir;

    if (crmpi_filem_local_seq_dir(jobdir, seq, &seq_dir) != CRMPI_OK)
        return;
    snprintf(job_dir, sizeof(job_dir), "%s", seq_dir);
    free(seq_dir);
    *strrchr(job_dir, '/') = '\0';
    if (!(dir = opendir(job_dir))) {
        if (errno != ENOENT) /* none: nothing was ever kept on this node */
            crmpi_log_warn("filem: cannot read %s to remove rank %d's older copies: %s", job_dir,
                           rank, strerror(errno));
        return;
    }
    while ((found = readdir(dir))) {
        char *end;
        unsigned long other = strtoul(found->d_name, &end, 10);
        bool kept = found->d_name[0] < '0' || found->d_name[0] > '9' || *end || other == seq;

        if (!kept) { /* what an interrupted copy or dump left, kept or not */
            snprintf(rank_dir, sizeof(rank_dir), "%s/%s/rank.%d%s", job_dir, found->d_name, rank,
                     CRMPI_FILEM_PARTIAL_SUFFIX);
            crmpi_filem_tree_remove(rank_dir);
        }
        for (uint32_t i = 0; i < num_keep && !kept; i++)
            kept = keep[i] == other;
        if (kept)
            continue;
        snprintf(rank_dir, sizeof(rank_dir), "%s/%s/rank.%d", job_dir, found->d_name, rank);
        crmpi_filem_tree_remove(rank_dir);
        snprintf(rank_dir, sizeof(rank_dir), "%s/%s", job_dir, found->d_name);
        rmdir(rank_dir); /* the last rank to leave it removes it */
    }
    closedir(dir);
}
