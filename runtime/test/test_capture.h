/*
 * test_capture.h: helpers shared by the runtime unit tests (cmocka): a clean environment,
 * temporary names, and capture of what the code under test writes to stderr, so that tests can
 * assert on the exact messages users would see.
 *
 * Include after <cmocka.h>. Call capture_abandon() from every teardown: after a failed
 * assertion inside a capture, it restores stderr and shows what was captured (cmocka's
 * own failure message is in it).
 */
#ifndef CRMPI_TEST_CAPTURE_H
#define CRMPI_TEST_CAPTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A new temporary name from `pattern` ("name-XXXXXX") in $TMPDIR or /tmp (malloc'ed). */
static inline char *test_tmp_name(const char *pattern)
{
    const char *dir = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    char *path;

    assert_true(asprintf(&path, "%s/%s", dir, pattern) > 0);
    return path;
}

/* Remove every CRMPI_MCA_* variable (restarting the scan: unsetenv edits environ). */
static inline void test_env_clear_mca(void)
{
    bool removed;

    do {
        removed = false;
        for (char **env = environ; *env; env++) {
            if (strncmp(*env, "CRMPI_MCA_", 10) == 0) {
                char name[256];
                size_t len = strcspn(*env, "=");
                snprintf(name, sizeof(name), "%.*s", (int)len, *env);
                unsetenv(name);
                removed = true;
                break;
            }
        }
    } while (removed);
}

/* stderr is redirected to a temporary file between capture_begin and capture_end. */
static int capture_saved_fd = -1;
/* That file, while capturing. */
static char *capture_path;

static inline void capture_begin(void)
{
    int fd;

    capture_path = test_tmp_name("crmpi-test-stderr-XXXXXX");
    fd = mkstemp(capture_path);
    assert_true(fd >= 0);
    fflush(stderr);
    capture_saved_fd = dup(STDERR_FILENO);
    assert_true(capture_saved_fd >= 0);
    assert_true(dup2(fd, STDERR_FILENO) >= 0);
    close(fd);
}

/* Restore stderr and return what was written to it (malloc'ed, NUL-terminated). */
static inline char *capture_end(void)
{
    FILE *file;
    char *text;
    long size;

    fflush(stderr);
    assert_true(dup2(capture_saved_fd, STDERR_FILENO) >= 0);
    close(capture_saved_fd);
    capture_saved_fd = -1;
    file = fopen(capture_path, "r");
    assert_non_null(file);
    fseek(file, 0, SEEK_END);
    size = ftell(file);
    rewind(file);
    text = calloc(1, (size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
    fclose(file);
    unlink(capture_path);
    free(capture_path);
    capture_path = NULL;
    return text;
}

/* After a failed assertion inside a capture: show what was captured (cmocka's own failure
 * message is in it) on the real stderr. */
static inline void capture_abandon(void)
{
    char *text;

    if (capture_saved_fd < 0)
        return;
    text = capture_end();
    fputs(text, stderr);
    free(text);
}

static inline int count_lines(const char *text)
{
    int lines = 0;
    for (; *text; text++)
        lines += *text == '\n';
    return lines;
}

#endif /* CRMPI_TEST_CAPTURE_H */
