/*
 * test_param.c: the MCA parameter system (runtime/param.h).
 *
 * Every test starts from an empty registry, no CRMPI_MCA_* variable and the parameter file
 * disabled (CRMPI_PARAM_FILE=""), declares test_decls, and undoes all of that afterwards,
 * so that the developer's own environment and ~/.crmpi cannot change the outcome.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "param.h"
#include "test_capture.h"

static const crmpi_param_decl_t test_decls[] = {
    {"test_int", CRMPI_PARAM_INT, "42", "An integer.", CRMPI_PARAM_LEVEL_USER},
    {"test_bool", CRMPI_PARAM_BOOL, "false", "A boolean.", CRMPI_PARAM_LEVEL_USER},
    {"test_string", CRMPI_PARAM_STRING, "dflt", "A string.", CRMPI_PARAM_LEVEL_TUNER},
    {"test_size", CRMPI_PARAM_SIZE, "4k", "A size.", CRMPI_PARAM_LEVEL_DEV},
    {"test_empty", CRMPI_PARAM_STRING, "", "Empty by default.", CRMPI_PARAM_LEVEL_DEV},
};
#define TEST_NUM_DECLS (sizeof(test_decls) / sizeof(test_decls[0]))

/* ---- environment, files and stderr --------------------------------------------------- */

/* Forget every cached value and declare the test table again (the env or file changed). */
static void test_reload(void)
{
    crmpi_param_finalize();
    assert_int_equal(crmpi_param_register(test_decls, TEST_NUM_DECLS), CRMPI_OK);
}

/* Write `text` to a new temporary file; the caller unlinks the returned path and frees it. */
static char *test_file_write(const char *text)
{
    char *path = test_tmp_name("crmpi-test-param-XXXXXX");
    int fd;

    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static int test_setup(void **state)
{
    crmpi_param_finalize();
    test_env_clear_mca();
    setenv("CRMPI_PARAM_FILE", "", 1);
    assert_int_equal(crmpi_param_register(test_decls, TEST_NUM_DECLS), CRMPI_OK);
    return 0;
}

static int test_teardown(void **state)
{
    capture_abandon();
    crmpi_param_finalize();
    test_env_clear_mca();
    unsetenv("CRMPI_PARAM_FILE");
    return 0;
}

static crmpi_param_source_t test_source_of(const char *name)
{
    crmpi_param_source_t source;
    assert_int_equal(crmpi_param_lookup(name, NULL, NULL, &source), CRMPI_OK);
    return source;
}

/* ---- sources and their priority ------------------------------------------------------ */

static void test_defaults(void **state)
{
    int64_t int_value = 0;
    bool bool_value = true;
    uint64_t size_value = 0;
    const char *string_value = NULL;

    assert_int_equal(crmpi_param_get_int("test_int", &int_value), CRMPI_OK);
    assert_int_equal(int_value, 42);
    assert_int_equal(crmpi_param_get_bool("test_bool", &bool_value), CRMPI_OK);
    assert_false(bool_value);
    assert_int_equal(crmpi_param_get_size("test_size", &size_value), CRMPI_OK);
    assert_int_equal(size_value, 4096);
    assert_int_equal(crmpi_param_get_string("test_string", &string_value), CRMPI_OK);
    assert_string_equal(string_value, "dflt");
    assert_int_equal(crmpi_param_get_string("test_empty", &string_value), CRMPI_OK);
    assert_string_equal(string_value, "");
    assert_int_equal(test_source_of("test_int"), CRMPI_PARAM_SOURCE_DEFAULT);
}

static void test_priority_of_sources(void **state)
{
    char *path = test_file_write("test_int = 1\ntest_string = from-file\n");
    int64_t value = 0;
    const char *text;

    /* File beats default. */
    setenv("CRMPI_PARAM_FILE", path, 1);
    test_reload();
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_OK);
    assert_int_equal(value, 1);
    assert_int_equal(test_source_of("test_int"), CRMPI_PARAM_SOURCE_FILE);

    /* Environment beats file. */
    setenv("CRMPI_MCA_test_int", "2", 1);
    test_reload();
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_OK);
    assert_int_equal(value, 2);
    assert_int_equal(test_source_of("test_int"), CRMPI_PARAM_SOURCE_ENV);
    /* The other parameter still comes from the file. */
    assert_int_equal(crmpi_param_get_string("test_string", &text), CRMPI_OK);
    assert_string_equal(text, "from-file");
    assert_int_equal(test_source_of("test_string"), CRMPI_PARAM_SOURCE_FILE);

    /* Override beats environment, even after the value was read and cached. */
    assert_int_equal(crmpi_param_set_override("test_int", "3"), CRMPI_OK);
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_OK);
    assert_int_equal(value, 3);
    assert_int_equal(test_source_of("test_int"), CRMPI_PARAM_SOURCE_OVERRIDE);

    /* A second override replaces the first. */
    assert_int_equal(crmpi_param_set_override("test_int", "4"), CRMPI_OK);
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_OK);
    assert_int_equal(value, 4);

    unsetenv("CRMPI_MCA_test_int");
    unlink(path);
    free(path);
}

static void test_override_before_declaration(void **state)
{
    int64_t value = 0;
    static const crmpi_param_decl_t late[] = {
        {"test_late", CRMPI_PARAM_INT, "1", "Declared after its override.", 1}};

    assert_int_equal(crmpi_param_set_override("test_late", "99"), CRMPI_OK);
    assert_int_equal(crmpi_param_get_int("test_late", &value), CRMPI_ERR_NOT_FOUND);
    assert_int_equal(crmpi_param_register(late, 1), CRMPI_OK);
    assert_int_equal(crmpi_param_get_int("test_late", &value), CRMPI_OK);
    assert_int_equal(value, 99);
}

static void test_values_are_cached(void **state)
{
    int64_t value = 0;

    setenv("CRMPI_MCA_test_int", "5", 1);
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_OK);
    assert_int_equal(value, 5);
    /* Resolved once: a later change of the environment is not seen until finalize. */
    setenv("CRMPI_MCA_test_int", "6", 1);
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_OK);
    assert_int_equal(value, 5);
    test_reload();
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_OK);
    assert_int_equal(value, 6);
}

static void test_string_outlives_override(void **state)
{
    const char *first = NULL;
    const char *second = NULL;

    assert_int_equal(crmpi_param_set_override("test_string", "first"), CRMPI_OK);
    assert_int_equal(crmpi_param_get_string("test_string", &first), CRMPI_OK);
    assert_int_equal(crmpi_param_set_override("test_string", "second"), CRMPI_OK);
    assert_int_equal(crmpi_param_get_string("test_string", &second), CRMPI_OK);
    assert_string_equal(second, "second");
    /* Promised valid until finalize, even though the value changed. */
    assert_string_equal(first, "first");
}

static void test_lookup_and_errors(void **state)
{
    const crmpi_param_decl_t *decl = NULL;
    const char *value = NULL;
    crmpi_param_source_t source = CRMPI_PARAM_SOURCE_OVERRIDE;
    int64_t int_value = 77;
    bool bool_value;
    char *log;

    assert_int_equal(crmpi_param_lookup("test_size", &decl, &value, &source), CRMPI_OK);
    assert_ptr_equal(decl, &test_decls[3]);
    assert_string_equal(value, "4k");
    assert_int_equal(source, CRMPI_PARAM_SOURCE_DEFAULT);

    assert_int_equal(crmpi_param_lookup("no_such_param", &decl, &value, &source),
                     CRMPI_ERR_NOT_FOUND);
    assert_int_equal(crmpi_param_get_int("no_such_param", &int_value), CRMPI_ERR_NOT_FOUND);
    assert_int_equal(int_value, 77);

    /* Reading with the wrong type is a programming error, reported. */
    capture_begin();
    assert_int_equal(crmpi_param_get_bool("test_int", &bool_value), CRMPI_ERR_BAD_PARAM);
    log = capture_end();
    assert_non_null(strstr(log, "test_int is declared as int but read as bool"));
    free(log);
}

/* ---- registration -------------------------------------------------------------------- */

static void test_register_rejects_bad_tables(void **state)
{
    static const crmpi_param_decl_t duplicate[] = {
        {"test_fresh", CRMPI_PARAM_INT, "1", "New.", 1},
        {"test_int", CRMPI_PARAM_INT, "1", "Already declared.", 1},
    };
    static const crmpi_param_decl_t twice[] = {
        {"test_twice", CRMPI_PARAM_INT, "1", "Once.", 1},
        {"test_twice", CRMPI_PARAM_INT, "1", "Twice.", 1},
    };
    static const crmpi_param_decl_t bad_default[] = {
        {"test_bad_default", CRMPI_PARAM_SIZE, "lots", "Bad default.", 1}};
    static const crmpi_param_decl_t bad_name[] = {
        {"test bad=name", CRMPI_PARAM_INT, "1", "Bad name.", 1}};
    static const crmpi_param_decl_t bad_level[] = {
        {"test_bad_level", CRMPI_PARAM_INT, "1", "Bad level.", 10}};
    const char *value;
    char *log;

    capture_begin();
    assert_int_equal(crmpi_param_register(duplicate, 2), CRMPI_ERR_EXISTS);
    assert_int_equal(crmpi_param_register(twice, 2), CRMPI_ERR_EXISTS);
    assert_int_equal(crmpi_param_register(bad_default, 1), CRMPI_ERR_BAD_PARAM);
    assert_int_equal(crmpi_param_register(bad_name, 1), CRMPI_ERR_BAD_PARAM);
    assert_int_equal(crmpi_param_register(bad_level, 1), CRMPI_ERR_BAD_PARAM);
    log = capture_end();
    assert_int_equal(count_lines(log), 5);
    assert_non_null(strstr(log, "test_int is declared twice"));
    assert_non_null(strstr(log, "test_bad_default: default 'lots' is not a size"));
    free(log);

    /* A failed call declares nothing, not even the good entries before the bad one. */
    assert_int_equal(crmpi_param_lookup("test_fresh", NULL, &value, NULL), CRMPI_ERR_NOT_FOUND);
    assert_int_equal(crmpi_param_lookup("test_twice", NULL, &value, NULL), CRMPI_ERR_NOT_FOUND);
}

static int test_foreach_collect(const crmpi_param_decl_t *decl, void *arg)
{
    size_t *visited = arg;
    /* Declaration order, and the right declarations. */
    assert_ptr_equal(decl, &test_decls[*visited]);
    (*visited)++;
    return *visited == 3 ? 7 : 0;
}

static void test_foreach_order_and_stop(void **state)
{
    size_t visited = 0;

    assert_int_equal(crmpi_param_foreach(test_foreach_collect, &visited), 7);
    assert_int_equal(visited, 3);
}

/* ---- parsing ------------------------------------------------------------------------- */

static void test_parse_int(void **state)
{
    static const struct {
        const char *text;
        int64_t value;
    } good[] = {
        {"0", 0},
        {"-5", -5},
        {"+8", 8},
        {" 12 ", 12},
        {"0x1F", 31},
        {"010", 10}, /* decimal, not octal */
        {"9223372036854775807", INT64_MAX},
        {"-9223372036854775808", INT64_MIN},
    };
    /* Blank, junk, trailing junk, not decimal, bad prefixes and signs, out of range. */
    static const char *const bad[] = {"",
                                      " ",
                                      "abc",
                                      "12abc",
                                      "1.5",
                                      "0x",
                                      "--1",
                                      "- 1",
                                      "9223372036854775808",
                                      "-9223372036854775809",
                                      "99999999999999999999"};
    int64_t value;

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        value = 1234;
        assert_int_equal(crmpi_param_parse_int(good[i].text, &value), CRMPI_OK);
        assert_int_equal(value, good[i].value);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        value = 1234;
        assert_int_equal(crmpi_param_parse_int(bad[i], &value), CRMPI_ERR_BAD_PARAM);
        assert_int_equal(value, 1234);
    }
    assert_int_equal(crmpi_param_parse_int(NULL, &value), CRMPI_ERR_BAD_PARAM);
}

static void test_parse_bool(void **state)
{
    static const char *const truthy[] = {"1", "true", "TRUE", "Yes", "on", " On "};
    static const char *const falsy[] = {"0", "false", "False", "no", "NO", "off"};
    static const char *const bad[] = {"", "2", "yess", "t", "y", "onn", "truefalse"};
    bool value;

    for (size_t i = 0; i < sizeof(truthy) / sizeof(truthy[0]); i++) {
        value = false;
        assert_int_equal(crmpi_param_parse_bool(truthy[i], &value), CRMPI_OK);
        assert_true(value);
    }
    for (size_t i = 0; i < sizeof(falsy) / sizeof(falsy[0]); i++) {
        value = true;
        assert_int_equal(crmpi_param_parse_bool(falsy[i], &value), CRMPI_OK);
        assert_false(value);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        value = true;
        assert_int_equal(crmpi_param_parse_bool(bad[i], &value), CRMPI_ERR_BAD_PARAM);
        assert_true(value);
    }
}

static void test_parse_size(void **state)
{
    static const struct {
        const char *text;
        uint64_t value;
    } good[] = {
        {"0", 0},
        {"512", 512},
        {"4k", 4096},
        {"4K", 4096},
        {"2m", 2u << 20},
        {"3G", 3ull << 30},
        {" 8k ", 8192},
        {"0x10k", 16384},
        {"18446744073709551615", UINT64_MAX},
        {"16777215g", 16777215ull << 30},
    };
    static const char *const bad[] = {
        "", "k", "-1", "1t", "1kk", "1 k", "4kb", "1.5m", "17179869184g", "18446744073709551616",
    };
    uint64_t value;

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        value = 1234;
        assert_int_equal(crmpi_param_parse_size(good[i].text, &value), CRMPI_OK);
        assert_int_equal(value, good[i].value);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        value = 1234;
        assert_int_equal(crmpi_param_parse_size(bad[i], &value), CRMPI_ERR_BAD_PARAM);
        assert_int_equal(value, 1234);
    }
}

static void test_bad_env_value_logged_once(void **state)
{
    int64_t value = 1234;
    char *log;

    setenv("CRMPI_MCA_test_int", "abc", 1);
    capture_begin();
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_ERR_BAD_PARAM);
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_ERR_BAD_PARAM);
    log = capture_end();
    assert_int_equal(value, 1234);
    assert_non_null(
        strstr(log, "parameter test_int: 'abc' from CRMPI_MCA_test_int is not an integer"));
    assert_int_equal(count_lines(log), 1);
    free(log);
    /* crmpi_info still sees what the user wrote and where. */
    assert_int_equal(test_source_of("test_int"), CRMPI_PARAM_SOURCE_ENV);
}

static void test_bad_values_of_each_type(void **state)
{
    char *path = test_file_write("# sizes\ntest_size = 12q\n");
    bool bool_value;
    uint64_t size_value;
    char *log;

    setenv("CRMPI_PARAM_FILE", path, 1);
    test_reload();
    assert_int_equal(crmpi_param_set_override("test_bool", "maybe"), CRMPI_OK);
    capture_begin();
    assert_int_equal(crmpi_param_get_bool("test_bool", &bool_value), CRMPI_ERR_BAD_PARAM);
    assert_int_equal(crmpi_param_get_size("test_size", &size_value), CRMPI_ERR_BAD_PARAM);
    log = capture_end();
    assert_non_null(strstr(log, "parameter test_bool: 'maybe' from --mca test_bool is not a "
                                "boolean"));
    assert_non_null(strstr(log, "parameter test_size: '12q' from "));
    assert_non_null(strstr(log, ":2 is not a size"));
    free(log);

    /* A good override fixes the bad value. */
    assert_int_equal(crmpi_param_set_override("test_bool", "yes"), CRMPI_OK);
    assert_int_equal(crmpi_param_get_bool("test_bool", &bool_value), CRMPI_OK);
    assert_true(bool_value);
    unlink(path);
    free(path);
}

/* ---- the parameter file -------------------------------------------------------------- */

static void test_param_file_syntax(void **state)
{
    char *path = test_file_write("# a comment\n"
                                 "\n"
                                 "   \t\n"
                                 "  # an indented comment\n"
                                 "test_int=7\n"
                                 "this line has no equals sign\n"
                                 "not a name = 3\n"
                                 "  test_string   =  spaced value # kept  \r\n"
                                 "test_bool = on\n"
                                 "test_bool = off\n"
                                 "test_empty =\n"
                                 "test_size = 1m");
    int64_t int_value;
    bool bool_value;
    uint64_t size_value;
    const char *text;
    char *log;
    char expected[512];

    setenv("CRMPI_PARAM_FILE", path, 1);
    test_reload();
    capture_begin();
    assert_int_equal(crmpi_param_get_int("test_int", &int_value), CRMPI_OK);
    log = capture_end();
    assert_int_equal(int_value, 7);
    /* Both bad lines reported, with file and line number, and nothing else. */
    assert_int_equal(count_lines(log), 2);
    snprintf(expected, sizeof(expected), "%s:6: ignoring 'this line has no equals sign'", path);
    assert_non_null(strstr(log, expected));
    snprintf(expected, sizeof(expected), "%s:7: ignoring this line: 'not a name'", path);
    assert_non_null(strstr(log, expected));
    free(log);

    assert_int_equal(crmpi_param_get_string("test_string", &text), CRMPI_OK);
    assert_string_equal(text, "spaced value # kept");
    /* The later line wins. */
    assert_int_equal(crmpi_param_get_bool("test_bool", &bool_value), CRMPI_OK);
    assert_false(bool_value);
    assert_int_equal(crmpi_param_get_string("test_empty", &text), CRMPI_OK);
    assert_string_equal(text, "");
    assert_int_equal(test_source_of("test_empty"), CRMPI_PARAM_SOURCE_FILE);
    /* A last line without newline counts too. */
    assert_int_equal(crmpi_param_get_size("test_size", &size_value), CRMPI_OK);
    assert_int_equal(size_value, 1u << 20);
    unlink(path);
    free(path);
}

static void test_param_file_in_home(void **state)
{
    char *home = test_tmp_name("crmpi-test-home-XXXXXX");
    char dir[4096];
    char file[sizeof(dir) + sizeof("/mca-params.conf")];
    char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    FILE *stream;
    int64_t value;

    assert_non_null(mkdtemp(home));
    snprintf(dir, sizeof(dir), "%s/.crmpi", home);
    snprintf(file, sizeof(file), "%s/mca-params.conf", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    stream = fopen(file, "w");
    assert_non_null(stream);
    fputs("test_int = 11\n", stream);
    fclose(stream);

    unsetenv("CRMPI_PARAM_FILE");
    setenv("HOME", home, 1);
    test_reload();
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_OK);
    assert_int_equal(value, 11);
    assert_int_equal(test_source_of("test_int"), CRMPI_PARAM_SOURCE_FILE);

    /* CRMPI_PARAM_FILE="" disables the file. */
    setenv("CRMPI_PARAM_FILE", "", 1);
    test_reload();
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_OK);
    assert_int_equal(value, 42);

    if (saved_home)
        setenv("HOME", saved_home, 1);
    else
        unsetenv("HOME");
    free(saved_home);
    unlink(file);
    rmdir(dir);
    rmdir(home);
    free(home);
}

static void test_param_file_missing(void **state)
{
    int64_t value = 0;
    char *log;

    setenv("CRMPI_PARAM_FILE", "/nonexistent/crmpi-test/params.conf", 1);
    test_reload();
    capture_begin();
    assert_int_equal(crmpi_param_get_int("test_int", &value), CRMPI_OK);
    log = capture_end();
    /* A file the user named explicitly and that is missing is worth a warning. */
    assert_non_null(strstr(log, "cannot read parameter file /nonexistent/crmpi-test/params.conf"
                                " (CRMPI_PARAM_FILE)"));
    assert_int_equal(value, 42);
    free(log);
}

/* ---- unknown names, and passing overrides to children -------------------------------- */

static void test_warn_unknown(void **state)
{
    char *path = test_file_write("test_strnig = x\ntest_int = 3\n");
    char *log;

    setenv("CRMPI_PARAM_FILE", path, 1);
    test_reload();
    setenv("CRMPI_MCA_test_itn", "5", 1);
    setenv("CRMPI_MCA_test_bool", "1", 1);
    assert_int_equal(crmpi_param_set_override("completely_unrelated", "1"), CRMPI_OK);
    assert_int_equal(crmpi_param_set_override("test_size", "1k"), CRMPI_OK);

    capture_begin();
    assert_int_equal(crmpi_param_warn_unknown("unit-test"), 3);
    log = capture_end();
    assert_int_equal(count_lines(log), 3);
    assert_non_null(strstr(log, "unit-test: warning: unknown MCA parameter 'test_itn' (from "
                                "CRMPI_MCA_test_itn); did you mean 'test_int'?"));
    assert_non_null(strstr(log, "unknown MCA parameter 'test_strnig' (from "));
    assert_non_null(strstr(log, ":1); did you mean 'test_string'?"));
    assert_non_null(strstr(log, "unknown MCA parameter 'completely_unrelated' (from --mca "
                                "completely_unrelated); 'crmpi_info --param all all'"));
    free(log);

    /* Once per name: the second call counts them but prints nothing. */
    capture_begin();
    assert_int_equal(crmpi_param_warn_unknown("unit-test"), 3);
    log = capture_end();
    assert_string_equal(log, "");
    free(log);

    unlink(path);
    free(path);
}

static void test_set_override_rejects_bad_names(void **state)
{
    char *log;

    capture_begin();
    assert_int_equal(crmpi_param_set_override("a=b", "1"), CRMPI_ERR_BAD_PARAM);
    assert_int_equal(crmpi_param_set_override("", "1"), CRMPI_ERR_BAD_PARAM);
    assert_int_equal(crmpi_param_set_override("test_int", NULL), CRMPI_ERR_BAD_PARAM);
    log = capture_end();
    assert_int_equal(count_lines(log), 3);
    free(log);
}

static void test_overrides_as_env_round_trip(void **state)
{
    char **env;
    size_t count = 0;
    int64_t int_value;
    const char *text;

    env = crmpi_param_overrides_as_env();
    assert_non_null(env);
    assert_null(env[0]);
    crmpi_param_free_env(env);

    assert_int_equal(crmpi_param_set_override("test_int", "-12"), CRMPI_OK);
    assert_int_equal(crmpi_param_set_override("test_string", "a b=c"), CRMPI_OK);
    assert_int_equal(crmpi_param_set_override("test_int", "13"), CRMPI_OK);
    env = crmpi_param_overrides_as_env();
    assert_non_null(env);
    for (char **entry = env; *entry; entry++)
        count++;
    assert_int_equal(count, 2);
    assert_string_equal(env[0], "CRMPI_MCA_test_int=13");
    assert_string_equal(env[1], "CRMPI_MCA_test_string=a b=c");

    /* What a child sees: the entries in its environment, no overrides of its own. */
    crmpi_param_finalize();
    for (char **entry = env; *entry; entry++) {
        char *copy = strdup(*entry);
        char *equals = strchr(copy, '=');
        *equals = '\0';
        setenv(copy, equals + 1, 1);
        free(copy);
    }
    crmpi_param_free_env(env);
    assert_int_equal(crmpi_param_register(test_decls, TEST_NUM_DECLS), CRMPI_OK);
    assert_int_equal(crmpi_param_get_int("test_int", &int_value), CRMPI_OK);
    assert_int_equal(int_value, 13);
    assert_int_equal(crmpi_param_get_string("test_string", &text), CRMPI_OK);
    assert_string_equal(text, "a b=c");
    assert_int_equal(test_source_of("test_string"), CRMPI_PARAM_SOURCE_ENV);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_priority_of_sources, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_override_before_declaration, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_values_are_cached, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_string_outlives_override, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_lookup_and_errors, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_register_rejects_bad_tables, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_foreach_order_and_stop, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_parse_int, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_parse_bool, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_parse_size, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_bad_env_value_logged_once, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_bad_values_of_each_type, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_param_file_syntax, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_param_file_in_home, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_param_file_missing, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_warn_unknown, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_set_override_rejects_bad_names, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_overrides_as_env_round_trip, test_setup,
                                        test_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
