/*
 * test_options.c: mpirun's command line, good and bad (mpirun_options.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include <cmocka.h>

#include "crmpi_status.h"
#include "mpirun_options.h"

/* Parse a NULL-terminated list of words given after "mpirun". */
static int parse(mpirun_options_t *opts, char *err, size_t err_len, ...)
{
    static char *argv[64];
    int argc = 0;
    va_list ap;
    argv[argc++] = "mpirun";
    va_start(ap, err_len);
    for (char *word; (word = va_arg(ap, char *));) {
        argv[argc++] = word;
    }
    va_end(ap);
    argv[argc] = NULL;
    err[0] = '\0';
    return mpirun_options_parse(argc, argv, opts, err, err_len);
}

static void test_np_and_program(void **state)
{
    mpirun_options_t opts;
    char err[256];
    assert_int_equal(parse(&opts, err, sizeof(err), "-np", "4", "./a.out", "-np", "9", NULL),
                     CRMPI_OK);
    assert_int_equal(opts.np, 4);
    assert_int_equal(opts.argc, 3);
    assert_string_equal(opts.argv[0], "./a.out");
    /* Options after the program belong to the program. */
    assert_string_equal(opts.argv[1], "-np");
    mpirun_options_free(&opts);

    assert_int_equal(parse(&opts, err, sizeof(err), "-n", "2", "prog", NULL), CRMPI_OK);
    assert_int_equal(opts.np, 2);
    mpirun_options_free(&opts);

    assert_int_equal(parse(&opts, err, sizeof(err), "--np=3", "prog", NULL), CRMPI_OK);
    assert_int_equal(opts.np, 3);
    mpirun_options_free(&opts);
}

static void test_bad_np(void **state)
{
    mpirun_options_t opts;
    char err[256];
    const char *bad[] = {"0", "-1", "abc", "4x", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(&opts, err, sizeof(err), "-np", bad[i], "prog", NULL),
                         CRMPI_ERR_BAD_PARAM);
        assert_non_null(strstr(err, "-np"));
    }
    assert_int_equal(parse(&opts, err, sizeof(err), "-np", NULL), CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "missing value"));
}

static void test_unknown_option_and_no_program(void **state)
{
    mpirun_options_t opts;
    char err[256];
    assert_int_equal(parse(&opts, err, sizeof(err), "--frobnicate", "prog", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "unknown option '--frobnicate'"));
    assert_int_equal(parse(&opts, err, sizeof(err), "-np", "2", NULL), CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "no program"));
    /* --help needs no program. */
    assert_int_equal(parse(&opts, err, sizeof(err), "--help", NULL), CRMPI_OK);
    assert_true(opts.help);
    mpirun_options_free(&opts);
}

static void test_hosts(void **state)
{
    mpirun_options_t opts;
    char err[256];
    assert_int_equal(parse(&opts, err, sizeof(err), "--host", "a,b:2", "-H", "c:1", "p", NULL),
                     CRMPI_OK);
    assert_int_equal(opts.num_hosts, 3);
    assert_string_equal(opts.hosts[0].name, "a");
    assert_int_equal(opts.hosts[0].slots, 0);
    assert_string_equal(opts.hosts[1].name, "b");
    assert_int_equal(opts.hosts[1].slots, 2);
    assert_string_equal(opts.hosts[2].name, "c");
    mpirun_options_free(&opts);

    assert_int_equal(parse(&opts, err, sizeof(err), "--host", "a,,b", "p", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_int_equal(parse(&opts, err, sizeof(err), "--host", "a:0", "p", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_int_equal(parse(&opts, err, sizeof(err), "--host", "a:", "p", NULL),
                     CRMPI_ERR_BAD_PARAM);
}

static void test_hostfile(void **state)
{
    mpirun_options_t opts;
    char err[256], path[] = "/tmp/crmpi-test-hostfile-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "# nodes\nnode1 slots=2\n\n  node2   # one slot\nnode3 max_slots=4\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(parse(&opts, err, sizeof(err), "--hostfile", path, "p", NULL), CRMPI_OK);
    assert_string_equal(opts.hostfile, path);
    assert_int_equal(mpirun_hostfile_read(&opts, path, err, sizeof(err)), CRMPI_OK);
    assert_int_equal(opts.num_hosts, 3);
    assert_int_equal(opts.hosts[0].slots, 2);
    assert_string_equal(opts.hosts[1].name, "node2");
    assert_int_equal(opts.hosts[1].slots, 0);
    assert_int_equal(opts.hosts[2].slots, 4);

    fd = open(path, O_WRONLY | O_TRUNC);
    text = "node1 slots=two\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(mpirun_hostfile_read(&opts, path, err, sizeof(err)), CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, ":1:"));
    unlink(path);
    assert_int_equal(mpirun_hostfile_read(&opts, path, err, sizeof(err)), CRMPI_ERR_NOT_FOUND);
    mpirun_options_free(&opts);
}

static void test_map_bind(void **state)
{
    mpirun_options_t opts;
    char err[256];
    assert_int_equal(
        parse(&opts, err, sizeof(err), "--map-by", "socket", "--bind-to", "core", "p", NULL),
        CRMPI_OK);
    assert_int_equal(opts.map_by, MPIRUN_MAP_BY_SOCKET);
    assert_int_equal(opts.bind_to, MPIRUN_BIND_TO_CORE);
    mpirun_options_free(&opts);
    assert_int_equal(parse(&opts, err, sizeof(err), "--bind-to", "hwthread-ish", "p", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "--bind-to"));
    assert_int_equal(parse(&opts, err, sizeof(err), "--map-by", "ppr", "p", NULL),
                     CRMPI_ERR_BAD_PARAM);
}

/* The spellings of Open MPI for multi-node jobs. */
static void test_multinode_options(void **state)
{
    mpirun_options_t opts;
    char err[256], text[64];

    assert_int_equal(parse(&opts, err, sizeof(err), "-N", "2", "--bind-to", "hwthread",
                           "--report-bindings", "--display-map", "--allow-run-as-root",
                           "--launcher", "ompi", "p", NULL),
                     CRMPI_OK);
    assert_int_equal(opts.map_by, MPIRUN_MAP_BY_PPR);
    assert_int_equal(opts.ppr_count, 2);
    assert_int_equal(opts.ppr_object, MPIRUN_PPR_NODE);
    assert_string_equal(mpirun_options_map_by_text(&opts, text, sizeof(text)), "ppr:2:node");
    assert_int_equal(opts.bind_to, MPIRUN_BIND_TO_HWTHREAD);
    assert_string_equal(mpirun_options_bind_to_text(opts.bind_to), "hwthread");
    assert_true(opts.report_bindings && opts.display_map);
    assert_int_equal(opts.launcher, MPIRUN_LAUNCHER_OMPI);
    mpirun_options_free(&opts);

    assert_int_equal(parse(&opts, err, sizeof(err), "--map-by", "ppr:3:socket", "-np", "6",
                           "--launcher=local", "p", NULL),
                     CRMPI_OK);
    assert_int_equal(opts.map_by, MPIRUN_MAP_BY_PPR);
    assert_int_equal(opts.ppr_count, 3);
    assert_int_equal(opts.ppr_object, MPIRUN_PPR_SOCKET);
    assert_int_equal(opts.launcher, MPIRUN_LAUNCHER_LOCAL);
    mpirun_options_free(&opts);

    /* A later --map-by replaces -N, as in Open MPI. */
    assert_int_equal(parse(&opts, err, sizeof(err), "-N", "2", "--map-by", "node", "p", NULL),
                     CRMPI_OK);
    assert_int_equal(opts.map_by, MPIRUN_MAP_BY_NODE);
    mpirun_options_free(&opts);

    assert_int_equal(parse(&opts, err, sizeof(err), "--map-by", "ppr:0:node", "p", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "not a positive number"));
    assert_int_equal(parse(&opts, err, sizeof(err), "--map-by", "ppr:2:board", "p", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "unknown object 'board'"));
    assert_int_equal(parse(&opts, err, sizeof(err), "-N", "x", "p", NULL), CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "-N"));
    assert_int_equal(parse(&opts, err, sizeof(err), "--launcher", "slurm", "p", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "local or ompi"));
}

/* --restore names the sequence to restore and implies --with-ft cr. */
static void test_restore(void **state)
{
    mpirun_options_t opts;
    char err[256];

    (void)state;
    assert_int_equal(parse(&opts, err, sizeof(err), "--restore", "/snap/4711.ckpt/2", "p", NULL),
                     CRMPI_OK);
    assert_string_equal(opts.restore, "/snap/4711.ckpt/2");
    assert_true(opts.with_ft_cr);
    mpirun_options_free(&opts);
    assert_int_equal(parse(&opts, err, sizeof(err), "--restore", NULL), CRMPI_ERR_BAD_PARAM);
}

static void test_env_mca_and_flags(void **state)
{
    mpirun_options_t opts;
    char err[256];
    assert_int_equal(parse(&opts, err, sizeof(err), "-x", "A=1", "-x", "PATH", "--mca", "btl",
                           "self,sm", "--tag-output", "--with-ft", "cr", "--timeout", "30",
                           "--report-pid", "-", "-v", "-v", "p", NULL),
                     CRMPI_OK);
    assert_int_equal(opts.num_env, 2);
    assert_string_equal(opts.env[0].name, "A");
    assert_string_equal(opts.env[0].value, "1");
    assert_null(opts.env[1].value);
    assert_int_equal(opts.num_mca, 1);
    assert_string_equal(opts.mca_names[0], "btl");
    assert_string_equal(opts.mca_values[0], "self,sm");
    assert_true(opts.tag_output);
    assert_true(opts.with_ft_cr);
    assert_int_equal(opts.timeout_s, 30);
    assert_string_equal(opts.report_pid, "-");
    assert_int_equal(opts.verbose, 2);
    mpirun_options_free(&opts);

    assert_int_equal(parse(&opts, err, sizeof(err), "--mca", "btl", NULL), CRMPI_ERR_BAD_PARAM);
    assert_int_equal(parse(&opts, err, sizeof(err), "--with-ft", "magic", "p", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_int_equal(parse(&opts, err, sizeof(err), "--timeout", "0", "p", NULL),
                     CRMPI_ERR_BAD_PARAM);
    assert_int_equal(parse(&opts, err, sizeof(err), "-x", "=1", "p", NULL), CRMPI_ERR_BAD_PARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_np_and_program),
        cmocka_unit_test(test_restore),
        cmocka_unit_test(test_bad_np),
        cmocka_unit_test(test_unknown_option_and_no_program),
        cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_hostfile),
        cmocka_unit_test(test_map_bind),
        cmocka_unit_test(test_multinode_options),
        cmocka_unit_test(test_env_mca_and_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
