/*
 * test_mpi_env.c: the environment calls of libmpi in a singleton (a program started without
 * mpirun): initialisation and finalisation, thread queries, error classes and strings, error
 * handlers, MPI_Abort, and the messages of calls made outside MPI_Init .. MPI_Finalize.
 *
 * MPI can be initialised once per process, so the tests run in order, and those that end
 * the process (fatal errors, MPI_Abort, forbidden calls) run in a forked child whose exit
 * status and stderr are checked. Children use no cmocka assertion: one failing there would
 * go on running the remaining tests in the child.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mpi_internal.h"
#include "test_capture.h"

/* Exit status of a child whose body returned instead of ending the process. */
#define CHILD_RETURNED 99

/* Run `body` in a child with stderr captured; returns that text, sets its exit status. */
static char *child_run(void (*body)(void), int *exit_status_out)
{
    int status;
    char *text;

    /* Buffered output would otherwise be written twice, once by the child's exit path. */
    fflush(NULL);
    capture_begin();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        body();
        _exit(CHILD_RETURNED);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    text = capture_end();
    assert_true(WIFEXITED(status));
    *exit_status_out = WEXITSTATUS(status);
    return text;
}

static void expect_child(void (*body)(void), int exit_status, const char *message)
{
    int status;
    char *text = child_run(body, &status);

    if (strstr(text, message) == NULL || status != exit_status) {
        print_error("child exited with %d, wrote:\n%s", status, text);
    }
    assert_int_equal(status, exit_status);
    assert_non_null(strstr(text, message));
    free(text);
}

static int setup(void **state)
{
    (void)state;
    /* A singleton, judged only on the parameters a test sets. */
    unsetenv("CRMPI_CTL_FD");
    setenv("CRMPI_PARAM_FILE", "", 1);
    test_env_clear_mca();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    capture_abandon();
    return 0;
}

static void test_error_classes_complete(void **state)
{
    char text[MPI_MAX_ERROR_STRING];
    int len, errclass;

    (void)state;
    for (int code = MPI_SUCCESS; code <= MPI_ERR_LASTCODE; code++) {
        assert_non_null(crmpi_mpi_error_name(code));
        assert_non_null(crmpi_mpi_error_text(code));
        assert_int_equal(MPI_Error_string(code, text, &len), MPI_SUCCESS);
        assert_int_equal((int)strlen(text), len);
        assert_int_equal(strncmp(text, crmpi_mpi_error_name(code), strlen("MPI_")), 0);
        assert_int_equal(MPI_Error_class(code, &errclass), MPI_SUCCESS);
        assert_int_equal(errclass, code);
    }
    assert_int_equal(MPI_Error_string(MPI_ERR_COMM, text, &len), MPI_SUCCESS);
    assert_string_equal(text, "MPI_ERR_COMM: invalid communicator");
    assert_null(crmpi_mpi_error_name(-1));
    assert_null(crmpi_mpi_error_name(MPI_ERR_LASTCODE + 1));
}

static void test_before_init_allowed(void **state)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int flag = -1, major, minor, len;

    (void)state;
    assert_int_equal(MPI_Initialized(&flag), MPI_SUCCESS);
    assert_int_equal(flag, 0);
    assert_int_equal(MPI_Finalized(&flag), MPI_SUCCESS);
    assert_int_equal(flag, 0);
    assert_int_equal(MPI_Get_version(&major, &minor), MPI_SUCCESS);
    assert_int_equal(major, 3);
    assert_int_equal(minor, 1);
    assert_int_equal(MPI_Get_library_version(version, &len), MPI_SUCCESS);
    assert_int_equal((int)strlen(version), len);
    assert_non_null(strstr(version, "crmpi " PACKAGE_VERSION));

    double tick = MPI_Wtick();
    assert_true(tick > 0.0 && tick < 0.01);
    double before = MPI_Wtime();
    usleep(20000);
    double elapsed = MPI_Wtime() - before;
    assert_true(elapsed >= 0.019 && elapsed < 5.0);
}

static void body_comm_rank(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
}

static void test_before_init_forbidden(void **state)
{
    (void)state;
    expect_child(body_comm_rank, 1,
                 "MPI_Comm_rank was called before MPI_Init or MPI_Session_init;");
}

/* Rank 0 reports parameters set by the user, and names it does not know. */
static void body_init_show_params(void)
{
    setenv("CRMPI_MCA_mpi_show_mca_params", "yes", 1);
    setenv("CRMPI_MCA_mpi_no_such_parameter", "1", 1);
    MPI_Init(NULL, NULL);
    MPI_Finalize();
}

static void test_init_show_params(void **state)
{
    int status;
    char *text;

    (void)state;
    text = child_run(body_init_show_params, &status);
    assert_int_equal(status, CHILD_RETURNED);
    assert_non_null(strstr(text, "rank 0: mca parameter mpi_show_mca_params = \"yes\" "
                                 "(environment or mpirun --mca)"));
    assert_non_null(strstr(text, "mpi_no_such_parameter"));
    free(text);
}

static void test_init_singleton(void **state)
{
    char name[MPI_MAX_PROCESSOR_NAME], host[256];
    int provided = -1, rank = -1, size = -1, flag = -1, len;

    (void)state;
    assert_int_equal(MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE + 5, &provided), MPI_SUCCESS);
    assert_int_equal(provided, MPI_THREAD_MULTIPLE);
    assert_int_equal(MPI_Query_thread(&provided), MPI_SUCCESS);
    assert_int_equal(provided, MPI_THREAD_MULTIPLE);
    assert_int_equal(MPI_Initialized(&flag), MPI_SUCCESS);
    assert_int_equal(flag, 1);

    assert_int_equal(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_size(MPI_COMM_WORLD, &size), MPI_SUCCESS);
    assert_int_equal(rank, 0);
    assert_int_equal(size, 1);
    assert_int_equal(MPI_Comm_rank(MPI_COMM_SELF, &rank), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_size(MPI_COMM_SELF, &size), MPI_SUCCESS);
    assert_int_equal(rank, 0);
    assert_int_equal(size, 1);

    assert_int_equal(MPI_Get_processor_name(name, &len), MPI_SUCCESS);
    assert_int_equal(gethostname(host, sizeof(host)), 0);
    host[sizeof(host) - 1] = '\0';
    assert_string_equal(name, host);
    assert_int_equal((int)strlen(name), len);
}

static void *thread_is_main(void *flag_out)
{
    MPI_Is_thread_main(flag_out);
    return NULL;
}

static void test_thread_main(void **state)
{
    pthread_t thread;
    int flag = -1;

    (void)state;
    assert_int_equal(MPI_Is_thread_main(&flag), MPI_SUCCESS);
    assert_int_equal(flag, 1);
    assert_int_equal(pthread_create(&thread, NULL, thread_is_main, &flag), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(flag, 0);
}

/* What the user error handler below saw. */
static MPI_Comm user_handler_comm;
/* The code it was called with. */
static int user_handler_code;

static void user_handler(MPI_Comm *comm, int *errcode, ...)
{
    int size;

    user_handler_comm = *comm;
    user_handler_code = *errcode;
    /* Calling MPI from a handler must work: the library lock is not held. */
    MPI_Comm_size(*comm, &size);
}

static void test_errors_return_and_user_handler(void **state)
{
    struct crmpi_errhandler_s user = {
        .kind = CRMPI_ERRHANDLER_USER,
        .comm_fn = user_handler,
        .name = "test handler",
    };
    char text[MPI_MAX_ERROR_STRING];
    int rank, len, errclass;

    (void)state;
    crmpi_mpi_comm_world.comm.errhandler = MPI_ERRORS_RETURN;
    assert_int_equal(MPI_Comm_rank(MPI_COMM_NULL, &rank), MPI_ERR_COMM);
    assert_int_equal(MPI_Comm_size(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    assert_int_equal(MPI_Error_string(MPI_ERR_LASTCODE + 1, text, &len), MPI_ERR_ARG);
    assert_int_equal(MPI_Error_class(-3, &errclass), MPI_ERR_ARG);
    assert_int_equal(MPI_Initialized(NULL), MPI_ERR_ARG);
    /* Each error released the lock: the next call does not hang. */
    assert_int_equal(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_SUCCESS);

    crmpi_mpi_comm_self.comm.errhandler = &user;
    assert_int_equal(MPI_Comm_rank(MPI_COMM_SELF, NULL), MPI_ERR_ARG);
    assert_ptr_equal(user_handler_comm, MPI_COMM_SELF);
    assert_int_equal(user_handler_code, MPI_ERR_ARG);

    crmpi_mpi_comm_world.comm.errhandler = MPI_ERRORS_ARE_FATAL;
    crmpi_mpi_comm_self.comm.errhandler = MPI_ERRORS_ARE_FATAL;
}

static void body_invalid_comm(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_NULL, &rank);
}

static void body_abort(void)
{
    MPI_Abort(MPI_COMM_WORLD, 7);
}

static void body_init_twice(void)
{
    MPI_Init(NULL, NULL);
}

static void test_fatal_errors(void **state)
{
    (void)state;
    expect_child(body_invalid_comm, MPI_ERR_COMM,
                 "rank 0: error: MPI_Comm_rank: invalid communicator (MPI_ERR_COMM); the error "
                 "handler of MPI_COMM_WORLD is MPI_ERRORS_ARE_FATAL, so the job aborts");
    expect_child(body_abort, 7,
                 "rank 0: error: MPI_Abort was called on communicator MPI_COMM_WORLD");
    expect_child(body_init_twice, MPI_ERR_OTHER, "MPI_Init: MPI was already initialized");
}

static void test_finalize(void **state)
{
    int flag = -1;

    (void)state;
    assert_int_equal(MPI_Finalize(), MPI_SUCCESS);
    assert_int_equal(MPI_Finalized(&flag), MPI_SUCCESS);
    assert_int_equal(flag, 1);
    /* MPI_Initialized stays true after MPI_Finalize (MPI-3.1 section 8.7). */
    assert_int_equal(MPI_Initialized(&flag), MPI_SUCCESS);
    assert_int_equal(flag, 1);
    expect_child(body_comm_rank, 1, "rank 0: error: MPI_Comm_rank was called after MPI_Finalize;");
    expect_child(body_init_twice, MPI_ERR_OTHER, "MPI_Init: MPI was already finalized");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_error_classes_complete, teardown),
        cmocka_unit_test_teardown(test_before_init_allowed, teardown),
        cmocka_unit_test_teardown(test_before_init_forbidden, teardown),
        cmocka_unit_test_teardown(test_init_show_params, teardown),
        cmocka_unit_test_teardown(test_init_singleton, teardown),
        cmocka_unit_test_teardown(test_thread_main, teardown),
        cmocka_unit_test_teardown(test_errors_return_and_user_handler, teardown),
        cmocka_unit_test_teardown(test_fatal_errors, teardown),
        cmocka_unit_test_teardown(test_finalize, teardown),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
