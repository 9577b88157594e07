/*
 * test_pheap.c: the persistent heap (crmpi/pheap.h): backup and restore of PERM globals,
 * heap data and pointers inside the heap, in the same process and in a new one; a heap
 * that grew; a process killed in the middle of backup(); and the errors: a missing
 * backup, an occupied address, files of another program, wrong PERM globals, misuse.
 *
 * "A new process" is a child made with fork() that builds the state and exits, after which
 * this process (which never opened that heap) opens and restores it. Every test works in
 * a scratch directory of its own and closes what it opened.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>

#include <crmpi/pheap.h>

#include "pheap_test_util.h"

/* The heap's default address (pheap(3)); the tests run with CRMPI_PHEAP_ADDRESS unset. */
#define TEST_HEAP_ADDRESS ((uintptr_t)0x200000000000ULL)

/* A node of a list that lives in the heap. */
struct test_node {
    struct test_node *next; /* the next node, in the heap */
    long value;             /* its position in the list */
};

/* The persistent state of this program. */
struct test_state {
    long counter;              /* a plain value */
    double values[4];          /* an array */
    struct test_node *list;    /* a list in the heap */
    unsigned char *blob;       /* a block in the heap */
    size_t blob_len;           /* its size */
    unsigned char *blocks[64]; /* blocks that make the heap grow */
};
PERM struct test_state g;
PERM int g_small = 7;

/* This test's directory and files. */
static char *test_dir;
static char heap_path[PATH_MAX], backup_path[PATH_MAX];

static int test_setup(void **state)
{
    unsetenv("CRMPI_PHEAP_ADDRESS");
    unsetenv("CRMPI_FAULT");
    test_dir = test_dir_make();
    test_path(heap_path, sizeof(heap_path), test_dir, "app.mmap");
    test_path(backup_path, sizeof(backup_path), test_dir, "app.back");
    memset(&g, 0, sizeof(g));
    g_small = 7;
    assert_int_equal(perm(PERM_START, PERM_SIZE), 0);
    return 0;
}

static int test_teardown(void **state)
{
    test_dir_remove(test_dir);
    free(test_dir);
    return 0;
}

/* Open a new heap of `size` bytes and new backups, in the test's directory. */
static void test_open_new(size_t size)
{
    assert_int_equal(mopen(heap_path, "w+", size), 0);
    assert_int_equal(bopen(backup_path, "w+"), 0);
}

/* Open the heap and backup left by a child, to restore them. */
static void test_open_existing(void)
{
    assert_int_equal(mopen(heap_path, "r+", 0), 0);
    assert_int_equal(bopen(backup_path, "r+"), 0);
}

static void test_close(void)
{
    assert_int_equal(bclose(), 0);
    assert_int_equal(mclose(), 0);
}

/* A list of `n` nodes with values 0..n-1 into g.list. */
static void test_list_build(long n)
{
    struct test_node **link = &g.list;

    for (long i = 0; i < n; i++) {
        struct test_node *node = perm_malloc(sizeof(*node));

        assert_non_null(node);
        node->value = i;
        node->next = NULL;
        *link = node;
        link = &node->next;
    }
}

/* g.list holds exactly the values 0..n-1 (every pointer followed). */
static void test_list_check(long n)
{
    long i = 0;

    for (struct test_node *node = g.list; node; node = node->next, i++) {
        assert_true((uintptr_t)node >= TEST_HEAP_ADDRESS);
        assert_int_equal(node->value, i);
    }
    assert_int_equal(i, n);
}

/* Byte `i` of test pattern `seed`. */
static unsigned char test_pattern(size_t i, unsigned seed)
{
    return (unsigned char)((i * 131 + seed * 7) ^ (i >> 8));
}

static void test_fill(unsigned char *p, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        p[i] = test_pattern(i, seed);
}

static bool test_matches(const unsigned char *p, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != test_pattern(i, seed))
            return false;
    return true;
}

/* ---- round trips ------------------------------------------------------------------- */

/* PERM globals come back as they were at backup(), in the same process. */
static void test_globals_round_trip(void **state)
{
    test_open_new(1 << 20);
    g.counter = 41;
    g.values[3] = 2.5;
    g_small = 8;
    assert_int_equal(backup(), 0);
    g.counter = 99;
    g.values[3] = -1;
    g_small = 0;
    assert_int_equal(restore(), 0);
    assert_int_equal(g.counter, 41);
    assert_true(g.values[3] == 2.5);
    assert_int_equal(g_small, 8);
    /* Again: a restore leaves the backup as it was. */
    g.counter = 0;
    assert_int_equal(restore(), 0);
    assert_int_equal(g.counter, 41);
    test_close();
}

/* Heap data and the allocator come back: blocks freed after backup() are live again, blocks
 * allocated after it are gone, and both kinds of block can be used and freed after. */
static void test_heap_round_trip(void **state)
{
    unsigned char *later[32];

    test_open_new(1 << 20);
    g.blob_len = 3000;
    g.blob = perm_malloc(g.blob_len);
    assert_non_null(g.blob);
    test_fill(g.blob, g.blob_len, 1);
    assert_int_equal(backup(), 0);

    test_fill(g.blob, g.blob_len, 2);
    perm_free(g.blob);
    for (int i = 0; i < 32; i++) {
        later[i] = perm_malloc(1000);
        assert_non_null(later[i]);
        memset(later[i], 0xee, 1000);
    }
    g.blob = NULL;

    assert_int_equal(restore(), 0);
    assert_non_null(g.blob);
    assert_true(test_matches(g.blob, g.blob_len, 1));
    /* The restored allocator knows g.blob is live: new blocks do not overlap it. */
    for (int i = 0; i < 32; i++) {
        later[i] = perm_malloc(1000);
        assert_non_null(later[i]);
        assert_true(later[i] + 1000 <= g.blob || later[i] >= g.blob + g.blob_len);
        memset(later[i], 0x11, 1000);
    }
    assert_true(test_matches(g.blob, g.blob_len, 1));
    g.blob = perm_realloc(g.blob, 2 * g.blob_len);
    assert_non_null(g.blob);
    assert_true(test_matches(g.blob, g.blob_len, 1));
    perm_free(g.blob);
    for (int i = 0; i < 32; i++)
        perm_free(later[i]);
    test_close();
}

static int test_child_make_list(void *arg)
{
    long n = *(long *)arg;

    test_open_new(1 << 20);
    g.counter = n;
    test_list_build(n);
    if (backup() != 0)
        return 1;
    test_close();
    return 0;
}

/* Pointers inside the heap, and from PERM globals into it, are valid in a new process;
 * the restored allocator frees and reuses the old process's blocks. */
static void test_pointers_new_process(void **state)
{
    long n = 1000;

    assert_int_equal(test_in_child(test_child_make_list, &n), 0);
    assert_null(g.list);
    test_open_existing();
    assert_int_equal(restore(), 0);
    assert_int_equal(g.counter, n);
    test_list_check(n);

    /* Free every other node, then grow the list again. */
    for (struct test_node *node = g.list; node && node->next; node = node->next) {
        struct test_node *gone = node->next;

        node->next = gone->next;
        perm_free(gone);
    }
    for (struct test_node *node = g.list; node; node = node->next)
        node->value /= 2;
    test_list_check(n / 2);
    assert_int_equal(backup(), 0);
    test_list_build(10); /* replaces the list; the old nodes leak, as they would in C */
    assert_int_equal(restore(), 0);
    test_list_check(n / 2);
    test_close();
}

static int test_child_grow(void *arg)
{
    test_open_new(256 << 10);
    for (unsigned i = 0; i < 64; i++) {
        g.blocks[i] = perm_malloc(64 << 10);
        if (!g.blocks[i])
            return 1;
        test_fill(g.blocks[i], 64 << 10, i);
    }
    g.counter = 64;
    if (backup() != 0)
        return 1;
    test_close();
    return 0;
}

/* A heap created small grows past its first mapping; it is backed up and restored whole,
 * and restoring over a heap that grew further after the backup works too. */
static void test_grown_heap(void **state)
{
    unsigned char *more[16];

    assert_int_equal(test_in_child(test_child_grow, NULL), 0);
    assert_true(test_file_size(heap_path) >= 4 << 20);
    test_open_existing();
    assert_int_equal(restore(), 0);
    assert_int_equal(g.counter, 64);
    for (unsigned i = 0; i < 64; i++)
        assert_true(test_matches(g.blocks[i], 64 << 10, i));

    /* Grow further, then roll back to the smaller backup and use the heap again. */
    for (unsigned i = 0; i < 16; i++) {
        more[i] = perm_malloc(1 << 20);
        assert_non_null(more[i]);
        memset(more[i], 0x5a, 1 << 20);
    }
    assert_true(test_file_size(heap_path) >= 20 << 20);
    assert_int_equal(restore(), 0);
    for (unsigned i = 0; i < 64; i++)
        assert_true(test_matches(g.blocks[i], 64 << 10, i));
    for (unsigned i = 0; i < 16; i++) {
        more[i] = perm_malloc(1 << 20);
        assert_non_null(more[i]);
        memset(more[i], 0x33, 1 << 20);
    }
    for (unsigned i = 0; i < 64; i++) {
        assert_true(test_matches(g.blocks[i], 64 << 10, i));
        perm_free(g.blocks[i]);
    }
    for (unsigned i = 0; i < 16; i++)
        perm_free(more[i]);
    test_close();

    /* mopen "r+" with a larger size grows the file. */
    assert_int_equal(mopen(heap_path, "r+", 64 << 20), 0);
    assert_int_equal(test_file_size(heap_path), 64 << 20);
    assert_int_equal(mclose(), 0);

    /* The heap file lost: a new, small heap takes the grown backup (restore() maps more). */
    char fresh_path[PATH_MAX];
    test_path(fresh_path, sizeof(fresh_path), test_dir, "fresh.mmap");
    memset(&g, 0, sizeof(g));
    assert_int_equal(mopen(fresh_path, "w+", 256 << 10), 0);
    assert_int_equal(bopen(backup_path, "r+"), 0);
    assert_int_equal(restore(), 0);
    assert_true(test_file_size(fresh_path) >= 4 << 20);
    assert_int_equal(g.counter, 64);
    for (unsigned i = 0; i < 64; i++)
        assert_true(test_matches(g.blocks[i], 64 << 10, i));
    test_close();
}

static int test_child_flush(void *arg)
{
    if (mopen(heap_path, "w+", 1 << 20) != 0)
        return 1;
    g.counter = 5;
    test_list_build(20);
    if (mflush() != 0)
        return 1;
    return 0; /* no mclose: the process just ends */
}

/* mflush() leaves a heap file that mopen "r+" opens with its PERM globals, no backup. */
static void test_mflush_reopen(void **state)
{
    assert_int_equal(test_in_child(test_child_flush, NULL), 0);
    assert_int_equal(g.counter, 0);
    assert_int_equal(mopen(heap_path, "r+", 0), 0);
    assert_int_equal(g.counter, 5);
    test_list_check(20);
    assert_int_equal(mclose(), 0);
}

static int test_child_after_fork(void *arg)
{
    unsigned char *parents_block = arg;

    /* No heap here: allocation fails, freeing the parent's block does nothing. */
    if (perm_malloc(10) != NULL || errno != ENOMEM)
        return 1;
    perm_free(parents_block);
    return restore() == -1 ? 0 : 2;
}

/* A child made by fork() does not share its parent's heap. */
static void test_fork_child_has_no_heap(void **state)
{
    unsigned char *block;

    test_open_new(1 << 20);
    block = perm_malloc(4096);
    assert_non_null(block);
    test_fill(block, 4096, 9);
    assert_int_equal(test_in_child(test_child_after_fork, block), 0);
    assert_true(test_matches(block, 4096, 9));
    perm_free(block);
    block = perm_malloc(4096);
    assert_non_null(block);
    perm_free(block);
    test_close();
}

/* ---- crash safety ------------------------------------------------------------------ */

/* Size of the data block of the kill tests: large enough for a backup written in chunks. */
#define TEST_KILL_BLOB (12 << 20)

static int test_child_backup_killed(void *arg)
{
    const char *fault = arg;

    test_open_new(32 << 20);
    g.counter = 1;
    g.blob_len = TEST_KILL_BLOB;
    g.blob = perm_malloc(g.blob_len);
    if (!g.blob)
        return 1;
    memset(g.blob, 'A', g.blob_len);
    if (backup() != 0)
        return 1;
    g.counter = 2;
    memset(g.blob, 'B', g.blob_len);
    setenv("CRMPI_FAULT", fault, 1);
    backup(); /* stops at the fault point, and is killed there */
    return 3;
}

/* Kill a process at `fault` inside backup(): the previous backup restores. */
static void test_kill_in_backup(const char *fault)
{
    char partial[PATH_MAX + 16];
    int status;
    pid_t pid;

    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(test_child_backup_killed((void *)fault));
    /* Wait for the state (stopped at the point), never for a time. */
    assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
    assert_true(WIFSTOPPED(status));
    snprintf(partial, sizeof(partial), "%s.partial", backup_path);
    assert_true(test_file_size(partial) > 0);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    /* The heap file has the child's later state ('B'); the backup has the earlier one. */
    test_open_existing();
    assert_int_equal(restore(), 0);
    assert_int_equal(g.counter, 1);
    assert_int_equal(g.blob_len, TEST_KILL_BLOB);
    for (size_t i = 0; i < g.blob_len; i++)
        if (g.blob[i] != 'A')
            fail_msg("byte %zu of the restored block is '%c'", i, g.blob[i]);
    /* The next backup replaces the leftover partial file. */
    g.counter = 3;
    assert_int_equal(backup(), 0);
    assert_int_equal(test_file_size(partial), -1);
    g.counter = 0;
    assert_int_equal(restore(), 0);
    assert_int_equal(g.counter, 3);
    test_close();
}

static void test_kill_mid_write(void **state)
{
    test_kill_in_backup("pheap_backup_stop_mid_write");
}

static void test_kill_before_rename(void **state)
{
    test_kill_in_backup("pheap_backup_stop_before_rename");
}

/* ---- errors ------------------------------------------------------------------------ */

/* A backup file that does not exist: bopen "r+" refuses it; restore() refuses a "w+" file
 * before any backup, and a backup file removed since bopen(). */
static void test_missing_backup(void **state)
{
    char *text;

    assert_int_equal(mopen(heap_path, "w+", 1 << 20), 0);
    test_capture_begin();
    errno = 0;
    assert_int_equal(bopen(backup_path, "r+"), -1);
    assert_int_equal(errno, ENOENT);
    text = test_capture_end();
    test_assert_contains(text, "bopen: ");
    test_assert_contains(text, "app.back: no such backup file");
    free(text);

    assert_int_equal(bopen(backup_path, "w+"), 0);
    test_capture_begin();
    assert_int_equal(restore(), -1);
    text = test_capture_end();
    test_assert_contains(text, "no backup to restore yet");
    free(text);

    assert_int_equal(backup(), 0);
    assert_int_equal(bclose(), 0);
    assert_int_equal(bopen(backup_path, "r+"), 0);
    assert_int_equal(unlink(backup_path), 0);
    g.counter = 17;
    test_capture_begin();
    errno = 0;
    assert_int_equal(restore(), -1);
    assert_int_equal(errno, ENOENT);
    text = test_capture_end();
    test_assert_contains(text, "app.back: cannot open: No such file or directory; nothing was "
                               "restored");
    free(text);
    assert_int_equal(g.counter, 17);
    test_close();
}

/* Something mapped where the heap must go: mopen refuses, names the occupant, and leaves
 * the occupant (and an existing heap file) alone. */
static void test_occupied_address(void **state)
{
    char occupant_path[PATH_MAX];
    void *occupant;
    char *text;
    int fd;

    /* An existing heap, to check that a refused "w+" does not destroy it. */
    assert_int_equal(mopen(heap_path, "w+", 1 << 20), 0);
    g.counter = 8;
    assert_int_equal(mclose(), 0);

    test_path(occupant_path, sizeof(occupant_path), test_dir, "occupant");
    fd = open(occupant_path, O_RDWR | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 8192), 0);
    occupant = mmap((void *)(TEST_HEAP_ADDRESS + 65536), 8192, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    assert_ptr_equal(occupant, (void *)(TEST_HEAP_ADDRESS + 65536));
    close(fd);
    memset(occupant, 'o', 8192);

    for (int i = 0; i < 2; i++) {
        test_capture_begin();
        errno = 0;
        assert_int_equal(mopen(heap_path, i == 0 ? "r+" : "w+", 1 << 20), -1);
        assert_int_equal(errno, EEXIST);
        text = test_capture_end();
        test_assert_contains(text, "cannot map");
        test_assert_contains(text, "at 0x200000000000: the range is in use by ");
        test_assert_contains(text, occupant_path);
        free(text);
    }
    assert_int_equal(((char *)occupant)[8191], 'o');
    assert_int_equal(munmap(occupant, 8192), 0);

    g.counter = 0;
    assert_int_equal(mopen(heap_path, "r+", 0), 0);
    assert_int_equal(mclose(), 0);
    /* CRMPI_PHEAP_ADDRESS moves a new heap elsewhere. */
    setenv("CRMPI_PHEAP_ADDRESS", "0x300000000000", 1);
    assert_int_equal(mopen(heap_path, "w+", 1 << 20), 0);
    g.blob = perm_malloc(16);
    assert_true((uintptr_t)g.blob > 0x300000000000ULL);
    assert_int_equal(mclose(), 0);
    unsetenv("CRMPI_PHEAP_ADDRESS");
}

/* Files of another program: its backup is refused by restore(), its heap by mopen. */
static void test_other_program(void **state)
{
    char other[PATH_MAX + 32], other_heap[PATH_MAX], other_backup[PATH_MAX];
    char *argv[5];
    char *text;

    snprintf(other, sizeof(other), "%s/pheap_other", test_program_dir());
    test_path(other_heap, sizeof(other_heap), test_dir, "other.mmap");
    test_path(other_backup, sizeof(other_backup), test_dir, "other.back");
    argv[0] = other;
    argv[1] = (char *)"backup";
    argv[2] = other_heap;
    argv[3] = other_backup;
    argv[4] = NULL;
    assert_int_equal(test_run(argv), 0);

    assert_int_equal(mopen(heap_path, "w+", 1 << 20), 0);
    assert_int_equal(bopen(other_backup, "r+"), 0);
    g.counter = 21;
    test_capture_begin();
    errno = 0;
    assert_int_equal(restore(), -1);
    assert_int_equal(errno, EINVAL);
    text = test_capture_end();
    test_assert_contains(text, "other.back: written by another program (build-id ");
    test_assert_contains(text, "nothing was restored");
    free(text);
    assert_int_equal(g.counter, 21);
    test_close();

    test_capture_begin();
    assert_int_equal(mopen(other_heap, "r+", 0), -1);
    text = test_capture_end();
    test_assert_contains(text, "other.mmap: written by another program");
    free(text);
}

/* An extra PERM block registered only in the restoring process. */
static char test_extra_block[32];

static int test_child_wrong_layout(void *arg)
{
    char other_heap[PATH_MAX];
    char *text;
    int ok;

    if (perm(test_extra_block, sizeof(test_extra_block)) != 0)
        return 1;
    test_capture_begin();
    ok = mopen(heap_path, "r+", 0) == -1;
    text = test_capture_end();
    ok = ok && strstr(text, "do not match this program's");
    free(text);
    if (!ok)
        return 2;
    if (mopen(test_path(other_heap, sizeof(other_heap), test_dir, "new.mmap"), "w+", 1 << 20) ||
        bopen(backup_path, "r+"))
        return 3;
    test_capture_begin();
    ok = restore() == -1;
    text = test_capture_end();
    ok = ok && strstr(text, "its PERM globals (1 block: ") && strstr(text, "(2 blocks: ");
    free(text);
    return ok ? 0 : 4;
}

/* A restoring program whose PERM blocks differ from the backup's is refused. */
static void test_wrong_layout(void **state)
{
    test_open_new(1 << 20);
    assert_int_equal(backup(), 0);
    test_close();
    assert_int_equal(test_in_child(test_child_wrong_layout, NULL), 0);
}

/* A heap open in one process cannot be opened in another. */
static void test_heap_in_use(void **state)
{
    char other[PATH_MAX + 32];
    char *argv[4];

    assert_int_equal(mopen(heap_path, "w+", 1 << 20), 0);
    snprintf(other, sizeof(other), "%s/pheap_other", test_program_dir());
    argv[0] = other;
    argv[1] = (char *)"open";
    argv[2] = heap_path;
    argv[3] = NULL;
    assert_int_equal(test_run(argv), 1);
    assert_int_equal(mclose(), 0);
}

/* Damaged and foreign files are refused with a message, and change nothing. */
static void test_bad_files(void **state)
{
    char *text;
    FILE *f;

    /* A heap file that is not one. */
    f = fopen(heap_path, "w");
    assert_non_null(f);
    fputs("not a heap", f);
    fclose(f);
    test_capture_begin();
    assert_int_equal(mopen(heap_path, "r+", 0), -1);
    text = test_capture_end();
    test_assert_contains(text, "app.mmap: not a persistent heap file");
    free(text);

    /* A truncated backup. */
    test_open_new(1 << 20);
    g.counter = 4;
    assert_int_equal(backup(), 0);
    assert_int_equal(truncate(backup_path, test_file_size(backup_path) - 100), 0);
    g.counter = 6;
    test_capture_begin();
    assert_int_equal(restore(), -1);
    text = test_capture_end();
    test_assert_contains(text, "app.back: damaged: ");
    free(text);
    assert_int_equal(g.counter, 6);

    /* A file that is no backup at all. */
    f = fopen(backup_path, "w");
    assert_non_null(f);
    fputs("not a backup either", f);
    fclose(f);
    test_capture_begin();
    assert_int_equal(restore(), -1);
    text = test_capture_end();
    test_assert_contains(text, "app.back: not a persistent heap backup");
    free(text);
    test_close();
}

static int test_child_free_foreign(void *arg)
{
    static int not_in_heap;

    if (mopen(heap_path, "w+", 1 << 20) != 0)
        return 1;
    if (!freopen(arg, "w", stderr))
        return 2;
    perm_free(&not_in_heap);
    return 0;
}

/* Calls in the wrong order, bad arguments, and a pointer that is not the heap's. */
static void test_misuse(void **state)
{
    char messages[PATH_MAX];
    char *text;
    FILE *f;

    test_capture_begin();
    errno = 0;
    assert_null(perm_malloc(10));
    assert_int_equal(errno, ENOMEM);
    assert_int_equal(backup(), -1);
    assert_int_equal(mflush(), -1);
    assert_int_equal(mclose(), -1);
    assert_int_equal(bclose(), -1);
    assert_int_equal(mopen(heap_path, "rw", 1 << 20), -1);
    assert_int_equal(mopen(heap_path, "w+", 100), -1);
    assert_int_equal(mopen(heap_path, "r+", 0), -1); /* the file was not created */
    text = test_capture_end();
    test_assert_contains(text, "perm_malloc: no persistent heap is open (call mopen() first)");
    test_assert_contains(text, "backup: no heap is open (call mopen() first)");
    test_assert_contains(text, "mode \"rw\" is not one of \"w+\" (a new heap) and \"r+\"");
    test_assert_contains(text, "a heap of 100 bytes is too small");
    test_assert_contains(text, "app.mmap: no such heap file");
    free(text);

    assert_int_equal(mopen(heap_path, "w+", 1 << 20), 0);
    test_capture_begin();
    errno = 0;
    assert_int_equal(mopen(heap_path, "w+", 1 << 20), -1);
    assert_int_equal(errno, EBUSY);
    assert_int_equal(backup(), -1);
    text = test_capture_end();
    test_assert_contains(text, "a heap is already open");
    test_assert_contains(text, "backup: no backup file is open (call bopen() first)");
    free(text);
    perm_free(NULL);
    assert_int_equal(mclose(), 0);
    perm_free((void *)(TEST_HEAP_ADDRESS + 8192)); /* no heap open: nothing happens */

    /* perm_free of a pointer that is not the heap's ends the process with a message. */
    test_path(messages, sizeof(messages), test_dir, "messages");
    assert_int_equal(test_in_child(test_child_free_foreign, messages), 128 + SIGABRT);
    f = fopen(messages, "r");
    assert_non_null(f);
    text = calloc(1, 4096);
    assert_non_null(text);
    assert_true(fread(text, 1, 4095, f) > 0);
    fclose(f);
    test_assert_contains(text, "perm_free: ");
    test_assert_contains(text, "is not a block of the persistent heap; aborting");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_globals_round_trip, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_heap_round_trip, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_pointers_new_process, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_grown_heap, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_mflush_reopen, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_fork_child_has_no_heap, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_kill_mid_write, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_kill_before_rename, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_missing_backup, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_occupied_address, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_other_program, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_wrong_layout, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_heap_in_use, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_bad_files, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_misuse, test_setup, test_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
