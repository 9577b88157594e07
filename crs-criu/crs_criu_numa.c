/*
 * crs_criu_numa.c: memory placement across a checkpoint (crs_criu_int.h, "Memory
 * placement"; docs/design.md, "Memory placement").
 *
 * Where the facts come from. A process's memory policies and the node of its pages can be
 * asked with get_mempolicy(MPOL_F_ADDR) and move_pages() only by the process itself for
 * policies; from outside, /proc/<pid>/numa_maps shows both, per mapping: the mapping's own
 * policy (mbind) and how many of its resident pages are on each node. That is enough to put
 * pages back where they were when a mapping's pages were on one node, which is what
 * first-touch placement and a bound policy make; numa_maps costs one read per process, where
 * asking move_pages() for every page of a large rank costs a system call per thousand
 * pages at checkpoint and the record would grow with the memory. Mappings whose pages were
 * spread over several nodes are left where the restorer puts them (or where their
 * interleave policy, re-applied, puts new pages).
 *
 * A thread's own policy (set_mempolicy) is what numa_maps shows for an area without a
 * policy of its own, and /proc/<pid>/task/<tid>/numa_maps shows it with that thread's
 * eyes. So each thread's policy is read from the first line of its numa_maps (the program's
 * first mapping, which nothing binds; one short read, not a walk of every area), and an area
 * of the process's numa_maps that shows the main thread's policy is taken to have none of
 * its own. (An area given exactly that policy by mbind is recorded without one: it then
 * follows the main thread's policy, which the restart gives back.) Mems_allowed (a cgroup
 * property) is recorded per thread beside its CPUs, for information.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <inttypes.h>
#include <linux/mempolicy.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "crs_criu_int.h"
#include "log.h"
#include "mempolicy.h"
#include "param.h"
#include "uffd_wp.h"

/* Pages asked or moved per move_pages call. */
#define CRS_CRIU_NUMA_BATCH 1024
/* The page size move_pages addresses step by (a huge page moves whole from any of its). */
#define CRS_CRIU_NUMA_PAGE 4096

/* Policy names: numa_maps' (the kernel's mpol_to_str) and the record's, by MPOL_ mode. */
static const struct {
    const char *kernel; /* as numa_maps writes it */
    const char *record; /* without spaces */
    int mode;           /* MPOL_* */
} crs_criu_numa_modes[] = {
    {"default", "default", MPOL_DEFAULT},
    {"prefer (many)", "prefer-many", MPOL_PREFERRED_MANY},
    {"prefer", "prefer", MPOL_PREFERRED},
    {"bind", "bind", MPOL_BIND},
    {"interleave", "interleave", MPOL_INTERLEAVE},
    {"local", "local", MPOL_LOCAL},
};
#define CRS_CRIU_NUMA_NUM_MODES (sizeof(crs_criu_numa_modes) / sizeof(crs_criu_numa_modes[0]))

/* A node list ("0-1,3") as a mask; nodes past the limit make it an error. */
static int crs_criu_numa_nodelist_parse(const char *text, uint64_t *mask_out)
{
    cpu_set_t set;
    uint64_t mask = 0;

    if (crs_criu_cpulist_parse(text, &set) != CRMPI_OK)
        return CRMPI_ERR_BAD_PARAM;
    for (int node = 0; node < CPU_SETSIZE; node++) {
        if (!CPU_ISSET(node, &set))
            continue;
        if (node >= CRS_CRIU_NUMA_MAX_NODES)
            return CRMPI_ERR_BAD_PARAM;
        mask |= 1ULL << node;
    }
    *mask_out = mask;
    return CRMPI_OK;
}

int crs_criu_numa_policy_parse(const char *text, int *mode_out, unsigned *flags_out,
                               uint64_t *nodes_out)
{
    const char *p = NULL;
    unsigned flags = 0;
    uint64_t nodes = 0;
    int mode = -1;

    for (size_t i = 0; i < CRS_CRIU_NUMA_NUM_MODES && mode < 0; i++) {
        const char *names[2] = {crs_criu_numa_modes[i].kernel, crs_criu_numa_modes[i].record};
        for (int n = 0; n < 2; n++) {
            size_t len = strlen(names[n]);
            if (strncmp(text, names[n], len) == 0 &&
                (text[len] == '\0' || text[len] == ':' || text[len] == '=')) {
                mode = crs_criu_numa_modes[i].mode;
                p = text + len;
                break;
            }
        }
    }
    if (mode < 0) {
        /* "weighted interleave" and whatever later kernels add: known to be a policy. */
        return strspn(text, "abcdefghijklmnopqrstuvwxyz") > 0 ? CRMPI_ERR_NOT_SUPPORTED
                                                              : CRMPI_ERR_BAD_PARAM;
    }
    if (*p == '=') {
        p++;
        if (strncmp(p, "static", 6) == 0) {
            flags |= MPOL_F_STATIC_NODES;
            p += 6;
        } else if (strncmp(p, "relative", 8) == 0) {
            flags |= MPOL_F_RELATIVE_NODES;
            p += 8;
        }
        /* NUMA balancing is the kernel's business; it is not asked for again. */
        if (*p == '|')
            p++;
        if (strncmp(p, "balancing", 9) == 0)
            p += 9;
        if (*p != ':' && *p != '\0')
            return CRMPI_ERR_BAD_PARAM;
    }
    if (*p == ':' && crs_criu_numa_nodelist_parse(p + 1, &nodes) != CRMPI_OK)
        return CRMPI_ERR_BAD_PARAM;
    if (*p != ':' && *p != '\0')
        return CRMPI_ERR_BAD_PARAM;
    *mode_out = mode;
    *flags_out = flags;
    *nodes_out = nodes;
    return CRMPI_OK;
}

void crs_criu_numa_policy_format(int mode, unsigned flags, uint64_t nodes, char *text, size_t len)
{
    const char *name = "unknown";
    size_t used;

    for (size_t i = 0; i < CRS_CRIU_NUMA_NUM_MODES; i++)
        if (crs_criu_numa_modes[i].mode == mode)
            name = crs_criu_numa_modes[i].record;
    used = (size_t)snprintf(text, len, "%s%s", name,
                            flags & MPOL_F_STATIC_NODES     ? "=static"
                            : flags & MPOL_F_RELATIVE_NODES ? "=relative"
                                                            : "");
    if (nodes && used + 1 < len) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int node = 0; node < CRS_CRIU_NUMA_MAX_NODES; node++)
            if (nodes & (1ULL << node))
                CPU_SET(node, &set);
        text[used] = ':';
        crs_criu_cpulist_format(&set, text + used + 1, len - used - 1);
    }
}

/* This machine's topology, or the one parameter crs_criu_topology names (for tests and for
 * planning a restart elsewhere): an XML file, or "synthetic:<description>". */
static int crs_criu_numa_topology(hwloc_topology_t *topo_out)
{
    const char *given = NULL;
    hwloc_topology_t topo;

    crmpi_param_get_string("crs_criu_topology", &given);
    if (hwloc_topology_init(&topo) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    if (given && *given) {
        int bad = strncmp(given, "synthetic:", 10) == 0
                      ? hwloc_topology_set_synthetic(topo, given + 10)
                      : hwloc_topology_set_xml(topo, given);
        if (bad < 0) {
            crmpi_log_error("crs:criu: parameter crs_criu_topology: hwloc cannot use '%s': %s",
                            given, strerror(errno));
            hwloc_topology_destroy(topo);
            return CRMPI_ERR_BAD_PARAM;
        }
    }
    if (hwloc_topology_load(topo) < 0) {
        crmpi_log_error("crs:criu: hwloc cannot read the topology: %s", strerror(errno));
        hwloc_topology_destroy(topo);
        return CRMPI_ERR_IO;
    }
    *topo_out = topo;
    return CRMPI_OK;
}

/* The NUMA nodes of `topo` in logical order, `local` when their CPUs meet `binding`. */
static int crs_criu_numa_nodes_of(hwloc_topology_t topo, const cpu_set_t *binding,
                                  crs_criu_node_rec_t **nodes_out, size_t *num_out)
{
    int count = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    crs_criu_node_rec_t *nodes = calloc(count > 0 ? (size_t)count : 1, sizeof(*nodes));
    size_t num = 0;

    if (!set || !nodes) {
        hwloc_bitmap_free(set);
        free(nodes);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    hwloc_cpuset_from_glibc_sched_affinity(topo, set, binding, sizeof(*binding));
    for (int i = 0; i < count; i++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
        if (obj->os_index >= CRS_CRIU_NUMA_MAX_NODES)
            continue; /* beyond what a record names */
        nodes[num++] = (crs_criu_node_rec_t){
            .os_index = (int)obj->os_index,
            .logical = (int)obj->logical_index,
            .local = hwloc_bitmap_intersects(obj->cpuset, set) ? 1 : 0,
        };
    }
    hwloc_bitmap_free(set);
    *nodes_out = nodes;
    *num_out = num;
    return CRMPI_OK;
}

int crs_criu_numa_collect_nodes(const cpu_set_t *binding, crs_criu_meta_t *meta)
{
    hwloc_topology_t topo;
    int rc = crs_criu_numa_topology(&topo);

    if (rc != CRMPI_OK)
        return rc;
    rc = crs_criu_numa_nodes_of(topo, binding, &meta->nodes, &meta->num_nodes);
    hwloc_topology_destroy(topo);
    return rc;
}

/* The start addresses of the private writable mappings of /proc/<pid>/maps, sorted. */
static int crs_criu_numa_private_writable(pid_t host_pid, uint64_t **starts_out, size_t *num_out)
{
    char path[64], *line = NULL;
    size_t line_cap = 0;
    uint64_t *starts = NULL;
    size_t num = 0, cap = 0;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int)host_pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return CRMPI_ERR_NOT_FOUND;
    /* Whole lines: a mapped file's path may be long, and a piece of it must not be read as
     * a line of its own. */
    while (getline(&line, &line_cap, f) >= 0) {
        unsigned long long start, end;
        char perms[8];
        if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3 || perms[1] != 'w' ||
            perms[3] != 'p')
            continue;
        if (num == cap) {
            uint64_t *grown = realloc(starts, (cap = cap ? cap * 2 : 64) * sizeof(*starts));
            if (!grown) {
                free(starts);
                free(line);
                fclose(f);
                return CRMPI_ERR_OUT_OF_RESOURCE;
            }
            starts = grown;
        }
        starts[num++] = start;
    }
    free(line);
    fclose(f);
    *starts_out = starts;
    *num_out = num;
    return CRMPI_OK;
}

static bool crs_criu_numa_listed(const uint64_t *starts, size_t num, uint64_t start)
{
    size_t lo = 0, hi = num;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (starts[mid] == start)
            return true;
        if (starts[mid] < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* One line of numa_maps into `vma` (ns_pid and end left to the caller). @return 1 when the
 * line is a mapping, 0 otherwise. */
static int crs_criu_numa_maps_line(char *line, crs_criu_vma_rec_t *vma)
{
    unsigned long long start;
    char *p, *save = NULL;
    int used = 0;

    memset(vma, 0, sizeof(*vma));
    if (sscanf(line, "%llx %n", &start, &used) != 1 || used <= 0)
        return 0;
    vma->start = start;
    p = line + used;
    /* The policy runs to the first space that is not inside "prefer (many)". */
    size_t len = strcspn(p, " \n");
    if (strncmp(p, "prefer (many)", 13) == 0)
        len = 13 + strcspn(p + 13, " \n");
    char saved = p[len];
    p[len] = '\0';
    int rc = crs_criu_numa_policy_parse(p, &vma->mode, &vma->flags, &vma->policy_nodes);
    if (rc != CRMPI_OK)
        vma->mode = -1;
    p[len] = saved;
    for (char *tok = strtok_r(p + len, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
        int node;
        unsigned long long pages;
        if (sscanf(tok, "N%d=%llu", &node, &pages) == 2 && node >= 0 &&
            node < CRS_CRIU_NUMA_MAX_NODES)
            vma->pages[node] = pages;
        else if (strcmp(tok, "huge") == 0)
            vma->hugetlb = 1;
    }
    return 1;
}

/* The end of the mapping at `start` in /proc/<pid>/maps order: numa_maps has no ends. */
static int crs_criu_numa_ends(pid_t host_pid, crs_criu_meta_t *meta, size_t first)
{
    char path[64], *line = NULL;
    size_t line_cap = 0;
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)host_pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return CRMPI_ERR_NOT_FOUND;
    size_t next = first;
    while (next < meta->num_vmas && getline(&line, &line_cap, f) >= 0) {
        unsigned long long start, end;
        if (sscanf(line, "%llx-%llx", &start, &end) != 2)
            continue;
        /* Both files list mappings in address order. */
        while (next < meta->num_vmas && meta->vmas[next].start < start)
            next++; /* gone meanwhile: its end stays 0 and it is dropped */
        if (next < meta->num_vmas && meta->vmas[next].start == start)
            meta->vmas[next++].end = end;
    }
    free(line);
    fclose(f);
    /* Drop what found no end. */
    size_t kept = first;
    for (size_t i = first; i < meta->num_vmas; i++)
        if (meta->vmas[i].end > meta->vmas[i].start)
            meta->vmas[kept++] = meta->vmas[i];
    meta->num_vmas = kept;
    return CRMPI_OK;
}

/* Ranges of present pages asked per PAGEMAP_SCAN call. */
#define CRS_CRIU_NUMA_SCAN_BATCH 256

/* Called for each range [start, end) of pages in memory. */
typedef int (*crs_criu_numa_range_fn_t)(uint64_t start, uint64_t end, void *arg);

/*
 * The ranges of pages of `category` (PAGE_IS_PRESENT, PAGE_IS_HUGE...) within [start, end) of
 * the process whose pagemap is open as `pagemap_fd`, in address order: PAGEMAP_SCAN (Linux
 * 6.7) walks the page tables and
 * skips what holds nothing whole, so a sparse reservation of terabytes (an AddressSanitizer
 * shadow, a runtime's arena) costs what its few pages cost, not a query per page. Where
 * it is missing (pagemap_fd -1, an older kernel) the whole range is given as present, and
 * other categories fail with CRMPI_ERR_NOT_SUPPORTED.
 */
static int crs_criu_numa_scan(int pagemap_fd, uint64_t category, uint64_t start, uint64_t end,
                              crs_criu_numa_range_fn_t fn, void *arg)
{
    struct page_region regions[CRS_CRIU_NUMA_SCAN_BATCH];

    while (start < end) {
        struct pm_scan_arg scan = {
            .size = sizeof(scan),
            .start = start,
            .end = end,
            .vec = (uintptr_t)regions,
            .vec_len = CRS_CRIU_NUMA_SCAN_BATCH,
            .category_mask = category,
            .return_mask = category,
        };
        long n = pagemap_fd < 0 ? -1 : ioctl(pagemap_fd, PAGEMAP_SCAN, &scan);

        if (n < 0 && errno == ESRCH)
            return CRMPI_ERR_NOT_FOUND;
        if (n < 0) /* no PAGEMAP_SCAN: every page may be present; no other category is known */
            return category == PAGE_IS_PRESENT ? fn(start, end, arg) : CRMPI_ERR_NOT_SUPPORTED;
        for (long i = 0; i < n; i++) {
            int rc = fn(regions[i].start, regions[i].end, arg);
            if (rc != CRMPI_OK)
                return rc;
        }
        if (n < CRS_CRIU_NUMA_SCAN_BATCH || scan.walk_end <= start)
            break;
        start = scan.walk_end;
    }
    return CRMPI_OK;
}

/* The ranges of pages in memory (crs_criu_numa_scan). */
static int crs_criu_numa_present(int pagemap_fd, uint64_t start, uint64_t end,
                                 crs_criu_numa_range_fn_t fn, void *arg)
{
    return crs_criu_numa_scan(pagemap_fd, PAGE_IS_PRESENT, start, end, fn, arg);
}

/* /proc/<pid>/pagemap for crs_criu_numa_present, or -1. */
static int crs_criu_numa_pagemap_open(pid_t host_pid)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)host_pid);
    return open(path, O_RDONLY | O_CLOEXEC);
}

/* Append a run, merging it with the last one when on the same node. */
static int crs_criu_numa_run_add(crs_criu_vma_rec_t *vma, int node, uint32_t count)
{
    if (vma->num_runs && vma->runs[vma->num_runs - 1].node == node &&
        vma->runs[vma->num_runs - 1].count <= UINT32_MAX - count) {
        vma->runs[vma->num_runs - 1].count += count;
        return CRMPI_OK;
    }
    if (vma->num_runs == CRS_CRIU_NUMA_MAX_RUNS)
        return CRMPI_ERR_BAD_PARAM;
    if ((vma->num_runs & (vma->num_runs - 1)) == 0) { /* 0, 1, 2, 4...: grow */
        crs_criu_page_run_t *grown =
            realloc(vma->runs, (vma->num_runs ? vma->num_runs * 2 : 1) * sizeof(*vma->runs));
        if (!grown)
            return CRMPI_ERR_OUT_OF_RESOURCE;
        vma->runs = grown;
    }
    vma->runs[vma->num_runs++] = (crs_criu_page_run_t){.node = node, .count = count};
    return CRMPI_OK;
}

/* What crs_criu_numa_runs_range needs. */
typedef struct crs_criu_numa_runs_ctx {
    pid_t host_pid;          /* the process asked */
    crs_criu_vma_rec_t *vma; /* the area, its runs growing */
    uint64_t next;           /* the address the runs reach */
} crs_criu_numa_runs_ctx_t;

/* Pages not in memory up to `addr`, as runs of node -1 (each at most UINT32_MAX pages). */
static int crs_criu_numa_runs_gap(crs_criu_numa_runs_ctx_t *ctx, uint64_t addr)
{
    uint64_t gap = (addr - ctx->next) / CRS_CRIU_NUMA_PAGE;

    while (gap > 0) {
        uint32_t count = gap > UINT32_MAX ? UINT32_MAX : (uint32_t)gap;
        int rc = crs_criu_numa_run_add(ctx->vma, -1, count);
        if (rc != CRMPI_OK)
            return rc;
        gap -= count;
    }
    ctx->next = addr;
    return CRMPI_OK;
}

/* Each page's node of one range of pages in memory, asked with move_pages (no target: a
 * query), after a run for the pages before it that are not. */
static int crs_criu_numa_runs_range(uint64_t start, uint64_t end, void *arg)
{
    crs_criu_numa_runs_ctx_t *ctx = arg;
    void *pages[CRS_CRIU_NUMA_BATCH];
    int status[CRS_CRIU_NUMA_BATCH];
    int rc = crs_criu_numa_runs_gap(ctx, start);

    for (uint64_t addr = start; addr < end && rc == CRMPI_OK;) {
        unsigned long count = 0;
        while (count < CRS_CRIU_NUMA_BATCH && addr < end) {
            pages[count++] = (void *)(uintptr_t)addr;
            addr += CRS_CRIU_NUMA_PAGE;
        }
        if (syscall(SYS_move_pages, ctx->host_pid, count, pages, NULL, status, 0) < 0)
            return CRMPI_ERR_NOT_FOUND;
        for (unsigned long i = 0; i < count && rc == CRMPI_OK; i++) {
            int node = status[i] >= 0 && status[i] < CRS_CRIU_NUMA_MAX_NODES ? status[i] : -1;
            rc = crs_criu_numa_run_add(ctx->vma, node, 1);
        }
        ctx->next = addr;
    }
    return rc;
}

/* Each page's node of one area: runs up to its last page in memory. */
static int crs_criu_numa_area_runs(pid_t host_pid, int pagemap_fd, crs_criu_vma_rec_t *vma)
{
    crs_criu_numa_runs_ctx_t ctx = {.host_pid = host_pid, .vma = vma, .next = vma->start};
    int rc =
        crs_criu_numa_present(pagemap_fd, vma->start, vma->end, crs_criu_numa_runs_range, &ctx);

    if (rc != CRMPI_OK) {
        /* Too fragmented, or gone: the area's pages go where the restorer puts them. */
        free(vma->runs);
        vma->runs = NULL;
        vma->num_runs = 0;
    }
    return rc == CRMPI_ERR_OUT_OF_RESOURCE ? rc : CRMPI_OK;
}

static int crs_criu_numa_nodes_used(const crs_criu_vma_rec_t *vma)
{
    int used = 0;
    for (int node = 0; node < CRS_CRIU_NUMA_MAX_NODES; node++)
        used += vma->pages[node] != 0;
    return used;
}

/* One range of transparent huge pages of an area (crs_criu_numa_scan's callback). */
static int crs_criu_numa_thp_range(uint64_t start, uint64_t end, void *arg)
{
    crs_criu_vma_rec_t *vma = arg;
    uint64_t *grown;

    if (vma->num_thp && vma->thp[2 * vma->num_thp - 1] == start) {
        vma->thp[2 * vma->num_thp - 1] = end; /* continues the last one */
        return CRMPI_OK;
    }
    if (!(grown = realloc(vma->thp, (vma->num_thp + 1) * 2 * sizeof(*grown))))
        return CRMPI_ERR_OUT_OF_RESOURCE;
    vma->thp = grown;
    vma->thp[2 * vma->num_thp] = start;
    vma->thp[2 * vma->num_thp + 1] = end;
    vma->num_thp++;
    return CRMPI_OK;
}

int crs_criu_numa_collect_thp(pid_t host_pid, crs_criu_meta_t *meta, size_t first)
{
    int pagemap_fd = crs_criu_numa_pagemap_open(host_pid), rc = CRMPI_OK;

    if (pagemap_fd < 0)
        return CRMPI_OK; /* gone, or no pagemap: nothing known */
    for (size_t i = first; i < meta->num_vmas && rc == CRMPI_OK; i++) {
        crs_criu_vma_rec_t *vma = &meta->vmas[i];
        if (vma->hugetlb)
            continue; /* CRIU restores hugetlbfs pages as such */
        rc = crs_criu_numa_scan(pagemap_fd, PAGE_IS_HUGE, vma->start, vma->end,
                                crs_criu_numa_thp_range, vma);
    }
    close(pagemap_fd);
    /* Gone meanwhile, or a kernel without PAGEMAP_SCAN: nothing is known of huge pages. */
    return rc == CRMPI_ERR_NOT_FOUND || rc == CRMPI_ERR_NOT_SUPPORTED ? CRMPI_OK : rc;
}

int crs_criu_numa_collect_runs(pid_t host_pid, crs_criu_meta_t *meta, size_t first)
{
    int pagemap_fd = -1, rc = CRMPI_OK;

    for (size_t i = first; i < meta->num_vmas && rc == CRMPI_OK; i++) {
        crs_criu_vma_rec_t *vma = &meta->vmas[i];
        if (crs_criu_numa_nodes_used(vma) < 2 || vma->mode == MPOL_INTERLEAVE)
            continue; /* one node says it all; interleaving is recomputed at restart */
        if (pagemap_fd < 0)
            pagemap_fd = crs_criu_numa_pagemap_open(host_pid);
        rc = crs_criu_numa_area_runs(host_pid, pagemap_fd, vma);
    }
    if (pagemap_fd >= 0)
        close(pagemap_fd);
    return rc;
}

/* After an item of a ','-separated list at *p: 0 at the list's end, 1 when another item
 * follows (*p moved onto it), -1 when malformed (a trailing ',', or anything else). */
static int crs_criu_numa_list_next(const char **p)
{
    if (**p == '\0')
        return 0;
    if (**p != ',' || (*p)[1] == '\0')
        return -1;
    (*p)++;
    return 1;
}

int crs_criu_numa_runs_parse(const char *text, crs_criu_vma_rec_t *vma)
{
    uint64_t pages = 0,
             area = (vma->end - vma->start + CRS_CRIU_NUMA_PAGE - 1) / CRS_CRIU_NUMA_PAGE;
    const char *p = text;

    if (vma->runs)
        return CRMPI_ERR_PROTO; /* two lines for one area */
    for (;;) {
        unsigned long count;
        int node = -1, used = 0;
        if (p[0] == '-' && sscanf(p, "-x%lu%n", &count, &used) == 1)
            node = -1;
        else if (sscanf(p, "%dx%lu%n", &node, &count, &used) != 2 || node < 0 ||
                 node >= CRS_CRIU_NUMA_MAX_NODES)
            return CRMPI_ERR_PROTO;
        if (used <= 0 || count == 0 || count > UINT32_MAX || pages + count > area)
            return CRMPI_ERR_PROTO;
        int rc = crs_criu_numa_run_add(vma, node, (uint32_t)count);
        if (rc != CRMPI_OK)
            return rc == CRMPI_ERR_OUT_OF_RESOURCE ? rc : CRMPI_ERR_PROTO;
        pages += count;
        p += used;
        int next = crs_criu_numa_list_next(&p);
        if (next <= 0)
            return next == 0 ? CRMPI_OK : CRMPI_ERR_PROTO;
    }
}

int crs_criu_numa_thp_parse(const char *text, crs_criu_vma_rec_t *vma)
{
    const char *p = text;

    if (vma->thp)
        return CRMPI_ERR_PROTO; /* two lines for one area */
    for (;;) {
        unsigned long long start, end;
        int used = 0;
        /* Within the area, in order, not overlapping. */
        if (sscanf(p, "%llx-%llx%n", &start, &end, &used) != 2 || used <= 0 || start >= end ||
            start < vma->start || end > vma->end ||
            (vma->num_thp && start < vma->thp[2 * vma->num_thp - 1]))
            return CRMPI_ERR_PROTO;
        int rc = crs_criu_numa_thp_range(start, end, vma);
        if (rc != CRMPI_OK)
            return rc;
        p += used;
        int next = crs_criu_numa_list_next(&p);
        if (next <= 0)
            return next == 0 ? CRMPI_OK : CRMPI_ERR_PROTO;
    }
}

/* The policy the first line of a numa_maps shows; @return CRMPI_OK or CRMPI_ERR_NOT_FOUND. */
static int crs_criu_numa_first_policy(const char *path, int *mode_out, unsigned *flags_out,
                                      uint64_t *nodes_out)
{
    char line[512];
    crs_criu_vma_rec_t vma;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t len = fd < 0 ? -1 : read(fd, line, sizeof(line) - 1);

    if (fd >= 0)
        close(fd);
    if (len <= 0)
        return CRMPI_ERR_NOT_FOUND;
    line[len] = '\0';
    if (!crs_criu_numa_maps_line(line, &vma) || vma.mode < 0)
        return CRMPI_ERR_NOT_FOUND;
    *mode_out = vma.mode;
    *flags_out = vma.flags;
    *nodes_out = vma.policy_nodes;
    return CRMPI_OK;
}

void crs_criu_numa_collect_thread(pid_t host_pid, pid_t host_tid, crs_criu_thread_rec_t *rec)
{
    char path[64];

    rec->policy_mode = CRS_CRIU_NO_POLICY;
    snprintf(path, sizeof(path), "/proc/%d/task/%d/numa_maps", (int)host_pid, (int)host_tid);
    if (crs_criu_numa_first_policy(path, &rec->policy_mode, &rec->policy_flags,
                                   &rec->policy_nodes) != CRMPI_OK)
        rec->policy_mode = CRS_CRIU_NO_POLICY;
}

int crs_criu_numa_collect_process(pid_t host_pid, pid_t ns_pid, const crs_criu_thread_rec_t *leader,
                                  crs_criu_meta_t *meta)
{
    char path[64], *line = NULL;
    size_t line_cap = 0;
    uint64_t *writable = NULL;
    size_t num_writable = 0, first = meta->num_vmas;
    int rc = crs_criu_numa_private_writable(host_pid, &writable, &num_writable);

    if (rc != CRMPI_OK)
        return rc == CRMPI_ERR_NOT_FOUND ? CRMPI_OK : rc; /* ended meanwhile */
    snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)host_pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        free(writable);
        return CRMPI_OK; /* a kernel without NUMA: nothing to record */
    }
    while (rc == CRMPI_OK && getline(&line, &line_cap, f) >= 0) {
        crs_criu_vma_rec_t vma;
        if (!crs_criu_numa_maps_line(line, &vma))
            continue;
        if (leader->policy_mode >= 0 && vma.mode == leader->policy_mode &&
            vma.flags == leader->policy_flags && vma.policy_nodes == leader->policy_nodes) {
            vma.mode = MPOL_DEFAULT; /* the main thread's policy: none of its own */
            vma.flags = 0;
            vma.policy_nodes = 0;
        }
        /* Private writable areas for their pages; any area for a policy of its own. */
        if (vma.mode == MPOL_DEFAULT && !crs_criu_numa_listed(writable, num_writable, vma.start))
            continue;
        vma.ns_pid = ns_pid;
        crs_criu_vma_rec_t *grown = realloc(meta->vmas, (meta->num_vmas + 1) * sizeof(vma));
        if (!grown) {
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        meta->vmas = grown;
        meta->vmas[meta->num_vmas++] = vma;
    }
    free(line);
    fclose(f);
    free(writable);
    if (rc == CRMPI_OK)
        rc = crs_criu_numa_ends(host_pid, meta, first);
    if (rc == CRMPI_OK)
        rc = crs_criu_numa_collect_runs(host_pid, meta, first);
    if (rc == CRMPI_OK)
        rc = crs_criu_numa_collect_thp(host_pid, meta, first);
    return rc == CRMPI_ERR_NOT_FOUND ? CRMPI_OK : rc;
}

void crs_criu_numa_map(const crs_criu_node_rec_t *old_nodes, size_t num_old,
                       const crs_criu_node_rec_t *new_nodes, size_t num_new, int *map_out)
{
    size_t new_local[CRS_CRIU_NUMA_MAX_NODES], new_other[CRS_CRIU_NUMA_MAX_NODES];
    size_t num_local = 0, num_other = 0, old_local = 0, old_other = 0;

    for (size_t i = 0; i < num_new && i < CRS_CRIU_NUMA_MAX_NODES; i++) {
        if (new_nodes[i].local)
            new_local[num_local++] = i;
        else
            new_other[num_other++] = i;
    }
    for (size_t i = 0; i < num_old; i++) {
        if (num_new == 0) {
            map_out[i] = -1;
        } else if (old_nodes[i].local || num_other == 0) {
            /* The i-th node of the old binding: the i-th of the new one. */
            size_t position = old_nodes[i].local ? old_local++ : old_other++;
            map_out[i] =
                num_local ? (int)new_local[position % num_local] : (int)(position % num_new);
        } else {
            map_out[i] = (int)new_other[old_other++ % num_other];
        }
    }
}

void crs_criu_numa_plan_nodes(const crs_criu_meta_t *meta, const crs_criu_node_rec_t *nodes,
                              size_t num_nodes, crs_criu_numa_plan_t *plan_out)
{
    crs_criu_numa_plan_t plan;
    int map[CRS_CRIU_NUMA_MAX_NODES];
    uint64_t most = 0, on_node[CRS_CRIU_NUMA_MAX_NODES] = {0};

    plan.home = -1;
    plan.changed = 0;
    plan.home_only = 0;
    for (int i = 0; i < CRS_CRIU_NUMA_MAX_NODES; i++)
        plan.to_os[i] = -1;
    crs_criu_numa_map(meta->nodes, meta->num_nodes, nodes, num_nodes, map);
    for (size_t i = 0; i < meta->num_nodes; i++) {
        const crs_criu_node_rec_t *old = &meta->nodes[i];
        const crs_criu_node_rec_t *now = map[i] >= 0 ? &nodes[map[i]] : NULL;
        bool exists = false;

        for (size_t n = 0; n < num_nodes; n++)
            exists = exists || nodes[n].os_index == old->os_index;
        if (!now)
            continue;
        plan.to_os[old->os_index] = now->os_index;
        if (now->os_index == old->os_index)
            continue;
        plan.changed = 1;
        if (!exists)
            crmpi_log_warn("crs:criu: NUMA node L#%d (OS %d) of the checkpoint is not on this "
                           "machine: its memory and policies go to node L#%d (OS %d)",
                           old->logical, old->os_index, now->logical, now->os_index);
        else
            crmpi_log_info("crs:criu: NUMA node L#%d (OS %d) of the checkpoint -> node L#%d "
                           "(OS %d) of the new binding",
                           old->logical, old->os_index, now->logical, now->os_index);
    }
    /* The node that held most private pages, mapped: where the restorer should touch. */
    for (size_t v = 0; v < meta->num_vmas; v++)
        for (int node = 0; node < CRS_CRIU_NUMA_MAX_NODES; node++)
            on_node[node] += meta->vmas[v].pages[node];
    for (int node = 0; node < CRS_CRIU_NUMA_MAX_NODES; node++) {
        if (on_node[node] > most && plan.to_os[node] >= 0) {
            most = on_node[node];
            plan.home = plan.to_os[node];
        }
    }
    size_t bound = 0;
    for (size_t n = 0; n < num_nodes; n++)
        bound += nodes[n].local;
    for (size_t n = 0; n < num_nodes && bound == 1; n++)
        if (nodes[n].local)
            plan.home_only = nodes[n].os_index == plan.home;
    *plan_out = plan;
}

int crs_criu_numa_plan(const crs_criu_meta_t *meta, const cpu_set_t *binding,
                       crs_criu_numa_plan_t *plan_out)
{
    crs_criu_node_rec_t *nodes = NULL;
    size_t num_nodes = 0;
    hwloc_topology_t topo;
    int rc = crs_criu_numa_topology(&topo);

    if (rc != CRMPI_OK)
        return rc;
    rc = crs_criu_numa_nodes_of(topo, binding, &nodes, &num_nodes);
    hwloc_topology_destroy(topo);
    if (rc != CRMPI_OK)
        return rc;
    crs_criu_numa_plan_nodes(meta, nodes, num_nodes, plan_out);
    free(nodes);
    return CRMPI_OK;
}

uint64_t crs_criu_numa_map_mask(const crs_criu_numa_plan_t *plan, uint64_t nodes)
{
    uint64_t mapped = 0;
    for (int node = 0; node < CRS_CRIU_NUMA_MAX_NODES; node++) {
        if (!(nodes & (1ULL << node)))
            continue;
        /* A node the record does not describe keeps its number. */
        int to = plan->to_os[node] >= 0 ? plan->to_os[node] : node;
        mapped |= 1ULL << to;
    }
    return mapped;
}

/* The only node of an area's pages, or -1 when they were on none or several. */
static int crs_criu_numa_single_node(const crs_criu_vma_rec_t *vma)
{
    int found = -1;
    for (int node = 0; node < CRS_CRIU_NUMA_MAX_NODES; node++) {
        if (!vma->pages[node])
            continue;
        if (found >= 0)
            return -1;
        found = node;
    }
    return found;
}

/* Where each page of an area goes, page after page from its start. */
typedef struct crs_criu_numa_target {
    const crs_criu_vma_rec_t *vma;           /* the area */
    const crs_criu_numa_plan_t *plan;        /* the node map */
    int single;                              /* >= 0: every page goes to this node */
    int interleave[CRS_CRIU_NUMA_MAX_NODES]; /* else, with num_interleave: the nodes in turn */
    int num_interleave;                      /* entries in interleave (0: follow the runs) */
    size_t run;                              /* the run of the next page asked */
    uint64_t run_start;                      /* the page number that run starts at */
} crs_criu_numa_target_t;

/* How the pages of `vma` are placed, or 0 when they are left alone. */
static int crs_criu_numa_target_init(crs_criu_numa_target_t *t, const crs_criu_vma_rec_t *vma,
                                     const crs_criu_numa_plan_t *plan)
{
    int node = crs_criu_numa_single_node(vma);

    memset(t, 0, sizeof(*t));
    t->vma = vma;
    t->plan = plan;
    t->single = node >= 0 ? plan->to_os[node] : -1;
    if (t->single >= 0)
        return 1;
    if (vma->mode == MPOL_INTERLEAVE && crs_criu_numa_nodes_used(vma) > 1) {
        /* The kernel interleaves an anonymous area by page number: the n-th node of the
         * mask gets the pages whose number is n modulo the mask's weight. */
        uint64_t mask = vma->flags & MPOL_F_RELATIVE_NODES
                            ? 0
                            : crs_criu_numa_map_mask(plan, vma->policy_nodes);
        for (int n = 0; n < CRS_CRIU_NUMA_MAX_NODES; n++)
            if (mask & (1ULL << n))
                t->interleave[t->num_interleave++] = n;
        return t->num_interleave > 0;
    }
    return vma->num_runs > 0;
}

/* The node for the page at `addr` (pages are asked in address order, with gaps), or -1:
 * leave it. */
static int crs_criu_numa_target_next(crs_criu_numa_target_t *t, uint64_t addr)
{
    uint64_t page = (addr - t->vma->start) / CRS_CRIU_NUMA_PAGE;

    if (t->single >= 0)
        return t->single;
    if (t->num_interleave)
        return t->interleave[(addr / CRS_CRIU_NUMA_PAGE) % (uint64_t)t->num_interleave];
    while (t->run < t->vma->num_runs && page >= t->run_start + t->vma->runs[t->run].count) {
        t->run_start += t->vma->runs[t->run].count;
        t->run++;
    }
    if (t->run == t->vma->num_runs)
        return -1;
    int node = t->vma->runs[t->run].node;
    return node >= 0 ? t->plan->to_os[node] : -1;
}

/* What crs_criu_numa_move_range needs. */
typedef struct crs_criu_numa_move_area {
    pid_t pid;                      /* the process */
    crs_criu_numa_target_t *target; /* where its pages go */
    uint64_t *moved;                /* pages moved */
    uint64_t *refused;              /* pages the kernel kept where they were */
} crs_criu_numa_move_area_t;

/* Move the pages of one range in memory of an area that are not where the target says. */
static int crs_criu_numa_move_range(uint64_t start, uint64_t end, void *arg)
{
    crs_criu_numa_move_area_t *area = arg;
    void *pages[CRS_CRIU_NUMA_BATCH], *move[CRS_CRIU_NUMA_BATCH];
    int status[CRS_CRIU_NUMA_BATCH], nodes[CRS_CRIU_NUMA_BATCH], want[CRS_CRIU_NUMA_BATCH];

    for (uint64_t addr = start; addr < end;) {
        unsigned long count = 0, num_move = 0;
        while (count < CRS_CRIU_NUMA_BATCH && addr < end) {
            want[count] = crs_criu_numa_target_next(area->target, addr);
            pages[count++] = (void *)(uintptr_t)addr;
            addr += CRS_CRIU_NUMA_PAGE;
        }
        /* Ask first: only pages that are resident and elsewhere are moved. */
        if (syscall(SYS_move_pages, area->pid, count, pages, NULL, status, 0) < 0)
            return CRMPI_ERR_NOT_FOUND; /* gone, or not allowed: nothing to move */
        for (unsigned long i = 0; i < count; i++) {
            if (status[i] >= 0 && want[i] >= 0 && status[i] != want[i]) {
                move[num_move] = pages[i];
                nodes[num_move++] = want[i];
            }
        }
        if (num_move == 0)
            continue;
        if (syscall(SYS_move_pages, area->pid, num_move, move, nodes, status, MPOL_MF_MOVE) < 0) {
            *area->refused += num_move;
            continue;
        }
        for (unsigned long i = 0; i < num_move; i++) {
            if (status[i] == nodes[i])
                (*area->moved)++;
            else
                (*area->refused)++;
        }
    }
    return CRMPI_OK;
}

/* What crs_criu_numa_pages_thread needs. */
typedef struct crs_criu_numa_move_ctx {
    const crs_criu_meta_t *meta;      /* the record */
    const crs_criu_numa_plan_t *plan; /* where each node's pages go */
    uint64_t moved;                   /* pages moved */
    uint64_t refused;                 /* pages the kernel kept where they were */
} crs_criu_numa_move_ctx_t;

static int crs_criu_numa_pages_thread(pid_t host_pid, pid_t host_tid, void *arg)
{
    crs_criu_numa_move_ctx_t *ctx = arg;
    if (host_tid != host_pid)
        return CRMPI_OK; /* the memory is the process's */
    pid_t ns_pid = (pid_t)crs_criu_status_last(host_pid, host_tid, "NStgid:", NULL, 0);
    int pagemap_fd = crs_criu_numa_pagemap_open(host_pid);
    for (size_t i = 0; i < ctx->meta->num_vmas; i++) {
        const crs_criu_vma_rec_t *vma = &ctx->meta->vmas[i];
        crs_criu_numa_target_t target;
        if (vma->ns_pid != ns_pid || !crs_criu_numa_target_init(&target, vma, ctx->plan))
            continue;
        crs_criu_numa_move_area_t area = {
            .pid = host_pid, .target = &target, .moved = &ctx->moved, .refused = &ctx->refused};
        /* Only pages in memory: the restorer put back what was. */
        crs_criu_numa_present(pagemap_fd, vma->start, vma->end, crs_criu_numa_move_range, &area);
    }
    if (pagemap_fd >= 0)
        close(pagemap_fd);
    return CRMPI_OK;
}

int crs_criu_numa_pages_restore(const crs_criu_meta_t *meta, const crs_criu_numa_plan_t *plan,
                                pid_t init_pid, uint64_t *moved_out, uint64_t *refused_out)
{
    crs_criu_numa_move_ctx_t ctx = {.meta = meta, .plan = plan};
    int rc = crs_criu_tree_walk(init_pid, crs_criu_numa_pages_thread, &ctx, 0);

    if (rc != CRMPI_OK)
        return rc;
    *moved_out = ctx.moved;
    *refused_out = ctx.refused;
    return CRMPI_OK;
}

int crs_criu_numa_policies(const crs_criu_meta_t *meta, const crs_criu_numa_plan_t *plan,
                           char **text_out)
{
    crmpi_mempolicy_area_t *areas = calloc(meta->num_vmas ? meta->num_vmas : 1, sizeof(*areas));
    size_t num = 0;
    int rc;

    if (!areas)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (size_t i = 0; i < meta->num_vmas; i++) {
        const crs_criu_vma_rec_t *vma = &meta->vmas[i];
        if (vma->mode <= MPOL_DEFAULT)
            continue; /* restored as default already; or a mode this code does not know */
        areas[num++] = (crmpi_mempolicy_area_t){
            .pid = vma->ns_pid,
            .start = vma->start,
            .end = vma->end,
            .mode = vma->mode,
            .flags = vma->flags,
            /* Relative nodes are positions in the allowed set: they need no mapping. */
            .nodes = vma->flags & MPOL_F_RELATIVE_NODES
                         ? vma->policy_nodes
                         : crs_criu_numa_map_mask(plan, vma->policy_nodes),
        };
    }
    *text_out = NULL;
    rc = num ? crmpi_mempolicy_format(areas, num, text_out) : CRMPI_OK;
    free(areas);
    return rc;
}

int crs_criu_numa_hugepages(const crs_criu_meta_t *meta, char **text_out)
{
    crmpi_mempolicy_area_t *areas = NULL;
    size_t num = 0, max = 0;
    int rc;

    for (size_t i = 0; i < meta->num_vmas; i++)
        max += meta->vmas[i].num_thp;
    *text_out = NULL;
    if (max == 0)
        return CRMPI_OK;
    if (!(areas = calloc(max, sizeof(*areas))))
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (size_t i = 0; i < meta->num_vmas; i++) {
        const crs_criu_vma_rec_t *vma = &meta->vmas[i];
        for (size_t r = 0; r < vma->num_thp; r++)
            areas[num++] = (crmpi_mempolicy_area_t){
                .pid = vma->ns_pid, .start = vma->thp[2 * r], .end = vma->thp[2 * r + 1]};
    }
    rc = crmpi_mempolicy_format(areas, num, text_out);
    free(areas);
    return rc;
}

/* What crs_criu_numa_thread_policy needs. */
typedef struct crs_criu_numa_threads_ctx {
    const crs_criu_meta_t *meta;       /* the record */
    const crs_criu_numa_plan_t *plan;  /* the node map */
    crmpi_mempolicy_thread_t *threads; /* those to change (malloc'ed) */
    size_t num_threads;                /* entries in threads */
} crs_criu_numa_threads_ctx_t;

static int crs_criu_numa_thread_policy(pid_t host_pid, pid_t host_tid, void *arg)
{
    crs_criu_numa_threads_ctx_t *ctx = arg;
    pid_t ns_pid, ns_tid;
    const crs_criu_thread_rec_t *rec =
        crs_criu_meta_thread_of(ctx->meta, host_pid, host_tid, &ns_pid, &ns_tid);
    crs_criu_thread_rec_t now;

    if (!rec || rec->policy_mode < 0)
        return CRMPI_OK; /* nothing known to give it */
    crmpi_mempolicy_thread_t want = {
        .pid = ns_pid,
        .tid = ns_tid,
        .mode = rec->policy_mode,
        .flags = rec->policy_flags,
        /* Relative nodes are positions in the allowed set: they need no mapping. */
        .nodes = rec->policy_flags & MPOL_F_RELATIVE_NODES
                     ? rec->policy_nodes
                     : crs_criu_numa_map_mask(ctx->plan, rec->policy_nodes),
    };
    crs_criu_numa_collect_thread(host_pid, host_tid, &now);
    if (now.policy_mode == want.mode && now.policy_flags == want.flags &&
        now.policy_nodes == want.nodes)
        return CRMPI_OK; /* it has it already */
    crmpi_mempolicy_thread_t *grown =
        realloc(ctx->threads, (ctx->num_threads + 1) * sizeof(*ctx->threads));
    if (!grown)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    ctx->threads = grown;
    ctx->threads[ctx->num_threads++] = want;
    return CRMPI_OK;
}

int crs_criu_numa_thread_policies(const crs_criu_meta_t *meta, const crs_criu_numa_plan_t *plan,
                                  pid_t init_pid, int signo, char **text_out)
{
    crs_criu_numa_threads_ctx_t ctx = {.meta = meta, .plan = plan};
    int rc = crs_criu_tree_walk(init_pid, crs_criu_numa_thread_policy, &ctx, 0);

    *text_out = NULL;
    if (rc == CRMPI_OK && ctx.num_threads)
        rc = crmpi_mempolicy_threads_format(signo, ctx.threads, ctx.num_threads, text_out);
    free(ctx.threads);
    return rc;
}

/* The areas with a policy of their own, and the private pages per node, of a record. */
static void crs_criu_numa_print_memory(const crs_criu_meta_t *meta, const char *indent, FILE *out)
{
    uint64_t on_node[CRS_CRIU_NUMA_MAX_NODES] = {0};
    size_t with_policy = 0;

    for (size_t v = 0; v < meta->num_vmas; v++) {
        const crs_criu_vma_rec_t *vma = &meta->vmas[v];
        char policy[256];

        for (int node = 0; node < CRS_CRIU_NUMA_MAX_NODES; node++)
            on_node[node] += vma->pages[node];
        if (vma->mode == MPOL_DEFAULT)
            continue;
        if (with_policy++ == 0)
            fprintf(out, "%sareas with a policy of their own:\n", indent);
        crs_criu_numa_policy_format(vma->mode, vma->flags, vma->policy_nodes, policy,
                                    sizeof(policy));
        fprintf(out, "%s  pid %d %" PRIx64 "-%" PRIx64 " %s, pages:", indent, (int)vma->ns_pid,
                vma->start, vma->end, policy);
        for (int node = 0; node < CRS_CRIU_NUMA_MAX_NODES; node++)
            if (vma->pages[node])
                fprintf(out, " N%d=%" PRIu64, node, vma->pages[node]);
        fprintf(out, "\n");
    }
    fprintf(out, "%sresident pages of %zu recorded areas:", indent, meta->num_vmas);
    for (int node = 0; node < CRS_CRIU_NUMA_MAX_NODES; node++)
        if (on_node[node])
            fprintf(out, " N%d=%" PRIu64, node, on_node[node]);
    fprintf(out, "\n");
}

int crmpi_crs_criu_placement_print(const char *images_dir, const char *indent, FILE *out)
{
    char cpus[256];
    crs_criu_meta_t meta;
    int dirfd = open(images_dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    int rc = dirfd < 0 ? CRMPI_ERR_IO : crs_criu_meta_read(dirfd, &meta);

    if (dirfd >= 0)
        close(dirfd);
    if (rc != CRMPI_OK)
        return rc;
    crs_criu_cpulist_format(&meta.cpuset, cpus, sizeof(cpus));
    fprintf(out, "%sbinding at checkpoint: CPUs %s, %zu threads\n", indent, cpus, meta.num_threads);
    if (meta.num_nodes == 0) {
        fprintf(out,
                "%smemory placement: not recorded (crs_criu_numa was 0, or an older "
                "crmpi)\n",
                indent);
        crs_criu_meta_free(&meta);
        return CRMPI_OK;
    }
    fprintf(out, "%sNUMA nodes at checkpoint:", indent);
    for (size_t i = 0; i < meta.num_nodes; i++)
        fprintf(out, " L#%d (OS %d%s)", meta.nodes[i].logical, meta.nodes[i].os_index,
                meta.nodes[i].local ? ", bound" : "");
    fprintf(out, "\n");
    crs_criu_numa_print_memory(&meta, indent, out);
    /* What a restart here, bound as at the checkpoint, would make of the nodes. */
    crs_criu_node_rec_t *nodes = NULL;
    size_t num_nodes = 0;
    hwloc_topology_t topo;
    if (crs_criu_numa_topology(&topo) == CRMPI_OK) {
        if (crs_criu_numa_nodes_of(topo, &meta.cpuset, &nodes, &num_nodes) == CRMPI_OK) {
            int map[CRS_CRIU_NUMA_MAX_NODES];
            crs_criu_numa_map(meta.nodes, meta.num_nodes, nodes, num_nodes, map);
            fprintf(out, "%sonto this machine, bound to CPUs %s:", indent, cpus);
            for (size_t i = 0; i < meta.num_nodes && i < CRS_CRIU_NUMA_MAX_NODES; i++) {
                if (map[i] < 0)
                    continue;
                fprintf(out, " L#%d (OS %d) -> L#%d (OS %d)%s", meta.nodes[i].logical,
                        meta.nodes[i].os_index, nodes[map[i]].logical, nodes[map[i]].os_index,
                        i + 1 < meta.num_nodes ? "," : "");
            }
            fprintf(out, "\n");
            free(nodes);
        }
        hwloc_topology_destroy(topo);
    }
    crs_criu_meta_free(&meta);
    return CRMPI_OK;
}
