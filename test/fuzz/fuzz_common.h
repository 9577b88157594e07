/*
 * fuzz_common.h: what the fuzz targets of test/fuzz share (run.sh builds them with
 * libFuzzer; README.md says how to run them).
 *
 * The readers under test take a file by its directory (snapshot.json, manifest.json,
 * rank.json, crs-criu.meta) or its path (the parameter file): each target writes the input
 * into a private directory under $TMPDIR, made once per process and removed at exit (or by
 * run.sh: libFuzzer's own end of a run skips exit handlers), and reads it back through
 * crmpi's own function. A property a target checks (a record written again reads
 * back the same) fails through fuzz_check, which aborts: libFuzzer keeps the input.
 */
#ifndef CRMPI_FUZZ_COMMON_H
#define CRMPI_FUZZ_COMMON_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The private directory and the files a target made in it (removed at exit). */
static char fuzz_dir_path[4096];
static char fuzz_made[8][4096];
static int fuzz_num_made;

static inline void fuzz_dir_remove(void)
{
    for (int i = fuzz_num_made - 1; i >= 0; i--)
        remove(fuzz_made[i]);
    rmdir(fuzz_dir_path);
}

/* The private directory, made on first use ($TMPDIR, else /tmp). */
static inline const char *fuzz_dir(void)
{
    const char *tmp = getenv("TMPDIR");

    if (fuzz_dir_path[0])
        return fuzz_dir_path;
    snprintf(fuzz_dir_path, sizeof(fuzz_dir_path), "%s/crmpi-fuzz-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(fuzz_dir_path)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    atexit(fuzz_dir_remove);
    return fuzz_dir_path;
}

/* fuzz_dir()/name (a subdirectory when `is_dir`), remembered for removal; made once. */
static inline const char *fuzz_path(const char *name, int is_dir)
{
    for (int i = 0; i < fuzz_num_made; i++) {
        const char *base = strrchr(fuzz_made[i], '/') + 1;
        if (strcmp(base, name) == 0)
            return fuzz_made[i];
    }
    if (fuzz_num_made == (int)(sizeof(fuzz_made) / sizeof(fuzz_made[0])))
        abort();
    snprintf(fuzz_made[fuzz_num_made], sizeof(fuzz_made[0]), "%s/%s", fuzz_dir(), name);
    if (is_dir && mkdir(fuzz_made[fuzz_num_made], 0700) != 0) {
        perror("fuzz: mkdir");
        abort();
    }
    return fuzz_made[fuzz_num_made++];
}

/* Replace the file at `path` with the input. */
static inline void fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t)size)) {
        perror("fuzz: writing the input");
        abort();
    }
    close(fd);
}

/* A property of the reader does not hold: say which, and abort (libFuzzer keeps the input). */
#define fuzz_check(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif /* CRMPI_FUZZ_COMMON_H */
