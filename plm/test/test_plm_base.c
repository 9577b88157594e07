/*
 * test_plm_base.c: the plm framework's selection and what every component gives an agent
 * (plm_base.h): its command line and environment; the slots and flags of each component;
 * the ompi component's refusal without Open MPI; and the local component's signal slot on
 * a forked stand-in for an agent.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "component.h"
#include "crmpi_status.h"
#include "param.h"
#include "plm.h"
#include "plm_base.h"
#include "test_capture.h"

static const crmpi_plm_placement_t test_bound[] = {{.node_id = 0, .cpuset = "2-3"}};
static const crmpi_plm_placement_t test_unbound[] = {{.node_id = 0, .cpuset = NULL}};
static char *test_args[] = {"-n", "5"};

static crmpi_plm_job_t test_job(const crmpi_plm_placement_t *placement)
{
    return (crmpi_plm_job_t){
        .jobid = 4711,
        .np = 1,
        .placement = placement,
        .program = "/bin/app",
        .args = test_args,
        .num_args = 2,
        .session_dir = "/tmp/session",
        .hnp_uri = "unix:/tmp/session/hnp.sock",
        .job_key = "00ff",
    };
}

static int test_setup(void **state)
{
    test_env_clear_mca();
    crmpi_param_finalize();
    assert_int_equal(crmpi_catalog_register_all(), CRMPI_OK);
    return 0;
}

static int test_teardown(void **state)
{
    capture_abandon();
    crmpi_param_finalize();
    unsetenv("TEST_PLM_VAR");
    return 0;
}

static void test_argv_bound_restore(void **state)
{
    crmpi_plm_job_t job = test_job(test_bound);
    const char *expected[] = {
        "/opt/crmpi-agent", "--cpuset", "2-3", "--membind", "--restore", "/snap/3", "--",
        "/bin/app",         "-n",       "5",   NULL};
    char **argv;

    job.membind = true;
    job.restore = "/snap/3";
    assert_int_equal(plm_base_agent_argv(&job, 0, "/opt/crmpi-agent", 0, &argv), CRMPI_OK);
    for (size_t i = 0; expected[i]; i++)
        assert_string_equal(argv[i], expected[i]);
    assert_null(argv[sizeof(expected) / sizeof(expected[0]) - 1]);
    free(argv);
}

/* --membind means memory near the cpuset: without a cpuset the agent gets neither. */
static void test_argv_unbound(void **state)
{
    crmpi_plm_job_t job = test_job(test_unbound);
    const char *expected[] = {"agent", "--", "/bin/app", "-n", "5", NULL};
    char **argv;

    job.membind = true;
    assert_int_equal(plm_base_agent_argv(&job, 0, "agent", 0, &argv), CRMPI_OK);
    for (size_t i = 0; expected[i]; i++)
        assert_string_equal(argv[i], expected[i]);
    assert_null(argv[5]);
    free(argv);
}

/* An agent on another node sends its rank's output over the control connection. */
static void test_argv_output_ctl(void **state)
{
    crmpi_plm_job_t job = test_job(test_bound);
    const char *expected[] = {"agent", "--cpuset", "2-3",      "--restore", "/snap/3", "--output",
                              "ctl",   "--",       "/bin/app", "-n",        "5",       NULL};
    char **argv;

    job.restore = "/snap/3";
    assert_int_equal(plm_base_agent_argv(&job, 0, "agent", PLM_BASE_AGENT_OUTPUT_CTL, &argv),
                     CRMPI_OK);
    for (size_t i = 0; expected[i]; i++)
        assert_string_equal(argv[i], expected[i]);
    assert_null(argv[sizeof(expected) / sizeof(expected[0]) - 1]);
    free(argv);
}

static const char *test_env_get(char **env, const char *name)
{
    size_t len = strlen(name);
    const char *found = NULL;

    for (char **entry = env; *entry; entry++) {
        if (strncmp(*entry, name, len) == 0 && (*entry)[len] == '=') {
            assert_null(found); /* each name once */
            found = *entry + len + 1;
        }
    }
    return found;
}

/* Later sources win: mpirun's environment, --mca, the launcher's, -x; then mpirun's facts. */
static void test_env_precedence(void **state)
{
    crmpi_plm_job_t job = test_job(test_unbound);
    char *launcher_env[] = {"TEST_PLM_VAR=launcher", "PMIX_TEST=1", "CRMPI_JOBID=1", NULL};
    char *x_env[] = {"TEST_PLM_VAR=x", NULL};
    char **env;

    setenv("TEST_PLM_VAR", "mpirun", 1);
    assert_int_equal(crmpi_param_set_override("btl", "self,tcp"), CRMPI_OK);
    assert_int_equal(plm_base_agent_env(&job, launcher_env, &env), CRMPI_OK);
    assert_string_equal(test_env_get(env, "TEST_PLM_VAR"), "launcher");
    assert_string_equal(test_env_get(env, "PMIX_TEST"), "1");
    assert_string_equal(test_env_get(env, "CRMPI_MCA_btl"), "self,tcp");
    assert_string_equal(test_env_get(env, "CRMPI_JOBID"), "4711");
    assert_string_equal(test_env_get(env, "CRMPI_HNP_URI"), "unix:/tmp/session/hnp.sock");
    assert_string_equal(test_env_get(env, "CRMPI_SESSION_DIR"), "/tmp/session");
    assert_string_equal(test_env_get(env, "CRMPI_JOB_KEY"), "00ff");
    assert_string_equal(test_env_get(env, "CRMPI_SESSION_DIR_VAR"), "");
    plm_base_env_free(env);

    job.env = x_env;
    job.node_dir_var = "OMPI_FILE_LOCATION";
    unsetenv("TEST_PLM_VAR");
    assert_int_equal(plm_base_agent_env(&job, launcher_env, &env), CRMPI_OK);
    assert_string_equal(test_env_get(env, "TEST_PLM_VAR"), "x");
    assert_string_equal(test_env_get(env, "CRMPI_SESSION_DIR_VAR"), "OMPI_FILE_LOCATION");
    plm_base_env_free(env);
}

/* Every slot is there after open (the optional ones defaulted), and a component's flags
 * match its slots: one whose agents run elsewhere watches its launcher's descriptors. */
static void test_ops_complete(const crmpi_plm_ops_t *ops)
{
    struct pollfd fds[4];
    crmpi_plm_job_t job = test_job(test_unbound);

    assert_non_null(ops);
    assert_non_null(ops->init);
    assert_non_null(ops->launch);
    assert_non_null(ops->reap);
    assert_non_null(ops->poll_fds);
    assert_non_null(ops->poll_event);
    assert_non_null(ops->signal);
    assert_non_null(ops->finalize);
    /* Before init, no component has descriptors to watch. */
    assert_int_equal(ops->poll_fds(&job, fds, 4), 0);
}

static void test_open_selects_local(void **state)
{
    const crmpi_plm_ops_t *ops = NULL;

    assert_int_equal(crmpi_plm_base_open(&ops), CRMPI_OK);
    test_ops_complete(ops);
    assert_string_equal(crmpi_plm_base_selected(), "local");
    assert_int_equal(ops->flags & CRMPI_PLM_FLAG_REMOTE, 0);
    crmpi_plm_base_close();
    assert_null(crmpi_plm_base_selected());
}

/* plm=ompi with an Open MPI mpirun that runs: selected, remote. */
static void test_open_selects_ompi(void **state)
{
    const crmpi_plm_ops_t *ops = NULL;

    assert_int_equal(crmpi_param_set_override("plm", "ompi"), CRMPI_OK);
    assert_int_equal(crmpi_param_set_override("plm_ompi_mpirun", "/bin/true"), CRMPI_OK);
    assert_int_equal(crmpi_plm_base_open(&ops), CRMPI_OK);
    test_ops_complete(ops);
    assert_string_equal(crmpi_plm_base_selected(), "ompi");
    assert_int_equal(ops->flags & CRMPI_PLM_FLAG_REMOTE, CRMPI_PLM_FLAG_REMOTE);
    crmpi_plm_base_close();
}

/* Open MPI's mpirun missing: one error that says which and what to set. */
static void test_open_ompi_missing(void **state)
{
    const crmpi_plm_ops_t *ops = NULL;
    char *text;

    assert_int_equal(crmpi_param_set_override("plm", "ompi"), CRMPI_OK);
    assert_int_equal(crmpi_param_set_override("plm_ompi_mpirun", "/nonexistent/mpirun"), CRMPI_OK);
    capture_begin();
    assert_int_equal(crmpi_plm_base_open(&ops), CRMPI_ERR_NOT_FOUND);
    text = capture_end();
    assert_null(ops);
    assert_non_null(strstr(text, "/nonexistent/mpirun"));
    assert_non_null(strstr(text, "plm_ompi_mpirun"));
    assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1); /* one line */
    free(text);
    crmpi_plm_base_close();
}

static void test_open_none_allowed(void **state)
{
    const crmpi_plm_ops_t *ops = NULL;
    char *text;

    assert_int_equal(crmpi_param_set_override("plm", "^local,ompi"), CRMPI_OK);
    capture_begin();
    assert_int_equal(crmpi_plm_base_open(&ops), CRMPI_ERR_NOT_FOUND);
    text = capture_end();
    assert_null(ops);
    assert_non_null(strstr(text, "local"));
    free(text);
    crmpi_plm_base_close();
}

/* The local component's signal: SIGKILL ends the agent; no agent, no signal. */
static void test_local_signal(void **state)
{
    const crmpi_plm_ops_t *ops = NULL;
    crmpi_plm_agent_t agent = {.pid = 0, .out_fd = -1, .err_fd = -1, .ctl_fd = -1};
    crmpi_plm_job_t job = test_job(test_unbound);
    int status;
    pid_t child;

    job.agents = &agent;
    assert_int_equal(crmpi_plm_base_open(&ops), CRMPI_OK);
    assert_int_equal(ops->signal(&job, 0, SIGTERM), CRMPI_ERR_NOT_FOUND);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        setpgid(0, 0);
        pause();
        _exit(0);
    }
    agent.pid = child;
    assert_int_equal(ops->signal(&job, 0, SIGKILL), CRMPI_OK);
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
    crmpi_plm_base_close();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_argv_bound_restore, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_argv_unbound, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_argv_output_ctl, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_env_precedence, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_open_selects_local, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_open_selects_ompi, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_open_ompi_missing, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_open_none_allowed, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_local_signal, test_setup, test_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
