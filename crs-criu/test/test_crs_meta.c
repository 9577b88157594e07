/*
 * test_crs_meta.c: the record the criu CRS keeps beside an image (crs_criu_meta.c): CPU
 * lists, the position-preserving remap, writing and reading crs-criu.meta, collecting
 * it from /proc, and the copies of files mapped shared. Needs neither root nor CRIU.
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "crmpi_status.h"
#include "crs_criu_int.h"

static cpu_set_t tst_set(const char *list)
{
    cpu_set_t set;
    assert_int_equal(crs_criu_cpulist_parse(list, &set), CRMPI_OK);
    return set;
}

static void test_cpulist(void **state)
{
    (void)state;
    const char *lists[] = {"0", "0-3,6", "1,3,5-7", "none"};
    char text[128];
    cpu_set_t set;
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        set = tst_set(lists[i]);
        crs_criu_cpulist_format(&set, text, sizeof(text));
        assert_string_equal(text, lists[i]);
    }
    set = tst_set("2,0-1");
    crs_criu_cpulist_format(&set, text, sizeof(text));
    assert_string_equal(text, "0-2");
    const char *bad[] = {"", "x", "3-1", "1,", "-1", "1-", "99999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(crs_criu_cpulist_parse(bad[i], &set), CRMPI_ERR_BAD_PARAM);
    }
}

static void tst_remap_expect(const char *cpus, const char *old_set, const char *new_set,
                             const char *want)
{
    cpu_set_t a = tst_set(cpus), b = tst_set(old_set), c = tst_set(new_set), out;
    char text[128];
    crs_criu_remap(&a, &b, &c, &out);
    crs_criu_cpulist_format(&out, text, sizeof(text));
    assert_string_equal(text, want);
}

static void test_remap(void **state)
{
    (void)state;
    tst_remap_expect("1", "0-1", "0", "0");           /* 2nd of 2 onto a single CPU */
    tst_remap_expect("3", "2-3", "4-6", "5");         /* 2nd stays 2nd */
    tst_remap_expect("2-3", "2-3", "8-9", "8-9");     /* whole set onto whole set */
    tst_remap_expect("5", "4-7", "0-1", "1");         /* 2nd of 4 onto 2: position 1 */
    tst_remap_expect("7", "4-7", "0-1", "1");         /* 4th of 4 onto 2: 3 mod 2 = 1 */
    tst_remap_expect("0", "2-3", "4-5", "4-5");       /* outside the old set: all new */
    tst_remap_expect("2,3", "0-3", "10,20", "10,20"); /* 3rd and 4th onto 2 CPUs */
}

static int tst_tmpdir(char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, len, "%s/crs-meta-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
    assert_non_null(mkdtemp(path));
    return open(path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
}

static void tst_rmdir(int dirfd, const char *path)
{
    unlinkat(dirfd, CRS_CRIU_META_FILE, 0);
    close(dirfd);
    rmdir(path);
}

static void test_write_read(void **state)
{
    (void)state;
    char path[256];
    int dirfd = tst_tmpdir(path, sizeof(path));
    crs_criu_meta_t meta, back;
    crs_criu_thread_rec_t threads[2];
    memset(&meta, 0, sizeof(meta));
    memset(threads, 0, sizeof(threads));
    meta.cpuset = tst_set("0-3");
    meta.have_fd[0] = meta.have_fd[3] = 1;
    snprintf(meta.key[0], sizeof(meta.key[0]), "pipe:[11]");
    snprintf(meta.key[3], sizeof(meta.key[3]), "socket:[4294967295]");
    threads[0] = (crs_criu_thread_rec_t){.ns_pid = 1, .ns_tid = 1, .cpus = tst_set("0-3")};
    threads[1] = (crs_criu_thread_rec_t){.ns_pid = 4242, .ns_tid = 2, .cpus = tst_set("2")};
    snprintf(threads[0].mems, sizeof(threads[0].mems), "0");
    snprintf(threads[1].mems, sizeof(threads[1].mems), "0-1");
    meta.threads = threads;
    meta.num_threads = 2;
    assert_int_equal(crs_criu_meta_write(dirfd, &meta), CRMPI_OK);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_OK);
    assert_true(CPU_EQUAL(&back.cpuset, &meta.cpuset));
    assert_true(back.have_fd[0] && !back.have_fd[1] && !back.have_fd[2] && back.have_fd[3]);
    assert_string_equal(back.key[0], "pipe:[11]");
    assert_string_equal(back.key[3], "socket:[4294967295]");
    assert_int_equal(back.num_threads, 2);
    assert_int_equal(back.threads[1].ns_pid, 4242);
    assert_int_equal(back.threads[1].ns_tid, 2);
    assert_true(CPU_EQUAL(&back.threads[1].cpus, &threads[1].cpus));
    assert_string_equal(back.threads[1].mems, "0-1");
    crs_criu_meta_free(&back);

    /* Lines of a later version are ignored; another format is refused. */
    int fd = openat(dirfd, CRS_CRIU_META_FILE, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "numa 0 interleave\n", 18), 18);
    close(fd);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_OK);
    assert_int_equal(back.num_threads, 2);
    crs_criu_meta_free(&back);
    fd = openat(dirfd, CRS_CRIU_META_FILE, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, "crmpi-crs-criu 2\n", 17), 17);
    close(fd);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_ERR_PROTO);
    fd = openat(dirfd, CRS_CRIU_META_FILE, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, "crmpi-crs-criu 1\nthread 1 1 3-1 0\n", 34), 34);
    close(fd);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_ERR_PROTO);
    tst_rmdir(dirfd, path);
}

/* Records as long as /proc can make them: a mask of every other CPU (the CPUs of one socket
 * where the sockets' CPUs alternate) is a list of thousands of characters, and a path may
 * be PATH_MAX long. Both used to be cut short, the list when written, the path when read. */
static void test_write_read_long_lines(void **state)
{
    (void)state;
    char path[256], file_path[4000];
    int dirfd = tst_tmpdir(path, sizeof(path));
    crs_criu_meta_t meta, back;
    crs_criu_thread_rec_t thread = {.ns_pid = 1, .ns_tid = 1, .mems = "0"};
    crs_criu_file_rec_t file = {.size = 12, .path = file_path};
    memset(&meta, 0, sizeof(meta));
    CPU_ZERO(&meta.cpuset);
    CPU_ZERO(&thread.cpus);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        CPU_SET(cpu, cpu % 2 ? &thread.cpus : &meta.cpuset);
    }
    memset(file_path, 'd', sizeof(file_path) - 1);
    file_path[sizeof(file_path) - 1] = '\0';
    for (size_t i = 0; i < sizeof(file_path) - 1; i += 100) {
        file_path[i] = '/';
    }
    meta.threads = &thread;
    meta.num_threads = 1;
    meta.files = &file;
    meta.num_files = 1;
    assert_int_equal(crs_criu_meta_write(dirfd, &meta), CRMPI_OK);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_OK);
    assert_true(CPU_EQUAL(&back.cpuset, &meta.cpuset));
    assert_int_equal(back.num_threads, 1);
    assert_true(CPU_EQUAL(&back.threads[0].cpus, &thread.cpus));
    assert_int_equal(back.num_files, 1);
    assert_int_equal(back.files[0].size, 12);
    assert_string_equal(back.files[0].path, file_path);
    crs_criu_meta_free(&back);
    tst_rmdir(dirfd, path);
}

static void *tst_sleeper(void *arg)
{
    (void)arg;
    pause();
    return NULL;
}

/* Collect from this very process: its fds 0..3 and both of its threads, with the masks
 * the kernel reports. */
static void test_collect_self(void **state)
{
    (void)state;
    pthread_t thread;
    crs_criu_meta_t meta;
    int sv[2];
    cpu_set_t one = tst_set("0");
    assert_int_equal(pthread_create(&thread, NULL, tst_sleeper, NULL), 0);
    assert_int_equal(pthread_setaffinity_np(thread, sizeof(one), &one), 0);
    /* Make fd 3 a socket whatever the test harness left there. */
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int saved3 = fcntl(3, F_DUPFD_CLOEXEC, 10);
    assert_int_equal(dup2(sv[0], 3), 3);
    assert_int_equal(crs_criu_meta_collect(getpid(), &meta), CRMPI_OK);
    assert_true(meta.have_fd[3]);
    assert_memory_equal(meta.key[3], "socket:[", 8);
    assert_int_equal(meta.num_threads, 2);
    int pinned = 0;
    for (size_t i = 0; i < meta.num_threads; i++) {
        assert_int_equal(meta.threads[i].ns_pid, getpid()); /* same namespace here */
        pinned += CPU_EQUAL(&meta.threads[i].cpus, &one);
    }
    assert_true(pinned >= 1);
    crs_criu_meta_free(&meta);
    if (saved3 >= 0) {
        dup2(saved3, 3);
        close(saved3);
    } else {
        close(3);
    }
    close(sv[0]);
    close(sv[1]);
    pthread_cancel(thread);
    pthread_join(thread, NULL);
    assert_int_equal(crs_criu_meta_collect(-5, &meta), CRMPI_ERR_NOT_FOUND);
}

/* A file mapped shared and writable, sparse: collected as mapped, kept in the record,
 * copied into the images with its holes, and put back as it was after the mapping wrote
 * into it. */
static void test_mapped_files(void **state)
{
    (void)state;
    const size_t size = (size_t)8 << 20, far = (size_t)6 << 20;
    char path[256], heap[300], copy[300];
    int dirfd = tst_tmpdir(path, sizeof(path));
    crs_criu_meta_t meta, back;
    struct stat st;

    snprintf(heap, sizeof(heap), "%s/heap", path);
    int fd = open(heap, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    unsigned char *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(map != MAP_FAILED);
    memset(map, 'a', 4096);
    memset(map + far, 'b', 4096);

    assert_int_equal(crs_criu_meta_collect(getpid(), &meta), CRMPI_OK);
    size_t index = meta.num_files;
    for (size_t i = 0; i < meta.num_files; i++)
        if (strcmp(meta.files[i].path, heap) == 0)
            index = i;
    assert_true(index < meta.num_files);
    assert_int_equal(meta.files[index].kind, CRS_CRIU_FILE_MAPPED);
    assert_int_equal(meta.files[index].size, size);
    assert_int_equal(crs_criu_meta_write(dirfd, &meta), CRMPI_OK);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_OK);
    assert_int_equal(back.num_files, meta.num_files);
    assert_int_equal(back.files[index].kind, CRS_CRIU_FILE_MAPPED);
    assert_string_equal(back.files[index].path, heap);

    char err[512] = "";
    assert_int_equal(crs_criu_mapped_save(&meta, dirfd, err, sizeof(err)), CRMPI_OK);
    snprintf(copy, sizeof(copy), "%s/" CRS_CRIU_MAPPED_FMT, path, index);
    assert_int_equal(stat(copy, &st), 0);
    assert_int_equal(st.st_size, size);
    assert_true((uint64_t)st.st_blocks * 512 < size / 2); /* the holes stayed holes */

    memset(map, 'x', 4096); /* the run goes on after the checkpoint */
    memset(map + far + 4096, 'y', 4096);
    munmap(map, size);
    close(fd);
    assert_int_equal(crs_criu_mapped_restore(&back, dirfd, err, sizeof(err)), CRMPI_OK);
    fd = open(heap, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, size);
    unsigned char page[3][4096], want[4096];
    assert_int_equal(pread(fd, page[0], 4096, 0), 4096);
    assert_int_equal(pread(fd, page[1], 4096, (off_t)far), 4096);
    assert_int_equal(pread(fd, page[2], 4096, (off_t)far + 4096), 4096);
    close(fd);
    memset(want, 'a', sizeof(want));
    assert_memory_equal(page[0], want, 4096);
    memset(want, 'b', sizeof(want));
    assert_memory_equal(page[1], want, 4096);
    memset(want, 0, sizeof(want));
    assert_memory_equal(page[2], want, 4096);

    /* A copy missing from the images: the restart says which file. */
    unlink(copy);
    assert_int_equal(crs_criu_mapped_restore(&back, dirfd, err, sizeof(err)), CRMPI_ERR_NOT_FOUND);
    assert_non_null(strstr(err, heap));
    crs_criu_meta_free(&meta);
    crs_criu_meta_free(&back);
    unlink(heap);
    tst_rmdir(dirfd, path);
}

/* A file open for writing whose content is kept (crs_criu_file_content): the record names it
 * "cfile", the checkpoint copies it, and the restart puts it back as it was, whatever the
 * run wrote into it since. */
static void test_written_file_content(void **state)
{
    (void)state;
    char path[256], out[300], err[512] = "", text[64] = "";
    int dirfd = tst_tmpdir(path, sizeof(path));
    crs_criu_meta_t back;

    snprintf(out, sizeof(out), "%s/out", path);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    fputs("line 1\nline 2\n", f);
    fclose(f);
    crs_criu_file_rec_t rec = {.size = 14, .path = out, .kind = CRS_CRIU_FILE_CONTENT};
    crs_criu_meta_t meta = {.files = &rec, .num_files = 1};
    assert_int_equal(crs_criu_meta_write(dirfd, &meta), CRMPI_OK);
    assert_int_equal(crs_criu_meta_read(dirfd, &back), CRMPI_OK);
    assert_int_equal(back.num_files, 1);
    assert_int_equal(back.files[0].kind, CRS_CRIU_FILE_CONTENT);
    assert_int_equal(crs_criu_mapped_save(&back, dirfd, err, sizeof(err)), CRMPI_OK);

    f = fopen(out, "w"); /* rewritten shorter in place: a size check alone cannot help */
    assert_non_null(f);
    fputs("other\n", f);
    fclose(f);
    assert_int_equal(crs_criu_files_restore(&back, err, sizeof(err)), CRMPI_OK);
    assert_int_equal(crs_criu_mapped_restore(&back, dirfd, err, sizeof(err)), CRMPI_OK);
    f = fopen(out, "r");
    assert_non_null(f);
    assert_int_equal(fread(text, 1, sizeof(text) - 1, f), 14);
    fclose(f);
    assert_string_equal(text, "line 1\nline 2\n");
    crs_criu_meta_free(&back);
    snprintf(out, sizeof(out), "%s/" CRS_CRIU_MAPPED_FMT, path, (size_t)0);
    unlink(out);
    snprintf(out, sizeof(out), "%s/out", path);
    unlink(out);
    tst_rmdir(dirfd, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpulist),
        cmocka_unit_test(test_remap),
        cmocka_unit_test(test_write_read),
        cmocka_unit_test(test_write_read_long_lines),
        cmocka_unit_test(test_collect_self),
        cmocka_unit_test(test_mapped_files),
        cmocka_unit_test(test_written_file_content),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
