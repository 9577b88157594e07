/*
 * pheap_util.c: error messages, the environment libcrmpi-pheap reads, and its fault points.
 *
 * The library is used without MPI, so it has no MCA parameters and no access to the
 * run-time's logging; the two variables it reads are read here and nowhere else:
 *   CRMPI_PHEAP_ADDRESS  the address of a heap mopen() creates (pheap(3))
 *   CRMPI_FAULT          armed fault points, with the syntax of runtime/fault.h; the points
 *                        are listed there too, so that libmpi does not warn about them
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pheap_internal.h"

/* The environment variable naming a new heap's address. */
#define PHEAP_ADDRESS_ENV "CRMPI_PHEAP_ADDRESS"
/* The environment variable arming fault points (shared with runtime/fault.h). */
#define PHEAP_FAULT_ENV "CRMPI_FAULT"

/* A fault point of the library and the times it was reached. */
typedef struct pheap_fault_point {
    const char *name;   /* as armed in CRMPI_FAULT */
    unsigned long hits; /* times reached in this process */
} pheap_fault_point_t;

/* Every fault point; runtime/fault.c lists them with their descriptions. */
static pheap_fault_point_t pheap_fault_points[] = {
    {"pheap_backup_stop_mid_write", 0},
    {"pheap_backup_stop_before_rename", 0},
};

void pheap_error(const char *fmt, ...)
{
    int saved_errno = errno;
    char line[1024];
    size_t len;
    va_list ap;

    memcpy(line, "pheap: ", 7);
    va_start(ap, fmt);
    vsnprintf(line + 7, sizeof(line) - 8, fmt, ap);
    va_end(ap);
    len = strlen(line);
    line[len++] = '\n';
    /* One write(2), unbuffered: lines of processes sharing stderr do not mix, and a message
     * written just before abort() is not lost in a stdio buffer. */
    if (write(STDERR_FILENO, line, len) < 0) {
        /* nowhere left to report it */
    }
    errno = saved_errno;
}

int pheap_address_for_new_heap(uintptr_t *address_out)
{
    const char *text = getenv(PHEAP_ADDRESS_ENV);
    unsigned long long value;
    char *end;

    if (!text || !*text) {
        *address_out = PHEAP_DEFAULT_ADDRESS;
        return 0;
    }
    errno = 0;
    value = strtoull(text, &end, 0);
    if (errno || *end || value == 0 || value % (unsigned long long)sysconf(_SC_PAGESIZE)) {
        pheap_error("%s=%s is not a page-aligned address (for example 0x%llx)", PHEAP_ADDRESS_ENV,
                    text, (unsigned long long)PHEAP_DEFAULT_ADDRESS);
        errno = EINVAL;
        return -1;
    }
    *address_out = (uintptr_t)value;
    return 0;
}

/* Does the CRMPI_FAULT list arm `name` for its hit number `hit`? */
static int pheap_fault_armed(const char *list, const char *name, unsigned long hit)
{
    size_t name_len = strlen(name);
    const char *entry = list;

    while (*entry) {
        size_t entry_len = strcspn(entry, ",");
        const char *colon = memchr(entry, ':', entry_len);
        size_t id_len = colon ? (size_t)(colon - entry) : entry_len;

        if (id_len == name_len && strncmp(entry, name, name_len) == 0) {
            if (!colon || strtoul(colon + 1, NULL, 10) == hit)
                return 1;
        }
        entry += entry_len;
        if (*entry == ',')
            entry++;
    }
    return 0;
}

void pheap_fault_stop(const char *name)
{
    const char *list = getenv(PHEAP_FAULT_ENV);
    pheap_fault_point_t *point = NULL;

    for (size_t i = 0; i < sizeof(pheap_fault_points) / sizeof(pheap_fault_points[0]); i++)
        if (strcmp(pheap_fault_points[i].name, name) == 0)
            point = &pheap_fault_points[i];
    if (!point) {
        pheap_error("internal error: unknown fault point %s", name);
        return;
    }
    point->hits++;
    if (!list || !pheap_fault_armed(list, name, point->hits))
        return;
    pheap_error("fault injected: %s (the process stops itself)", name);
    raise(SIGSTOP);
}

size_t pheap_page_round(size_t nbytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    return (nbytes + page - 1) / page * page;
}

void pheap_hex(const uint8_t *buf, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[buf[i] >> 4];
        out[2 * i + 1] = digits[buf[i] & 0xf];
    }
    out[2 * len] = '\0';
}
