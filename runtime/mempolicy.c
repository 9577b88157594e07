/*
 * mempolicy.c: memory policies of address ranges handed to a restored rank (mempolicy.h).
 * mbind is called through syscall(2): the system call is all that is needed, and libnuma
 * would be one more library in every rank for one call.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"
#include "mempolicy.h"

/* The longest text of one area: pid, two addresses, mode, flags, mask and separators. */
#define MEMPOLICY_AREA_TEXT_MAX 96

int crmpi_mempolicy_format(const crmpi_mempolicy_area_t *areas, size_t num_areas, char **text_out)
{
    char *text = malloc(num_areas * MEMPOLICY_AREA_TEXT_MAX + 1);
    size_t used = 0;

    if (!text)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    text[0] = '\0';
    for (size_t i = 0; i < num_areas; i++) {
        const crmpi_mempolicy_area_t *area = &areas[i];
        int n =
            snprintf(text + used, MEMPOLICY_AREA_TEXT_MAX + 1,
                     "%s%d:%" PRIx64 "-%" PRIx64 ":%d:%x:%" PRIx64, i ? "," : "", (int)area->pid,
                     area->start, area->end, area->mode, area->flags, area->nodes);
        used += (size_t)n;
    }
    *text_out = text;
    return CRMPI_OK;
}

int crmpi_mempolicy_parse(const char *text, crmpi_mempolicy_area_t **areas_out,
                          size_t *num_areas_out)
{
    crmpi_mempolicy_area_t *areas = NULL;
    size_t num = 0, cap = 0;
    const char *p = text;

    while (*p) {
        crmpi_mempolicy_area_t area;
        unsigned long long start, end, nodes;
        int pid, mode, used = 0;
        unsigned flags;

        if (sscanf(p, "%d:%llx-%llx:%d:%x:%llx%n", &pid, &start, &end, &mode, &flags, &nodes,
                   &used) != 6 ||
            used <= 0 || pid <= 0 || start >= end || mode < MPOL_DEFAULT || mode >= MPOL_MAX ||
            (flags & ~(unsigned)(MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES)) != 0 ||
            (p[used] != ',' && p[used] != '\0') || (p[used] == ',' && p[used + 1] == '\0')) {
            free(areas);
            return CRMPI_ERR_PROTO;
        }
        if (num == cap) {
            crmpi_mempolicy_area_t *grown;

            cap = cap ? cap * 2 : 16;
            grown = realloc(areas, cap * sizeof(*areas));
            if (!grown) {
                free(areas);
                return CRMPI_ERR_OUT_OF_RESOURCE;
            }
            areas = grown;
        }
        area = (crmpi_mempolicy_area_t){
            .pid = pid, .start = start, .end = end, .mode = mode, .flags = flags, .nodes = nodes};
        areas[num++] = area;
        p += used + (p[used] == ',');
    }
    *areas_out = areas;
    *num_areas_out = num;
    return CRMPI_OK;
}

int crmpi_mempolicy_apply(const crmpi_mempolicy_area_t *areas, size_t num_areas,
                          size_t *applied_out)
{
    pid_t self = getpid();
    size_t applied = 0;

    for (size_t i = 0; i < num_areas; i++) {
        const crmpi_mempolicy_area_t *area = &areas[i];
        unsigned long mask = (unsigned long)area->nodes;
        /* MPOL_DEFAULT and MPOL_LOCAL take no nodes; the others at least one. */
        int no_nodes = area->mode == MPOL_DEFAULT || area->mode == MPOL_LOCAL;

        if (area->pid != self)
            continue;
        if (syscall(SYS_mbind, (void *)(uintptr_t)area->start, (size_t)(area->end - area->start),
                    area->mode | (int)area->flags, no_nodes ? NULL : &mask,
                    no_nodes ? 0UL : (unsigned long)CRMPI_MEMPOLICY_MAX_NODES + 1, 0U) < 0) {
            crmpi_log_warn("memory policy %d (nodes 0x%" PRIx64 ") of %" PRIx64 "-%" PRIx64
                           " could not be restored: %s; the area keeps the default policy",
                           area->mode, area->nodes, area->start, area->end, strerror(errno));
            continue;
        }
        applied++;
    }
    *applied_out = applied;
    return CRMPI_OK;
}
