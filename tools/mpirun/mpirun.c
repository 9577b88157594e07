/*
 * mpirun.c: the head node process (HNP) of a crmpi job (mpirun.h says which file does what).
 *
 *   parse and validate -> choose the launcher (plm.h) -> map and bind -> session directory,
 *     control socket (and a TCP listener for agents on other nodes)
 *     -> plm init/launch (one crmpi-agent per rank)
 *     -> event loop (mpirun_loop.c): output, agent reports, checkpoints, signals, timeout
 *     -> teardown (SIGTERM, grace, SIGKILL) -> remove the session directory -> exit code
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "component.h"
#include "crmpi_status.h"
#include "log.h"
#include "mpirun.h"
#include "param.h"

/* The program as the agents will exec it: an absolute path, checked executable here so
 * that a typo is one clear line, not N failing ranks. */
static int mpirun_resolve_program(const char *name, char **path_out)
{
    char candidate[PATH_MAX];
    struct stat sb;

    if (strchr(name, '/')) {
        if (!realpath(name, candidate)) {
            crmpi_log_error("cannot run '%s': %s", name, strerror(errno));
            return CRMPI_ERR_NOT_FOUND;
        }
    } else {
        const char *path = getenv("PATH");
        const char *dir = path ? path : "/usr/local/bin:/usr/bin:/bin";
        int found = 0;
        while (!found && *dir) {
            size_t len = strcspn(dir, ":");
            snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)len, len ? dir : ".", name);
            found =
                access(candidate, X_OK) == 0 && stat(candidate, &sb) == 0 && S_ISREG(sb.st_mode);
            dir += len + (dir[len] == ':');
        }
        if (!found) {
            crmpi_log_error("cannot find '%s' in PATH", name);
            return CRMPI_ERR_NOT_FOUND;
        }
        char resolved[PATH_MAX];
        if (realpath(candidate, resolved)) {
            snprintf(candidate, sizeof(candidate), "%s", resolved);
        }
    }
    if (stat(candidate, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        crmpi_log_error("cannot run '%s': not a regular file", name);
        return CRMPI_ERR_NOT_FOUND;
    }
    if (access(candidate, X_OK) < 0) {
        crmpi_log_error("cannot run '%s': %s", name, strerror(errno));
        return CRMPI_ERR_NOT_FOUND;
    }
    *path_out = strdup(candidate);
    return *path_out ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;
}

/* The -x settings that carry a value, as "NAME=value" ("-x VAR" alone forwards mpirun's
 * own value, which every agent on this node inherits anyway, and a launcher to other nodes
 * passes on by name); and the names of all of them. */
static int mpirun_env_build(const mpirun_options_t *opts, char ***env_out, char ***names_out)
{
    char **env = calloc(opts->num_env + 1, sizeof(*env));
    char **names = calloc(opts->num_env + 1, sizeof(*names));
    size_t count = 0;

    if (!env || !names) {
        free(env);
        free(names);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    for (size_t v = 0; v < opts->num_env; v++)
        names[v] = opts->env[v].name; /* borrowed from opts */
    *names_out = names;
    for (size_t v = 0; v < opts->num_env; v++) {
        const mpirun_env_var_t *var = &opts->env[v];

        if (!var->value)
            continue;
        if (asprintf(&env[count], "%s=%s", var->name, var->value) < 0) {
            env[count] = NULL;
            for (size_t i = 0; i < count; i++)
                free(env[i]);
            free(env);
            return CRMPI_ERR_OUT_OF_RESOURCE;
        }
        count++;
    }
    *env_out = env;
    return CRMPI_OK;
}

static void mpirun_hostname(char *buf, size_t len)
{
    if (gethostname(buf, len) < 0)
        snprintf(buf, len, "localhost");
    buf[len - 1] = '\0';
}

/*
 * The launcher: --launcher, else the plm parameter when it is set, else ompi when a host is
 * another node (local otherwise, plm_base.c's preference). Then the framework's selection,
 * which says in one line why a launcher cannot be used (Open MPI's mpirun missing).
 */
static int mpirun_launcher(mpirun_state_t *st, const mpirun_options_t *opts)
{
    crmpi_param_source_t source = CRMPI_PARAM_SOURCE_DEFAULT;
    char hostname[256];

    mpirun_hostname(hostname, sizeof(hostname));
    crmpi_param_lookup("plm", NULL, NULL, &source);
    if (opts->launcher == MPIRUN_LAUNCHER_LOCAL)
        crmpi_param_set_override("plm", "local");
    else if (opts->launcher == MPIRUN_LAUNCHER_OMPI)
        crmpi_param_set_override("plm", "ompi");
    else if (source == CRMPI_PARAM_SOURCE_DEFAULT && mpirun_map_names_remote(opts, hostname))
        crmpi_param_set_override("plm", "ompi");
    return crmpi_plm_base_open(&st->plm);
}

/* The rank count, each rank's node and CPUs, on this node's topology; --display-map and
 * --report-bindings say them. */
static int mpirun_map(mpirun_state_t *st, mpirun_options_t *opts)
{
    char err[512], hostname[256];
    hwloc_topology_t topo;
    int rc;

    mpirun_hostname(hostname, sizeof(hostname));
    if (hwloc_topology_init(&topo) < 0 || hwloc_topology_load(topo) < 0) {
        crmpi_log_error("hwloc cannot read this node's topology: %s", strerror(errno));
        return CRMPI_ERROR;
    }
    rc = mpirun_map_compute(opts, topo, hostname, st->plm->flags & CRMPI_PLM_FLAG_REMOTE, &st->map,
                            err, sizeof(err));
    if (rc != CRMPI_OK)
        crmpi_log_error("%s", err);
    if (rc == CRMPI_OK && opts->display_map)
        mpirun_map_display(&st->map, topo, st->job.jobid, stdout);
    for (int rank = 0; rc == CRMPI_OK && opts->report_bindings && rank < st->map.np; rank++) {
        const crmpi_plm_placement_t *place = &st->map.placement[rank];
        char binding[512];

        mpirun_map_binding_text(topo, place->cpuset, binding, sizeof(binding));
        if (*binding)
            fprintf(stderr, "[%s] MCW rank %d bound to %s\n", st->map.nodes[place->node_id], rank,
                    binding);
        else
            fprintf(stderr,
                    "[%s] MCW rank %d is not bound (or bound to all available "
                    "processors)\n",
                    st->map.nodes[place->node_id], rank);
    }
    hwloc_topology_destroy(topo);
    return rc;
}

/* Where the ranks run, "n1:2,n2:2" (node and ranks on it): for the snapshot's manifest and
 * for the tools (TOOL_STATUS). */
static void mpirun_hosts_text(mpirun_state_t *st)
{
    size_t len = 0;

    st->hosts[0] = '\0';
    for (uint32_t node = 0; node < st->map.num_nodes && len < sizeof(st->hosts); node++) {
        int ranks = 0;

        for (int rank = 0; rank < st->map.np; rank++)
            ranks += st->map.placement[rank].node_id == node;
        len += (size_t)snprintf(st->hosts + len, sizeof(st->hosts) - len, "%s%s:%d",
                                node ? "," : "", st->map.nodes[node], ranks);
    }
}

/* The job as the launcher will see it, and mpirun's side of each agent. */
static int mpirun_job_fill(mpirun_state_t *st, const mpirun_options_t *opts)
{
    crmpi_plm_job_t *job = &st->job;
    const int np = st->map.np;

    job->np = np;
    job->nodes = (const char *const *)st->map.nodes;
    job->num_nodes = st->map.num_nodes;
    job->placement = st->map.placement;
    job->membind = opts->bind_to == MPIRUN_BIND_TO_NUMA;
    job->program = st->program;
    job->args = opts->argv + 1;
    job->num_args = opts->argc - 1;
    job->env = st->env;
    job->env_names = st->env_names;
    job->restore = opts->restore;
    job->session_dir = st->session_dir;
    job->hnp_uri = st->hnp_uri;
    job->job_key = st->job_key;
    job->agents = calloc((size_t)np, sizeof(*job->agents));
    st->agents = calloc((size_t)np, sizeof(*st->agents));
    if (!job->agents || !st->agents)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (int rank = 0; rank < np; rank++)
        job->agents[rank] = (crmpi_plm_agent_t){.pid = 0, .out_fd = -1, .err_fd = -1, .ctl_fd = -1};
    return CRMPI_OK;
}

/* Everything before the session directory: parameters, hostfile, the snapshot to restore,
 * the program, the launcher, the map, the job's key. */
static int mpirun_prepare(mpirun_state_t *st, mpirun_options_t *opts)
{
    char err[512];
    int rc;

    for (size_t m = 0; m < opts->num_mca; m++)
        crmpi_param_set_override(opts->mca_names[m], opts->mca_values[m]);
    crmpi_param_warn_unknown("mpirun");
    /* Every rank would warn about an unknown component and run without it. */
    if ((rc = crmpi_catalog_check_selections()) != CRMPI_OK)
        return rc;
    if (opts->hostfile && mpirun_hostfile_read(opts, opts->hostfile, err, sizeof(err))) {
        crmpi_log_error("%s", err);
        return CRMPI_ERR_BAD_PARAM;
    }
    if (opts->restore && (rc = mpirun_restore_check(opts)) != CRMPI_OK)
        return rc;
    const char *app_restart = NULL;
    crmpi_param_get_string("snapc_base_app_restart", &app_restart);
    if (app_restart && *app_restart && !opts->restore &&
        (rc = mpirun_app_restart_check(opts, app_restart)) != CRMPI_OK)
        return rc;
    if ((rc = mpirun_resolve_program(opts->argv[0], &st->program)) != CRMPI_OK ||
        (rc = mpirun_launcher(st, opts)) != CRMPI_OK || (rc = mpirun_map(st, opts)) != CRMPI_OK ||
        (rc = mpirun_key_create(st)) != CRMPI_OK)
        return rc;
    mpirun_hosts_text(st);
    if (mpirun_env_build(opts, &st->env, &st->env_names) != CRMPI_OK ||
        mpirun_job_fill(st, opts) != CRMPI_OK)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    return mpirun_snapc_create(st);
}

static int mpirun_report_pid(const mpirun_options_t *opts, uint64_t jobid)
{
    if (opts->verbose) {
        crmpi_log_info("jobid %llu", (unsigned long long)jobid);
    }
    if (!opts->report_pid) {
        return CRMPI_OK;
    }
    if (strcmp(opts->report_pid, "-") == 0 || strcmp(opts->report_pid, "+") == 0) {
        FILE *out = opts->report_pid[0] == '-' ? stdout : stderr;
        fprintf(out, "jobid %llu\n", (unsigned long long)jobid);
        fflush(out);
        return CRMPI_OK;
    }
    FILE *file = fopen(opts->report_pid, "w");
    if (!file || fprintf(file, "%llu\n", (unsigned long long)jobid) < 0 || fclose(file) != 0) {
        crmpi_log_error("--report-pid: cannot write %s: %s", opts->report_pid, strerror(errno));
        return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

/*
 * Block the signals mpirun handles before any thread exists (the launcher may start one),
 * so that only the signalfd sees them. @return the signalfd, or -1
 */
static int mpirun_signals_block(void)
{
    sigset_t mask;

    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGCONT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* From the session directory to the end of the job: launch, run the event loop. */
static void mpirun_run(mpirun_state_t *st, mpirun_options_t *opts)
{
    int rc = mpirun_session_create(st);

    if (rc == CRMPI_OK)
        rc = mpirun_listen(st);
    if (rc == CRMPI_OK && (st->plm->flags & CRMPI_PLM_FLAG_REMOTE))
        rc = mpirun_listen_tcp(st);
    if (rc == CRMPI_OK)
        rc = st->plm->init(&st->job);
    if (rc == CRMPI_OK)
        rc = mpirun_report_pid(opts, st->job.jobid);
    if (rc != CRMPI_OK) {
        mpirun_fail(st, 1);
        return;
    }
    if (opts->timeout_s)
        mpirun_ts_after(&st->timeout_at, opts->timeout_s);
    if (opts->verbose)
        crmpi_log_info("starting %d ranks of %s on %u node%s through the %s launcher", st->map.np,
                       st->program, st->map.num_nodes, st->map.num_nodes == 1 ? "" : "s",
                       crmpi_plm_base_selected());
    if (st->plm->launch(&st->job) != CRMPI_OK) {
        mpirun_fail(st, 1);
        mpirun_teardown(st, SIGTERM);
    }
    /* Run the loop even after a partial launch, to reap what did start. */
    mpirun_event_loop(st);
}

static void mpirun_cleanup(mpirun_state_t *st)
{
    if (st->plm)
        st->plm->finalize(&st->job);
    for (int rank = 0; st->job.agents && rank < st->map.np; rank++) {
        if (st->job.agents[rank].ctl_fd >= 0)
            close(st->job.agents[rank].ctl_fd);
    }
    if (st->listen_fd >= 0)
        close(st->listen_fd);
    if (st->tcp_fd >= 0)
        close(st->tcp_fd);
    if (st->signal_fd >= 0)
        close(st->signal_fd);
    mpirun_session_remove(st);
    crmpi_plm_base_close();
    crmpi_snapc_global_destroy(st->snapc);
    mpirun_map_free(&st->map);
    free(st->job.agents);
    free(st->agents);
    for (char **entry = st->env; entry && *entry; entry++)
        free(*entry);
    free(st->env);
    free(st->env_names);
    free(st->program);
}

int main(int argc, char **argv)
{
    mpirun_state_t st;
    mpirun_options_t opts;
    char err[512];
    int rc;

    memset(&st, 0, sizeof(st));
    st.listen_fd = st.tcp_fd = st.signal_fd = -1;
    crmpi_log_set_who("mpirun");
    if (crmpi_catalog_register_all() != CRMPI_OK)
        return 1;
    if (mpirun_options_parse(argc, argv, &opts, err, sizeof(err)) != CRMPI_OK) {
        crmpi_log_error("%s", err);
        return 1;
    }
    if (opts.help || opts.version) {
        if (opts.help)
            fputs(mpirun_options_usage, stdout);
        else
            printf("mpirun (crmpi) %s\n", PACKAGE_VERSION);
        mpirun_options_free(&opts);
        return 0;
    }
    st.opts = &opts;
    st.job.jobid = (uint64_t)getpid();
    st.signal_fd = mpirun_signals_block();

    rc = mpirun_prepare(&st, &opts);
    if (rc == CRMPI_OK && st.signal_fd < 0) {
        crmpi_log_error("signalfd: %s", strerror(errno));
        rc = CRMPI_ERROR;
    }
    if (rc == CRMPI_OK)
        mpirun_run(&st, &opts);
    else
        mpirun_fail(&st, 1);
    mpirun_cleanup(&st);
    mpirun_options_free(&opts);
    crmpi_param_finalize();
    return st.failed ? st.exit_code : 0;
}
