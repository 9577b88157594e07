/*
 * fuzz_crs_meta.c: crs-criu.meta, the record the criu checkpointer keeps beside a rank's
 * image (crs-criu/crs_criu_meta.c), as crs_criu_meta_read reads it at restart from the
 * snapshot's storage.
 *
 * Properties: a record read successfully, written again (crs_criu_meta_write), reads back
 * the same; so does a record whose CPU sets are the input's bytes taken as masks (what
 * /proc gives crs_criu_meta_collect: any set of CPUs, however scattered).
 */
#include "config.h"

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "crs_criu_int.h"
#include "fuzz_common.h"

static void fuzz_meta_same(const crs_criu_meta_t *a, const crs_criu_meta_t *b)
{
    fuzz_check(CPU_EQUAL(&a->cpuset, &b->cpuset));
    for (int fd = 0; fd < CRMPI_CRS_NUM_FDS; fd++) {
        fuzz_check(a->have_fd[fd] == b->have_fd[fd]);
        fuzz_check(!a->have_fd[fd] || strcmp(a->key[fd], b->key[fd]) == 0);
    }
    fuzz_check(a->num_threads == b->num_threads);
    for (size_t i = 0; i < a->num_threads; i++) {
        fuzz_check(a->threads[i].ns_pid == b->threads[i].ns_pid);
        fuzz_check(a->threads[i].ns_tid == b->threads[i].ns_tid);
        fuzz_check(CPU_EQUAL(&a->threads[i].cpus, &b->threads[i].cpus));
        fuzz_check(strcmp(a->threads[i].mems, b->threads[i].mems) == 0);
    }
    fuzz_check(a->num_nodes == b->num_nodes);
    for (size_t i = 0; i < a->num_nodes; i++)
        fuzz_check(memcmp(&a->nodes[i], &b->nodes[i], sizeof(a->nodes[i])) == 0);
    fuzz_check(a->num_vmas == b->num_vmas);
    for (size_t i = 0; i < a->num_vmas; i++) {
        fuzz_check(a->vmas[i].ns_pid == b->vmas[i].ns_pid);
        fuzz_check(a->vmas[i].start == b->vmas[i].start && a->vmas[i].end == b->vmas[i].end);
        fuzz_check(a->vmas[i].mode == b->vmas[i].mode && a->vmas[i].flags == b->vmas[i].flags);
        fuzz_check(a->vmas[i].mode < 0 || a->vmas[i].policy_nodes == b->vmas[i].policy_nodes);
        fuzz_check(memcmp(a->vmas[i].pages, b->vmas[i].pages, sizeof(a->vmas[i].pages)) == 0);
        fuzz_check(a->vmas[i].num_runs == b->vmas[i].num_runs);
        fuzz_check(a->vmas[i].num_runs == 0 ||
                   memcmp(a->vmas[i].runs, b->vmas[i].runs,
                          a->vmas[i].num_runs * sizeof(a->vmas[i].runs[0])) == 0);
    }
    fuzz_check(a->num_files == b->num_files);
    for (size_t i = 0; i < a->num_files; i++) {
        fuzz_check(a->files[i].size == b->files[i].size);
        fuzz_check(strcmp(a->files[i].path, b->files[i].path) == 0);
    }
}

/* Write `meta` into `dir` and read it back: the same record. */
static void fuzz_meta_round_trip(const char *dir, const crs_criu_meta_t *meta)
{
    int dirfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    crs_criu_meta_t again;

    fuzz_check(dirfd >= 0);
    fuzz_check(crs_criu_meta_write(dirfd, meta) == CRMPI_OK);
    fuzz_check(crs_criu_meta_read(dirfd, &again) == CRMPI_OK);
    fuzz_meta_same(meta, &again);
    crs_criu_meta_free(&again);
    close(dirfd);
}

/* CPU masks from the input's bytes: the init's set, and one thread's. */
static void fuzz_meta_masks(const char *dir, const uint8_t *data, size_t size)
{
    const size_t mask_bytes = CPU_SETSIZE / 8;
    crs_criu_thread_rec_t thread = {.ns_pid = 1, .ns_tid = 1, .mems = "0"};
    crs_criu_meta_t meta;

    memset(&meta, 0, sizeof(meta));
    CPU_ZERO(&meta.cpuset);
    CPU_ZERO(&thread.cpus);
    for (size_t cpu = 0; cpu < CPU_SETSIZE && cpu / 8 < size; cpu++) {
        if (data[cpu / 8] & (1u << (cpu % 8)))
            CPU_SET(cpu, &meta.cpuset);
        if (cpu / 8 + mask_bytes < size && data[cpu / 8 + mask_bytes] & (1u << (cpu % 8)))
            CPU_SET(cpu, &thread.cpus);
    }
    meta.threads = &thread;
    meta.num_threads = 1;
    fuzz_meta_round_trip(dir, &meta);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = fuzz_path("criu", 1);
    const char *copy_dir = fuzz_path("criu-copy", 1);
    char path[4200];
    crs_criu_meta_t meta;
    cpu_set_t remapped;
    int dirfd;

    snprintf(path, sizeof(path), "%s/%s", dir, CRS_CRIU_META_FILE);
    fuzz_write_file(path, data, size);
    dirfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    fuzz_check(dirfd >= 0);
    if (crs_criu_meta_read(dirfd, &meta) == CRMPI_OK) {
        for (size_t i = 0; i < meta.num_threads; i++)
            crs_criu_remap(&meta.threads[i].cpus, &meta.cpuset, &meta.cpuset, &remapped);
        fuzz_meta_round_trip(copy_dir, &meta);
        crs_criu_meta_free(&meta);
    }
    close(dirfd);
    fuzz_meta_masks(copy_dir, data, size);
    return 0;
}
