/*
 * software.c: the files a rank maps, recorded at its dump and checked before a restart
 * (software.h).
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "software.h"

#define SOFTWARE_SECTION "software"

/* The GNU build-id note of a 64-bit ELF file, in hex; "" when it has none. */
static void software_build_id(const char *path, char *hex, size_t len)
{
    Elf64_Ehdr ehdr;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    hex[0] = '\0';
    if (fd < 0)
        return;
    if (pread(fd, &ehdr, sizeof(ehdr), 0) != (ssize_t)sizeof(ehdr) ||
        memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 || ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
        ehdr.e_phentsize != sizeof(Elf64_Phdr) || ehdr.e_phnum > 256) {
        close(fd);
        return;
    }
    for (unsigned i = 0; i < ehdr.e_phnum && !hex[0]; i++) {
        unsigned char notes[1024];
        Elf64_Phdr phdr;
        ssize_t got;

        if (pread(fd, &phdr, sizeof(phdr), (off_t)(ehdr.e_phoff + i * sizeof(phdr))) !=
                (ssize_t)sizeof(phdr) ||
            phdr.p_type != PT_NOTE)
            continue;
        got = pread(fd, notes, phdr.p_filesz < sizeof(notes) ? phdr.p_filesz : sizeof(notes),
                    (off_t)phdr.p_offset);
        for (size_t at = 0; got > 0 && at + sizeof(Elf64_Nhdr) <= (size_t)got;) {
            const Elf64_Nhdr *note = (const Elf64_Nhdr *)(notes + at);
            size_t name_at = at + sizeof(*note), desc_at = name_at + ((note->n_namesz + 3) & ~3u);

            if (desc_at + note->n_descsz > (size_t)got)
                break;
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                memcmp(notes + name_at, "GNU", 4) == 0 && 2 * note->n_descsz < len) {
                for (size_t b = 0; b < note->n_descsz; b++)
                    sprintf(hex + 2 * b, "%02x", notes[desc_at + b]);
                break;
            }
            at = desc_at + ((note->n_descsz + 3) & ~3u);
        }
    }
    close(fd);
}

int crmpi_filem_software_record(crmpi_filem_rank_info_t *info, pid_t pid)
{
    char maps[64], line[4608], path[4096], build_id[129], value[4400];
    FILE *f;
    int rc = CRMPI_OK;

    snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
    f = fopen(maps, "re");
    if (!f)
        return CRMPI_ERR_IO;
    while (rc == CRMPI_OK && fgets(line, sizeof(line), f)) {
        struct stat st;

        /* address perms offset dev inode path: only mappings of files by absolute path */
        if (sscanf(line, "%*s %*s %*s %*s %*s %4095[^\n]", path) != 1 || path[0] != '/' ||
            strstr(path, " (deleted)") || strncmp(path, "/dev/", 5) == 0 || stat(path, &st) < 0 ||
            !S_ISREG(st.st_mode))
            continue;
        software_build_id(path, build_id, sizeof(build_id));
        snprintf(value, sizeof(value), "{\"size\": %lld, \"build_id\": \"%s\"}",
                 (long long)st.st_size, build_id);
        rc = crmpi_filem_rank_info_set_json(info, SOFTWARE_SECTION, path, value);
    }
    fclose(f);
    return rc;
}

typedef struct software_check {
    int rc;
    char *problem;
    size_t len;
} software_check_t;

static int software_check_one(const char *section, const char *path, const char *value_text,
                              void *arg)
{
    software_check_t *check = arg;
    json_t *value;
    const char *want_id = "";
    json_int_t want_size = -1;
    char build_id[129];
    struct stat st;

    if (strcmp(section, SOFTWARE_SECTION) != 0)
        return 0;
    if (stat(path, &st) < 0) {
        snprintf(check->problem, check->len, "%s is not here (%s)", path, strerror(errno));
        check->rc = CRMPI_ERR_NOT_FOUND;
        return 1;
    }
    value = json_loads(value_text, 0, NULL);
    if (json_unpack(value, "{s:I, s:s}", "size", &want_size, "build_id", &want_id) != 0) {
        json_decref(value);
        return 0; /* written by another version: CRIU still checks the file */
    }
    software_build_id(path, build_id, sizeof(build_id));
    if (want_id[0] && strcmp(build_id, want_id) != 0) {
        snprintf(check->problem, check->len,
                 "%s is not the file the job ran (its ELF build-id is %s, the checkpointed "
                 "one's %s)",
                 path, build_id[0] ? build_id : "missing", want_id);
        check->rc = CRMPI_ERR_BAD_PARAM;
    } else if ((json_int_t)st.st_size != want_size) {
        snprintf(check->problem, check->len,
                 "%s is not the file the job ran (%lld bytes, the checkpointed one had %lld)", path,
                 (long long)st.st_size, (long long)want_size);
        check->rc = CRMPI_ERR_BAD_PARAM;
    }
    json_decref(value);
    return check->rc != CRMPI_OK;
}

int crmpi_filem_software_check(const crmpi_filem_rank_info_t *info, char *problem, size_t len)
{
    software_check_t check = {.rc = CRMPI_OK, .problem = problem, .len = len};
    int rc = crmpi_filem_rank_info_foreach(info, software_check_one, &check);

    return rc != CRMPI_OK ? rc : check.rc;
}
