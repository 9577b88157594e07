/*
 * plm_ompi.c: the ompi launch component (plm.h, plm_ompi.h): the agents started on the job's
 * hosts by Open MPI 4.1's mpirun (orterun) and its daemons (orted), each daemon its node's
 * PMIx server.
 *
 * Open MPI's mpirun is mpirun's only child, in a process group of its own (a terminal's
 * Ctrl-C reaches mpirun alone, which forwards it) and ended with it (PR_SET_PDEATHSIG). It
 * runs with
 *   --tag-output      to tell the agents' own lines from its words (plm_ompi_io.c)
 *   --bind-to none    each agent binds itself (--cpuset), as under the local component
 *   --oversubscribe   its slots do not matter: crmpi's mpirun mapped the ranks already
 *   --mca odls_base_max_threads 1
 *                     its daemons fork a node's processes from one thread (plm_ompi_command)
 *   --mca orte_launch_agent "CRMPI-ORTED orted"
 *                     its daemons start with SIGPIPE ignored (crmpi-orted, beside mpirun)
 *   -x NAME           for each variable the agents need (CRMPI_*, the job's -x): names on
 *                     its command line, values only in its environment (the job's key)
 * and one app context per rank, `-np 1 --host NODE`, in rank order. It exits once its
 * daemons have ended every agent: mpirun's event loop runs until its pipes close, so
 * nothing of the job is left on any node when mpirun exits.
 */
#include "config.h"

#include "plm_ompi.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "crmpi_status.h"
#include "ctl.h"
#include "log.h"
#include "param.h"
#include "plm_base.h"

/* plm_ompi_kill_grace when it cannot be read or is negative: Open MPI's daemons give their
 * processes a grace of their own before SIGKILL. */
#define PLM_OMPI_KILL_GRACE_DEFAULT_MS 5000

/* The variable in which Open MPI's daemons give each process a node-local directory of the
 * job, which they remove when the job ends (even after a SIGKILL of the process). */
#define PLM_OMPI_NODE_DIR_VAR "OMPI_FILE_LOCATION"

/* The words of a message naming the query's failure (crmpi_component_query_fn_t). */
static char plm_ompi_query_reason[512];

static int plm_ompi_mpirun_path(const char **path_out)
{
    const char *path = NULL;

    if (crmpi_param_get_string("plm_ompi_mpirun", &path) != CRMPI_OK || !path || !*path)
        path = CRMPI_OMPI_MPIRUN;
    *path_out = path;
    return *path && access(path, X_OK) == 0 ? CRMPI_OK : CRMPI_ERR_NOT_FOUND;
}

static int plm_ompi_query(const crmpi_component_t *component, int *priority_out,
                          const char **reason_out)
{
    const char *path;

    if (plm_ompi_mpirun_path(&path) != CRMPI_OK) {
        snprintf(plm_ompi_query_reason, sizeof(plm_ompi_query_reason),
                 "Open MPI's mpirun %s cannot be run: %s; install Open MPI 4.1 (Debian: "
                 "openmpi-bin) or set plm_ompi_mpirun",
                 *path ? path : "(none found by configure)",
                 *path ? strerror(errno) : "not installed");
        *reason_out = plm_ompi_query_reason;
        return CRMPI_ERR_NOT_FOUND;
    }
    /* Below local: chosen when the job names other hosts, or by the plm parameter. */
    *priority_out = -10;
    return CRMPI_OK;
}

static int plm_ompi_init(crmpi_plm_job_t *job)
{
    plm_ompi_state_t *state = calloc(1, sizeof(*state));
    const char *configured = NULL, *mpirun_path;
    char *wrapper;
    int rc;

    if (!state)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    state->out.fd = state->err.fd = -1;
    job->state = state;
    if (crmpi_param_get_int("plm_ompi_kill_grace", &job->kill_grace_ms) != CRMPI_OK ||
        job->kill_grace_ms < 0)
        job->kill_grace_ms = PLM_OMPI_KILL_GRACE_DEFAULT_MS;
    job->kill_grace_param = "plm_ompi_kill_grace";
    job->node_dir_var = PLM_OMPI_NODE_DIR_VAR;
    if (plm_ompi_mpirun_path(&mpirun_path) != CRMPI_OK) {
        crmpi_log_error("plm:ompi: Open MPI's mpirun %s cannot be run: %s (set plm_ompi_mpirun)",
                        mpirun_path, strerror(errno));
        return CRMPI_ERR_NOT_FOUND;
    }
    state->mpirun_path = strdup(mpirun_path);
    if (!state->mpirun_path)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    rc = plm_base_program_path("crmpi-orted", NULL, NULL, &wrapper);
    if (rc != CRMPI_OK)
        return rc;
    if (asprintf(&state->launch_agent, "%s orted", wrapper) < 0)
        state->launch_agent = NULL;
    free(wrapper);
    if (!state->launch_agent)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    crmpi_param_get_string("plm_ompi_agent", &configured);
    return plm_base_program_path("crmpi-agent", configured, "plm_ompi_agent", &state->agent_path);
}

/* A growable NULL-terminated argv whose strings are borrowed or owned by `owned`. */
typedef struct plm_ompi_argv {
    char **words; /* NULL-terminated */
    size_t count; /* words before the NULL */
    size_t cap;   /* allocated entries */
    char **owned; /* strings to free with the argv, NULL-terminated */
    size_t num_owned;
    bool failed; /* out of memory at some point */
} plm_ompi_argv_t;

static void plm_ompi_argv_add(plm_ompi_argv_t *argv, const char *word)
{
    if (argv->failed)
        return;
    if (argv->count + 2 > argv->cap) {
        size_t cap = argv->cap ? argv->cap * 2 : 64;
        char **grown = realloc(argv->words, cap * sizeof(*grown));

        if (!grown) {
            argv->failed = true;
            return;
        }
        argv->words = grown;
        argv->cap = cap;
    }
    argv->words[argv->count++] = (char *)word;
    argv->words[argv->count] = NULL;
}

/* Add a copy of `word` that the argv owns. */
static void plm_ompi_argv_add_copy(plm_ompi_argv_t *argv, const char *word, size_t len)
{
    char **grown = realloc(argv->owned, (argv->num_owned + 2) * sizeof(*grown));
    char *copy = strndup(word, len);

    if (grown)
        argv->owned = grown;
    if (!grown || !copy) {
        free(copy);
        argv->failed = true;
        return;
    }
    argv->owned[argv->num_owned++] = copy;
    argv->owned[argv->num_owned] = NULL;
    plm_ompi_argv_add(argv, copy);
}

static void plm_ompi_argv_free(plm_ompi_argv_t *argv)
{
    for (size_t i = 0; i < argv->num_owned; i++)
        free(argv->owned[i]);
    free(argv->owned);
    free(argv->words);
}

/* "-x NAME" for every variable the agents need on another node: crmpi's own (the facts,
 * the job's key, the --mca parameters as CRMPI_MCA_*) and the job's -x variables. */
static void plm_ompi_argv_forward(plm_ompi_argv_t *argv, const crmpi_plm_job_t *job, char **env)
{
    for (char **entry = env; *entry; entry++) {
        if (strncmp(*entry, "CRMPI_", 6) != 0)
            continue;
        plm_ompi_argv_add(argv, "-x");
        plm_ompi_argv_add_copy(argv, *entry, strcspn(*entry, "="));
    }
    for (char *const *name = job->env_names; name && *name; name++) {
        plm_ompi_argv_add(argv, "-x");
        plm_ompi_argv_add(argv, *name);
    }
}

/* The words of plm_ompi_args, separated by blanks. */
static void plm_ompi_argv_extra(plm_ompi_argv_t *argv)
{
    const char *extra = NULL;

    if (crmpi_param_get_string("plm_ompi_args", &extra) != CRMPI_OK || !extra)
        return;
    while (*extra) {
        size_t blanks = strspn(extra, " \t"), len;

        extra += blanks;
        len = strcspn(extra, " \t");
        if (len)
            plm_ompi_argv_add_copy(argv, extra, len);
        extra += len;
    }
}

/* Open MPI's mpirun's command line: its options, then one app context per rank. */
static int plm_ompi_command(const crmpi_plm_job_t *job, const plm_ompi_state_t *state, char **env,
                            plm_ompi_argv_t *argv)
{
    plm_ompi_argv_add(argv, state->mpirun_path);
    /* crmpi needs root (or its capabilities) for its namespaces; Open MPI refuses root
     * without this. */
    if (geteuid() == 0)
        plm_ompi_argv_add(argv, "--allow-run-as-root");
    plm_ompi_argv_add(argv, "--tag-output");
    plm_ompi_argv_add(argv, "--bind-to");
    plm_ompi_argv_add(argv, "none");
    plm_ompi_argv_add(argv, "--oversubscribe");
    /* Each daemon starts its node's processes from one thread. With more than
     * odls_base_cutoff (32) on a node, Open MPI 4.1's daemons fork them from several threads,
     * and a child forked while another thread held a lock of the rtc hwloc component hangs
     * on it before its exec (seen: 128 ranks on 4 nodes, a node short of 10 agents). */
    plm_ompi_argv_add(argv, "--mca");
    plm_ompi_argv_add(argv, "odls_base_max_threads");
    plm_ompi_argv_add(argv, "1");
    /* Each daemon starts with SIGPIPE ignored (crmpi-orted). A daemon that loses its mpirun
     * ends: its finalize removes its SIGPIPE handler and then writes towards the mpirun that
     * is gone; killed by SIGPIPE there, it would leave its job's directory on the node. */
    plm_ompi_argv_add(argv, "--mca");
    plm_ompi_argv_add(argv, "orte_launch_agent");
    plm_ompi_argv_add(argv, state->launch_agent);
    plm_ompi_argv_forward(argv, job, env);
    plm_ompi_argv_extra(argv);
    for (int rank = 0; rank < job->np; rank++) {
        char **agent_argv = NULL;

        if (plm_base_agent_argv(job, rank, state->agent_path, PLM_BASE_AGENT_OUTPUT_CTL,
                                &agent_argv) != CRMPI_OK)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        if (rank > 0)
            plm_ompi_argv_add(argv, ":");
        plm_ompi_argv_add(argv, "-np");
        plm_ompi_argv_add(argv, "1");
        plm_ompi_argv_add(argv, "--host");
        plm_ompi_argv_add(argv, job->nodes[job->placement[rank].node_id]);
        for (char **word = agent_argv; *word; word++)
            plm_ompi_argv_add(argv, *word);
        free(agent_argv);
    }
    return argv->failed ? CRMPI_ERR_OUT_OF_RESOURCE : CRMPI_OK;
}

static int plm_ompi_launch(crmpi_plm_job_t *job)
{
    plm_ompi_state_t *state = job->state;
    plm_ompi_argv_t argv = {0};
    char **env = NULL;
    pid_t pid;
    int rc;

    rc = plm_base_agent_env(job, NULL, &env);
    if (rc == CRMPI_OK)
        rc = plm_ompi_command(job, state, env, &argv);
    if (rc != CRMPI_OK) {
        crmpi_log_error("plm:ompi: out of memory preparing Open MPI's mpirun's command");
        goto out_free;
    }
    if (plm_base_verbose() >= 10) {
        for (size_t i = 0; i < argv.count; i++)
            fprintf(stderr, "%s%s", i ? " " : "plm:ompi: running ", argv.words[i]);
        fputc('\n', stderr);
    }
    rc = plm_base_spawn(state->mpirun_path, argv.words, env, &pid, &state->out.fd, &state->err.fd);
    if (rc != CRMPI_OK) {
        crmpi_log_error("plm:ompi: cannot start Open MPI's mpirun %s: %s", state->mpirun_path,
                        strerror(errno));
        goto out_free;
    }
    fcntl(state->out.fd, F_SETFL, O_NONBLOCK);
    fcntl(state->err.fd, F_SETFL, O_NONBLOCK);
    state->pid = pid;
    for (int rank = 0; rank < job->np; rank++)
        job->agents[rank].running = true;

out_free:
    plm_ompi_argv_free(&argv);
    plm_base_env_free(env);
    return rc;
}

/* End Open MPI's job: SIGTERM to its mpirun (which ends its processes through its
 * daemons), or SIGKILL when `force` and the SIGTERM is older than the grace period. */
static void plm_ompi_end_launcher(const crmpi_plm_job_t *job, plm_ompi_state_t *state, bool force)
{
    if (state->pid <= 0)
        return;
    if (!state->terminating) {
        state->terminating = true;
        state->terminate_at = crmpi_clock_s();
        kill(state->pid, SIGTERM);
    } else if (force &&
               crmpi_clock_s() - state->terminate_at >= (double)job->kill_grace_ms / 1000.0) {
        kill(state->pid, SIGKILL);
    }
}

static int plm_ompi_signal(crmpi_plm_job_t *job, int rank, int sig)
{
    plm_ompi_state_t *state = job->state;
    crmpi_plm_agent_t *agent = &job->agents[rank];

    state->job_ending = true;
    if (!agent->running)
        return CRMPI_ERR_NOT_FOUND;
    if (agent->ctl_fd >= 0) {
        crmpi_buf_t buf;

        crmpi_buf_init(&buf);
        crmpi_buf_put_i32(&buf, sig);
        if (!buf.failed)
            crmpi_ctl_send(agent->ctl_fd, CRMPI_CTL_AGENT_SIGNAL, 0, CRMPI_OK, buf.data, buf.len);
        crmpi_buf_free(&buf);
        if (sig != SIGKILL)
            return CRMPI_OK;
    }
    /* An agent that is not connected (yet), or one that must die now: through Open MPI. */
    plm_ompi_end_launcher(job, state, sig == SIGKILL);
    return CRMPI_OK;
}

/* Open MPI's mpirun failed on its own: one line, with its first words and the nodes whose
 * agents never connected. */
static void plm_ompi_explain(const crmpi_plm_job_t *job, const plm_ompi_state_t *state)
{
    char words[512], hosts[512], how[128];
    size_t len = 0;

    hosts[0] = '\0';
    for (uint32_t node = 0; node < job->num_nodes; node++) {
        bool missing = false;

        for (int rank = 0; rank < job->np && !missing; rank++)
            missing = job->placement[rank].node_id == node && job->agents[rank].running &&
                      job->agents[rank].ctl_fd < 0;
        if (missing && len < sizeof(hosts))
            len += (size_t)snprintf(hosts + len, sizeof(hosts) - len, "%s%s", len ? ", " : "",
                                    job->nodes[node]);
    }
    if (WIFSIGNALED(state->status))
        snprintf(how, sizeof(how), "was killed by signal %d", WTERMSIG(state->status));
    else
        snprintf(how, sizeof(how), "ended with exit status %d", WEXITSTATUS(state->status));
    /* An agent that failed said why itself, just above: Open MPI's words would only say that
     * a process failed. */
    if (state->agent_lines)
        snprintf(words, sizeof(words), "an agent failed (its message is above)");
    else
        plm_ompi_io_first_words(state, words, sizeof(words));
    crmpi_log_error("Open MPI's mpirun %s%s%s%s%s%s; nothing of the job is left running (its "
                    "whole message: --mca plm_base_verbose 10)",
                    how, *hosts ? " before the agents on " : "", hosts, *hosts ? " started" : "",
                    *words ? ": " : "", words);
}

static void plm_ompi_reap(crmpi_plm_job_t *job, crmpi_plm_gone_fn_t gone_fn, void *arg)
{
    plm_ompi_state_t *state = job->state;
    bool explained = false;
    int status;

    if (!state || state->pid <= 0 || waitpid(state->pid, &status, WNOHANG) != state->pid)
        return;
    state->pid = 0;
    state->reaped = true;
    state->status = status;
    /* What it wrote before it ended is in its pipes now: read it for the explanation. */
    plm_ompi_io_read(state, &state->out);
    plm_ompi_io_read(state, &state->err);
    if (!state->job_ending && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        plm_ompi_explain(job, state);
        explained = true;
    }
    /* Its daemons ended every process of its job: every agent is gone. */
    for (int rank = 0; rank < job->np; rank++) {
        if (!job->agents[rank].running)
            continue;
        job->agents[rank].running = false;
        gone_fn(arg, rank, status, explained);
    }
}

static int plm_ompi_poll_fds(crmpi_plm_job_t *job, struct pollfd *fds, int max)
{
    plm_ompi_state_t *state = job->state;
    int count = 0;

    if (!state)
        return 0;
    if (state->out.fd >= 0 && count < max)
        fds[count++] = (struct pollfd){.fd = state->out.fd, .events = POLLIN};
    if (state->err.fd >= 0 && count < max)
        fds[count++] = (struct pollfd){.fd = state->err.fd, .events = POLLIN};
    return count;
}

static void plm_ompi_poll_event(crmpi_plm_job_t *job, const struct pollfd *pfd)
{
    plm_ompi_state_t *state = job->state;

    if (pfd->fd == state->out.fd)
        plm_ompi_io_read(state, &state->out);
    else if (pfd->fd == state->err.fd)
        plm_ompi_io_read(state, &state->err);
}

/* Open MPI's mpirun still running after every agent is gone (or after a failed launch):
 * SIGTERM, the grace period, SIGKILL. */
static void plm_ompi_wait_launcher(crmpi_plm_job_t *job, plm_ompi_state_t *state)
{
    double deadline;
    int status;

    if (state->pid <= 0)
        return;
    plm_ompi_end_launcher(job, state, false);
    deadline = state->terminate_at + (double)job->kill_grace_ms / 1000.0;
    while (waitpid(state->pid, &status, WNOHANG) == 0) {
        if (crmpi_clock_s() >= deadline) {
            crmpi_log_warn("Open MPI's mpirun did not end within %s; killing it",
                           job->kill_grace_param);
            kill(state->pid, SIGKILL);
            waitpid(state->pid, &status, 0);
            break;
        }
        usleep(10000);
    }
    state->pid = 0;
}

static void plm_ompi_finalize(crmpi_plm_job_t *job)
{
    plm_ompi_state_t *state = job->state;

    if (!state)
        return;
    plm_ompi_wait_launcher(job, state);
    if (state->out.fd >= 0)
        close(state->out.fd);
    if (state->err.fd >= 0)
        close(state->err.fd);
    free(state->agent_path);
    free(state->launch_agent);
    free(state->mpirun_path);
    free(state);
    job->state = NULL;
}

static const crmpi_plm_ops_t plm_ompi_ops = {
    .flags = CRMPI_PLM_FLAG_REMOTE,
    .init = plm_ompi_init,
    .launch = plm_ompi_launch,
    .reap = plm_ompi_reap,
    .poll_fds = plm_ompi_poll_fds,
    .poll_event = plm_ompi_poll_event,
    .signal = plm_ompi_signal,
    .finalize = plm_ompi_finalize,
};

extern const crmpi_component_info_t crmpi_plm_ompi_info;

const crmpi_component_t plm_ompi_component = {
    .info = &crmpi_plm_ompi_info,
    .query = plm_ompi_query,
    .ops = &plm_ompi_ops,
};
