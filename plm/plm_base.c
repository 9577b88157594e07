/*
 * plm_base.c: the plm framework's selection (plm.h) and what its components share
 * (plm_base.h): the agent's program, command line and environment.
 */
#include "config.h"

#include "plm_base.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"
#include "param.h"
#include "plm_local.h"
#include "plm_ompi.h"

extern char **environ;

/* Components linked into mpirun, in preference order: local wins unless the job names
 * other hosts (mpirun then asks for ompi) or the plm parameter says otherwise. */
static const crmpi_component_t *const plm_base_components[] = {&plm_local_component,
                                                               &plm_ompi_component, NULL};

static crmpi_framework_t plm_base_framework = {
    .info = &crmpi_plm_framework_info,
    .components = plm_base_components,
};

/* The selected component's slots, the optional ones defaulted. */
static crmpi_plm_ops_t plm_base_ops;
static const char *plm_base_selected_name;

static int plm_base_no_fds(crmpi_plm_job_t *job, struct pollfd *fds, int max)
{
    return 0;
}

static void plm_base_no_event(crmpi_plm_job_t *job, const struct pollfd *pfd)
{
}

int crmpi_plm_base_open(const crmpi_plm_ops_t **ops_out)
{
    const crmpi_component_t *selected;
    int rc = crmpi_framework_open(&plm_base_framework);

    if (rc != CRMPI_OK)
        return rc;
    rc = crmpi_framework_select_one(&plm_base_framework, &selected);
    if (rc != CRMPI_OK) {
        crmpi_framework_close(&plm_base_framework);
        return rc;
    }
    crmpi_fw_verbose(&plm_base_framework, 10, "selected component %s", selected->info->name);
    plm_base_ops = *(const crmpi_plm_ops_t *)selected->ops;
    if (!plm_base_ops.poll_fds)
        plm_base_ops.poll_fds = plm_base_no_fds;
    if (!plm_base_ops.poll_event)
        plm_base_ops.poll_event = plm_base_no_event;
    plm_base_selected_name = selected->info->name;
    *ops_out = &plm_base_ops;
    return CRMPI_OK;
}

void crmpi_plm_base_close(void)
{
    if (plm_base_framework.is_open)
        crmpi_framework_close(&plm_base_framework);
    plm_base_selected_name = NULL;
}

const char *crmpi_plm_base_selected(void)
{
    return plm_base_selected_name;
}

int plm_base_verbose(void)
{
    return plm_base_framework.verbose;
}

int plm_base_program_path(const char *name, const char *configured, const char *param_name,
                          char **path_out)
{
    char self[PATH_MAX], path[PATH_MAX];

    if (configured && *configured) {
        snprintf(path, sizeof(path), "%s", configured);
    } else {
        ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
        char *slash;

        if (len < 0) {
            crmpi_log_error("plm: cannot find mpirun's own path: %s", strerror(errno));
            return CRMPI_ERR_NOT_FOUND;
        }
        self[len] = '\0';
        slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", self, name) >= sizeof(path)) {
            crmpi_log_error("plm: mpirun's directory %s is too long", self);
            return CRMPI_ERR_NOT_FOUND;
        }
    }
    if (access(path, X_OK) < 0) {
        if (param_name)
            crmpi_log_error("cannot run %s: %s (set %s)", path, strerror(errno), param_name);
        else
            crmpi_log_error("cannot run %s: %s (crmpi's installation is incomplete)", path,
                            strerror(errno));
        return CRMPI_ERR_NOT_FOUND;
    }
    *path_out = strdup(path);
    return *path_out ? CRMPI_OK : CRMPI_ERR_OUT_OF_RESOURCE;
}

/* The agent's own options before "--": at most --cpuset LIST --membind --restore DIR
 * --output ctl. */
#define PLM_BASE_AGENT_OPTIONS 7

int plm_base_agent_argv(const crmpi_plm_job_t *job, int rank, const char *agent_path,
                        unsigned flags, char ***argv_out)
{
    const char *cpuset = job->placement[rank].cpuset;
    /* agent, options, "--", program, its arguments, NULL */
    size_t cap = 1 + PLM_BASE_AGENT_OPTIONS + 2 + (size_t)job->num_args + 1;
    char **argv = calloc(cap, sizeof(*argv));
    size_t argc = 0;

    if (!argv)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    argv[argc++] = (char *)agent_path;
    if (cpuset) {
        argv[argc++] = "--cpuset";
        argv[argc++] = (char *)cpuset;
        if (job->membind)
            argv[argc++] = "--membind";
    }
    if (job->restore) {
        argv[argc++] = "--restore";
        argv[argc++] = (char *)job->restore;
    }
    if (flags & PLM_BASE_AGENT_OUTPUT_CTL) {
        argv[argc++] = "--output";
        argv[argc++] = "ctl";
    }
    argv[argc++] = "--";
    argv[argc++] = (char *)job->program;
    for (int a = 0; a < job->num_args; a++)
        argv[argc++] = job->args[a];
    argv[argc] = NULL;
    *argv_out = argv;
    return CRMPI_OK;
}

void plm_base_env_free(char **env)
{
    for (char **entry = env; entry && *entry; entry++)
        free(*entry);
    free(env);
}

/* Put "NAME=value" (owned by env afterwards) into env[0..*count), replacing an entry of
 * the same name: later sources win. */
static void plm_base_env_set(char **env, size_t *count, char *entry)
{
    size_t name_len = strcspn(entry, "=") + 1;

    for (size_t i = 0; i < *count; i++) {
        if (strncmp(env[i], entry, name_len) == 0) {
            free(env[i]);
            env[i] = entry;
            return;
        }
    }
    env[(*count)++] = entry;
}

static size_t plm_base_env_count(char *const *env)
{
    size_t count = 0;

    while (env && env[count])
        count++;
    return count;
}

/* The variables plm_base_agent_env sets last (CRMPI_HNP_URI ... CRMPI_SESSION_DIR_VAR). */
#define PLM_BASE_FACTS 5

int plm_base_agent_env(const crmpi_plm_job_t *job, char *const *launcher_env, char ***env_out)
{
    char **overrides = crmpi_param_overrides_as_env();
    char *const *sources[] = {environ, overrides, launcher_env, job->env};
    char *facts[PLM_BASE_FACTS] = {NULL};
    size_t cap = PLM_BASE_FACTS + 1, count = 0;
    char **env;
    int failed = 0;

    for (size_t s = 0; s < sizeof(sources) / sizeof(sources[0]); s++)
        cap += plm_base_env_count(sources[s]);
    env = calloc(cap, sizeof(*env));
    if (!env) {
        crmpi_param_free_env(overrides);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    for (size_t s = 0; s < sizeof(sources) / sizeof(sources[0]); s++) {
        for (char *const *entry = sources[s]; entry && *entry; entry++) {
            char *copy = strdup(*entry);

            failed |= !copy;
            if (copy)
                plm_base_env_set(env, &count, copy);
        }
    }
    /* How an agent finds mpirun and proves it belongs to the job, its job, and its
     * node-local scratch directory (mpirun's on this node, or the launcher's). */
    if (asprintf(&facts[0], "CRMPI_HNP_URI=%s", job->hnp_uri) < 0 ||
        asprintf(&facts[1], "CRMPI_JOBID=%llu", (unsigned long long)job->jobid) < 0 ||
        asprintf(&facts[2], "CRMPI_SESSION_DIR=%s", job->session_dir) < 0 ||
        asprintf(&facts[3], "CRMPI_JOB_KEY=%s", job->job_key ? job->job_key : "") < 0 ||
        asprintf(&facts[4], "CRMPI_SESSION_DIR_VAR=%s",
                 job->node_dir_var ? job->node_dir_var : "") < 0)
        failed = 1;
    for (size_t f = 0; f < PLM_BASE_FACTS; f++)
        if (facts[f])
            plm_base_env_set(env, &count, facts[f]);
    crmpi_param_free_env(overrides);
    if (failed) {
        plm_base_env_free(env);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    *env_out = env;
    return CRMPI_OK;
}

/* The child's side of the fork: only async-signal-safe calls from here to exec (mpirun
 * has threads: the PMIx server's). */
static void plm_base_exec(const char *path, int out_fd, int err_fd, char **argv, char **env)
{
    static const char msg[] = "mpirun: cannot start ";
    int null_fd = open("/dev/null", O_RDONLY);
    sigset_t none;
    ssize_t ignored;

    if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        _exit(127);
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    /* mpirun died between the fork and the prctl: nobody would end this child. */
    if (getppid() == 1)
        _exit(127);
    /* mpirun blocks the signals it reads through its signalfd; the child must not. */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(path, argv, env);
    ignored = write(2, msg, sizeof(msg) - 1);
    ignored = write(2, path, strlen(path));
    ignored = write(2, "\n", 1);
    (void)ignored;
    _exit(127);
}

int plm_base_spawn(const char *path, char **argv, char **env, pid_t *pid_out, int *out_fd_out,
                   int *err_fd_out)
{
    int out_pipe[2], err_pipe[2], saved;
    pid_t pid;

    if (pipe2(out_pipe, O_CLOEXEC) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    if (pipe2(err_pipe, O_CLOEXEC) < 0)
        goto err_close_out;
    pid = fork();
    if (pid < 0)
        goto err_close_err;
    if (pid == 0)
        plm_base_exec(path, out_pipe[1], err_pipe[1], argv, env);
    close(out_pipe[1]);
    close(err_pipe[1]);
    *pid_out = pid;
    *out_fd_out = out_pipe[0];
    *err_fd_out = err_pipe[0];
    return CRMPI_OK;

err_close_err:
    saved = errno;
    close(err_pipe[0]);
    close(err_pipe[1]);
    errno = saved;
err_close_out:
    saved = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    errno = saved;
    return CRMPI_ERR_OUT_OF_RESOURCE;
}
