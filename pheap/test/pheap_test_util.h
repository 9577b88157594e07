/*
 * pheap_test_util.h: what the persistent heap's tests share: a scratch directory, stderr
 * captured around a call, children that run a function or a program.
 *
 * Header-only (static functions), for the C and the C++ test; include after cmocka.h.
 */
#ifndef PHEAP_TEST_UTIL_H
#define PHEAP_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A new empty directory under $TMPDIR (or /tmp); the caller removes it with
 * test_dir_remove() and frees the string. */
static inline char *test_dir_make(void)
{
    const char *tmp = getenv("TMPDIR");
    char *path = (char *)malloc(PATH_MAX);

    assert_non_null(path);
    snprintf(path, PATH_MAX, "%s/crmpi-pheap-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(path));
    return path;
}

/* Remove `dir` and the files in it (the tests make no subdirectories). */
static inline void test_dir_remove(const char *dir)
{
    char cmd[PATH_MAX + 32];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* "dir/name" in a static buffer of its own per call site is not enough: the caller gives
 * the buffer. */
static inline const char *test_path(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
    return buf;
}

/* stderr of this process goes to a file from test_capture_begin() to test_capture_end(). */
static int test_capture_saved_fd = -1;
static FILE *test_capture_file;

static inline void test_capture_begin(void)
{
    fflush(stderr);
    test_capture_file = tmpfile();
    assert_non_null(test_capture_file);
    test_capture_saved_fd = dup(2);
    assert_true(test_capture_saved_fd >= 0);
    assert_true(dup2(fileno(test_capture_file), 2) >= 0);
}

/* What was written to stderr since test_capture_begin(); the caller frees it. It is also
 * copied to the real stderr, so that the test log shows every message. */
static inline char *test_capture_end(void)
{
    long len;
    char *text;

    fflush(stderr);
    assert_true(dup2(test_capture_saved_fd, 2) >= 0);
    close(test_capture_saved_fd);
    len = ftell(test_capture_file);
    assert_true(len >= 0);
    text = (char *)calloc(1, (size_t)len + 1);
    assert_non_null(text);
    rewind(test_capture_file);
    assert_int_equal(fread(text, 1, (size_t)len, test_capture_file), (size_t)len);
    fclose(test_capture_file);
    fprintf(stderr, "%s", text);
    return text;
}

/* The captured text contains `needle` (printed when it does not). */
static inline void test_assert_contains(const char *text, const char *needle)
{
    if (!strstr(text, needle)) {
        fprintf(stderr, "expected \"%s\" in:\n%s\n", needle, text);
        fail();
    }
}

/* Run `fn(arg)` in a child process; it returns the child's exit status (its return value),
 * or 128 + N when signal N ended it. */
static inline int test_in_child(int (*fn)(void *), void *arg)
{
    int status;
    pid_t pid;

    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(fn(arg));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Run the program `argv[0]` (a path) in a child; returns as test_in_child(). */
static inline int test_run(char *const argv[])
{
    int status;
    pid_t pid;

    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execv(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The directory of this test program (test programs are linked -no-install, so this is the
 * build directory of the tests, where the helper programs are too). */
static inline const char *test_program_dir(void)
{
    static char dir[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", dir, sizeof(dir) - 1);

    assert_true(len > 0);
    dir[len] = '\0';
    *strrchr(dir, '/') = '\0';
    return dir;
}

/* Size of the file at `path`, or -1. */
static inline long long test_file_size(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

#endif /* PHEAP_TEST_UTIL_H */
