/*
 * ompi_restart.c: ompi-restart, a job restarted from a snapshot.
 *
 * It opens the snapshot (checking every checksum of the chosen sequence, and falling back
 * to the previous committed sequence when one is damaged), checks that the program and
 * every library the ranks mapped are still there, unchanged (a restored rank maps the same
 * files: restart nodes need the same software image; software.h), then runs mpirun with --restore
 * and the launch options of the restart: the rank count is the snapshot's; hosts, mapping, binding
 * and MCA parameters (the BTLs among them) may change.
 *
 * A snapshot of application checkpoints (MPIX_Checkpoint; its manifest's "crs" is "pheap")
 * holds no process images but each rank's backup file: mpirun then starts the program
 * again, with snapc_base_app_restart naming the sequence, and each agent puts its rank's
 * backup back where the program wrote it before starting it.
 */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "component.h"
#include "crmpi_status.h"
#include "filem.h"
#include "log.h"
#include "param.h"
#include "snapshot_manifest.h"
#include "snapshot_rank_info.h"
#include "filem_fs.h"
#include "software.h"

static const char ompi_restart_usage[] =
    "Usage: ompi-restart [OPTION]... HANDLE\n"
    "Restart a job from its snapshot. HANDLE is what ompi-checkpoint printed (the\n"
    "<jobid>.ckpt directory), or a jobid whose snapshot is in snapc_base_global_snapshot_dir.\n"
    "The newest committed sequence is used unless --seq says otherwise; a damaged one is\n"
    "replaced by the previous committed sequence, with a message.\n"
    "\n"
    "  --seq N             restart from sequence N\n"
    "  -H, --host LIST     hosts, as for mpirun (other nodes: through Open MPI's mpirun)\n"
    "  --hostfile FILE     hosts, as for mpirun\n"
    "  -N N                N ranks on each host (--map-by ppr:N:node)\n"
    "  --map-by WHAT       mapping (default: the checkpointed job's, unless it placed N\n"
    "                      ranks per object and hosts are given)\n"
    "  --bind-to WHAT      binding (default: the checkpointed job's)\n"
    "  --oversubscribe     allow more ranks than slots or cores\n"
    "  -x VAR[=VALUE]      set (or pass on) a variable of the agents (the restored ranks\n"
    "                      keep the environment of their image)\n"
    "  --report-bindings, --display-map, --launcher local|ompi, --allow-run-as-root\n"
    "                      as for mpirun\n"
    "  --mca NAME VALUE    an MCA parameter of the restarted job (e.g. --mca btl self,tcp);\n"
    "                      the checkpointed job's parameters apply unless set again here\n"
    "  -i, --info          say which sequence is restarted and how, and each rank's\n"
    "                      placement (CPUs, NUMA nodes, memory policies) then and now\n"
    "  --showme            print the mpirun command instead of running it\n"
    "  -v, --verbose       passed on to mpirun\n"
    "  -h, --help          this help\n"
    "\n"
    "The rank count is the snapshot's. Exit status: mpirun's, or 1 when the snapshot cannot\n"
    "be used (the reason is on stderr), 2 for a bad command line.\n";

/* Options given on the command line; NULL when not given. */
typedef struct ompi_restart_options {
    const char *handle;
    long seq; /* -1: the newest committed */
    const char *host, *hostfile, *map_by, *bind_to, *npernode, *launcher;
    char **mca; /* NAME, VALUE pairs */
    size_t num_mca;
    char **env; /* -x values, as given */
    size_t num_env;
    /* mpirun's flags passed on as they are: --oversubscribe, --report-bindings, ... */
    const char **flags;
    size_t num_flags;
    bool info, showme;
    int verbose;
} ompi_restart_options_t;

/* Flags of mpirun that ompi-restart passes on. */
static const char *const ompi_restart_mpirun_flags[] = {
    "--oversubscribe", "--report-bindings", "--display-map", "--allow-run-as-root", NULL,
};

static bool ompi_restart_is_flag(const char *arg)
{
    for (const char *const *flag = ompi_restart_mpirun_flags; *flag; flag++) {
        /* Open MPI's habit: one dash or two. */
        if (strcmp(arg, *flag) == 0 || strcmp(arg, *flag + 1) == 0)
            return true;
    }
    return false;
}

/* @return 0 (parsed), 1 (--help shown), 2 (bad command line, said why) */
static int ompi_restart_parse(int argc, char **argv, ompi_restart_options_t *opts)
{
    opts->seq = -1;
    opts->mca = calloc((size_t)argc, sizeof(char *));
    opts->env = calloc((size_t)argc, sizeof(char *));
    opts->flags = calloc((size_t)argc, sizeof(char *));
    if (!opts->mca || !opts->env || !opts->flags)
        return 2;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char **value_of = NULL;

        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(ompi_restart_usage, stdout);
            return 1;
        } else if (strcmp(arg, "-i") == 0 || strcmp(arg, "--info") == 0) {
            opts->info = true;
        } else if (strcmp(arg, "--showme") == 0) {
            opts->showme = true;
        } else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
            opts->verbose++;
        } else if (strcmp(arg, "--mca") == 0 || strcmp(arg, "-mca") == 0) {
            if (i + 2 >= argc) {
                crmpi_log_error("%s needs a name and a value", arg);
                return 2;
            }
            opts->mca[opts->num_mca++] = argv[++i];
            opts->mca[opts->num_mca++] = argv[++i];
        } else if (strcmp(arg, "--seq") == 0) {
            char *end;

            if (i + 1 >= argc) {
                crmpi_log_error("--seq needs a sequence number");
                return 2;
            }
            errno = 0;
            opts->seq = strtol(argv[++i], &end, 10);
            if (errno || *end || opts->seq < 1) {
                crmpi_log_error("--seq: '%s' is not a sequence number (1, 2, ...)", argv[i]);
                return 2;
            }
        } else if (strcmp(arg, "-H") == 0 || strcmp(arg, "--host") == 0) {
            value_of = &opts->host;
        } else if (strcmp(arg, "--hostfile") == 0 || strcmp(arg, "--machinefile") == 0) {
            value_of = &opts->hostfile;
        } else if (strcmp(arg, "--map-by") == 0) {
            value_of = &opts->map_by;
        } else if (strcmp(arg, "-N") == 0 || strcmp(arg, "--npernode") == 0) {
            value_of = &opts->npernode;
        } else if (strcmp(arg, "--launcher") == 0) {
            value_of = &opts->launcher;
        } else if (strcmp(arg, "-x") == 0) {
            if (i + 1 >= argc) {
                crmpi_log_error("-x needs VAR or VAR=VALUE");
                return 2;
            }
            opts->env[opts->num_env++] = argv[++i];
        } else if (ompi_restart_is_flag(arg)) {
            opts->flags[opts->num_flags++] = arg;
        } else if (strcmp(arg, "--bind-to") == 0) {
            value_of = &opts->bind_to;
        } else if (arg[0] == '-') {
            crmpi_log_error("unknown option '%s' (see ompi-restart --help)", arg);
            return 2;
        } else if (opts->handle) {
            crmpi_log_error("one snapshot handle only ('%s' and '%s' given)", opts->handle, arg);
            return 2;
        } else {
            opts->handle = arg;
        }
        if (value_of) {
            if (i + 1 >= argc) {
                crmpi_log_error("%s needs a value", arg);
                return 2;
            }
            *value_of = argv[++i];
        }
    }
    if (!opts->handle) {
        crmpi_log_error("no snapshot handle given (what ompi-checkpoint printed; see --help)");
        return 2;
    }
    return 0;
}

/* The value of `key` in a manifest's key/value list, or NULL. */
static const char *ompi_restart_kv(const crmpi_filem_kv_list_t *list, const char *key)
{
    for (size_t i = 0; i < list->count; i++) {
        if (strcmp(list->items[i].key, key) == 0)
            return list->items[i].value;
    }
    return NULL;
}

/* A restart's MCA parameter replaces the checkpointed job's of the same name. */
static bool ompi_restart_mca_given(const ompi_restart_options_t *opts, const char *name)
{
    for (size_t i = 0; i < opts->num_mca; i += 2) {
        if (strcmp(opts->mca[i], name) == 0)
            return true;
    }
    return false;
}

/*
 * Every file a rank mapped at its dump (rank.json's "software" section) is here, unchanged:
 * otherwise CRIU would refuse each rank's image, after the job was launched.
 */
static int ompi_restart_software_check(const crmpi_filem_restart_t *restart)
{
    char problem[4600], *seq_dir = restart->seq_dir, *local_dir = NULL;

    /* A sequence held only on the nodes' own storage: what the ranks of this node left. */
    if (!(restart->manifest->levels & CRMPI_FILEM_LEVEL_GLOBAL) &&
        crmpi_filem_local_seq_dir(restart->jobdir, restart->seq, &local_dir) == CRMPI_OK)
        seq_dir = local_dir;
    for (size_t rank = 0; rank < restart->manifest->num_ranks; rank++) {
        crmpi_filem_rank_info_t *info = NULL;
        char *rank_dir = NULL;
        int rc = crmpi_filem_rank_dir_path(seq_dir, (int)rank, &rank_dir);

        if (rc == CRMPI_OK)
            rc = crmpi_filem_rank_info_read(rank_dir, &info); /* older snapshots: no rank.json */
        free(rank_dir);
        if (rc != CRMPI_OK)
            continue;
        rc = crmpi_filem_software_check(info, problem, sizeof(problem));
        crmpi_filem_rank_info_destroy(info);
        if (rc != CRMPI_OK) {
            crmpi_log_error("cannot restart rank %zu: %s; a restart needs the same software "
                            "image (program and libraries at the same paths) as the "
                            "checkpointed job",
                            rank, problem);
            free(local_dir);
            return rc;
        }
    }
    free(local_dir);
    return CRMPI_OK;
}

/* mpirun beside this program (the same installation). */
static int ompi_restart_mpirun_path(char *path, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n < 0)
        return CRMPI_ERR_NOT_FOUND;
    self[n] = '\0';
    if ((size_t)snprintf(path, len, "%s/mpirun", dirname(self)) >= len)
        return CRMPI_ERR_BAD_PARAM;
    return access(path, X_OK) == 0 ? CRMPI_OK : CRMPI_ERR_NOT_FOUND;
}

int main(int argc, char **argv)
{
    ompi_restart_options_t opts = {0};
    crmpi_filem_restart_t *restart = NULL;
    char mpirun[PATH_MAX], np[16];
    const char *program;
    char **cmd;
    size_t n = 0;
    int rc;

    crmpi_log_set_who("ompi-restart");
    if (crmpi_catalog_register_all() != CRMPI_OK)
        return 1;
    rc = ompi_restart_parse(argc, argv, &opts);
    if (rc)
        return rc == 1 ? 0 : 2;
    /* The snapshot directory parameter may be among them. */
    for (size_t i = 0; i < opts.num_mca; i += 2)
        crmpi_param_set_override(opts.mca[i], opts.mca[i + 1]);
    if (crmpi_filem_restart_open(opts.handle, opts.seq, 0, &restart) != CRMPI_OK)
        return 1; /* FileM said why */
    program = ompi_restart_kv(&restart->manifest->launch, "program");
    if (!program || restart->manifest->argc == 0) {
        crmpi_log_error("sequence %u of %s does not record the program it ran; it cannot be "
                        "restarted",
                        restart->seq, restart->jobdir);
        return 1;
    }
    if (access(program, X_OK) < 0) {
        crmpi_log_error("the job's program %s is not here (%s): a restart needs the same "
                        "software image (program and libraries at the same paths) as the "
                        "checkpointed job",
                        program, strerror(errno));
        return 1;
    }
    bool app = restart->manifest->crs && strncmp(restart->manifest->crs, "pheap", 5) == 0;
    if (!app && ompi_restart_software_check(restart) != CRMPI_OK)
        return 1;
    if (ompi_restart_mpirun_path(mpirun, sizeof(mpirun)) != CRMPI_OK) {
        crmpi_log_error("cannot find mpirun beside ompi-restart");
        return 1;
    }
    if (opts.info || opts.verbose) {
        char levels[64];

        crmpi_filem_levels_str(restart->manifest->levels, levels, sizeof(levels));
        fprintf(stderr,
                "ompi-restart: restarting job %llu from sequence %u of %s (held at the %s "
                "level%s): %zu ranks of %s%s\n",
                (unsigned long long)restart->manifest->jobid, restart->seq, restart->jobdir, levels,
                strchr(levels, ',') ? "s" : "", restart->manifest->num_ranks, program,
                app ? " (application checkpoints: the program starts again)" : "");
    }

    cmd = calloc(36 + opts.verbose +
                     2 * (restart->manifest->mca.count + opts.num_mca + opts.num_env) +
                     opts.num_flags + restart->manifest->argc,
                 sizeof(char *));
    if (!cmd)
        return 1;
    snprintf(np, sizeof(np), "%zu", restart->manifest->num_ranks);
    cmd[n++] = mpirun;
    if (app) {
        cmd[n++] = "--with-ft";
        cmd[n++] = "cr";
        cmd[n++] = "--mca";
        cmd[n++] = "snapc_base_app_restart";
    } else {
        cmd[n++] = "--restore";
    }
    cmd[n++] = restart->seq_dir;
    cmd[n++] = "-np";
    cmd[n++] = np;
    const char *map_by =
        opts.map_by ? opts.map_by : ompi_restart_kv(&restart->manifest->launch, "map-by");
    const char *bind_to =
        opts.bind_to ? opts.bind_to : ompi_restart_kv(&restart->manifest->launch, "bind-to");
    /* N ranks per object of each host was the checkpointed job's answer to its own hosts: on
     * other hosts it would refuse a rank count it cannot place. And -N is a mapping of its
     * own, which a --map-by after it would replace. */
    if (!opts.map_by && map_by &&
        (opts.npernode || ((opts.host || opts.hostfile) && strncmp(map_by, "ppr:", 4) == 0)))
        map_by = NULL;
    if (opts.npernode) {
        cmd[n++] = "-N";
        cmd[n++] = (char *)opts.npernode;
    }
    if (opts.launcher) {
        cmd[n++] = "--launcher";
        cmd[n++] = (char *)opts.launcher;
    }
    for (size_t i = 0; i < opts.num_flags; i++)
        cmd[n++] = (char *)opts.flags[i];
    for (size_t i = 0; i < opts.num_env; i++) {
        cmd[n++] = "-x";
        cmd[n++] = opts.env[i];
    }
    if (map_by) {
        cmd[n++] = "--map-by";
        cmd[n++] = (char *)map_by;
    }
    if (bind_to) {
        cmd[n++] = "--bind-to";
        cmd[n++] = (char *)bind_to;
    }
    /* Periodic checkpoints go on as the job was launched. */
    const char *ckpt_interval = ompi_restart_kv(&restart->manifest->launch, "ckpt-interval");
    const char *mtbf = ompi_restart_kv(&restart->manifest->launch, "mtbf");
    if (ckpt_interval) {
        cmd[n++] = "--ckpt-interval";
        cmd[n++] = (char *)ckpt_interval;
    }
    if (ckpt_interval && mtbf) {
        cmd[n++] = "--mtbf";
        cmd[n++] = (char *)mtbf;
    }
    if (opts.host) {
        cmd[n++] = "--host";
        cmd[n++] = (char *)opts.host;
    }
    if (opts.hostfile) {
        cmd[n++] = "--hostfile";
        cmd[n++] = (char *)opts.hostfile;
    }
    for (size_t i = 0; i < restart->manifest->mca.count; i++) {
        const crmpi_filem_kv_t *kv = &restart->manifest->mca.items[i];

        if (ompi_restart_mca_given(&opts, kv->key) ||
            strcmp(kv->key, "snapc_base_app_restart") == 0) /* set above, for this restart */
            continue;
        cmd[n++] = "--mca";
        cmd[n++] = kv->key;
        cmd[n++] = kv->value;
    }
    for (size_t i = 0; i < opts.num_mca; i++) {
        if (i % 2 == 0)
            cmd[n++] = "--mca";
        cmd[n++] = opts.mca[i];
    }
    /* --info: each agent says what it made of its rank's placement. */
    if (opts.info && !app && !ompi_restart_mca_given(&opts, "crs_criu_placement_report")) {
        cmd[n++] = "--mca";
        cmd[n++] = "crs_criu_placement_report";
        cmd[n++] = "1";
    }
    for (int v = 0; v < opts.verbose; v++)
        cmd[n++] = "-v";
    cmd[n++] = (char *)program;
    for (size_t a = 1; a < restart->manifest->argc; a++)
        cmd[n++] = restart->manifest->argv[a];
    cmd[n] = NULL;

    if (opts.showme) {
        for (size_t i = 0; i < n; i++)
            printf("%s%s", i ? " " : "", cmd[i]);
        printf("\n");
        return 0;
    }
    fflush(stdout);
    fflush(stderr);
    execv(mpirun, cmd);
    crmpi_log_error("cannot run %s: %s", mpirun, strerror(errno));
    return 1;
}
