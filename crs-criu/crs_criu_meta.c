/*
 * crs_criu_meta.c: the record kept beside a CRIU image (crs.h, "Inherit keys" and
 * "Affinity"): collected from /proc at checkpoint, re-applied at pre-resume.
 *
 * The namespace's tasks are found from the init down through
 * /proc/<pid>/task/<tid>/children (a child is listed under the thread that created it),
 * and each thread is named by its ids inside the namespace (the last field of NSpid and
 * NStgid in its status file), because those are the ids CRIU restores.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "crs_criu_int.h"
#include "fs.h"
#include "fault.h"
#include "log.h"
#include "param.h"

/* The last number of the status line that starts with `field` ("NSpid:"), or -1. */
long crs_criu_status_last(pid_t host_pid, pid_t host_tid, const char *field, char *text,
                          size_t text_len)
{
    char path[96], line[256];
    long value = -1;
    snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)host_pid, (int)host_tid);
    FILE *f = fopen(path, "re");
    if (!f) {
        return -1;
    }
    size_t field_len = strlen(field);
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, field, field_len) != 0) {
            continue;
        }
        char *rest = line + field_len;
        rest[strcspn(rest, "\n")] = '\0';
        if (text) {
            snprintf(text, text_len, "%s", rest + strspn(rest, " \t"));
        } else {
            char *last = strrchr(rest, '\t');
            value = strtol(last ? last + 1 : rest, NULL, 10);
        }
        value = text ? 0 : value;
        break;
    }
    fclose(f);
    return value;
}

/* Visit every thread of host_pid, then recurse into each thread's children. */
int crs_criu_tree_walk(pid_t host_pid, crs_criu_thread_fn_t fn, void *arg, int depth)
{
    char path[96];
    int rc = CRMPI_OK;

    if (depth > 64) {
        return CRMPI_OK; /* a namespace that deep is not one agent_ns.c made */
    }
    snprintf(path, sizeof(path), "/proc/%d/task", (int)host_pid);
    DIR *dir = opendir(path);
    if (!dir) {
        return CRMPI_ERR_NOT_FOUND;
    }
    struct dirent *ent;
    while (rc == CRMPI_OK && (ent = readdir(dir)) != NULL) {
        if (ent->d_name[0] < '0' || ent->d_name[0] > '9') {
            continue;
        }
        pid_t tid = (pid_t)atoi(ent->d_name);
        rc = fn(host_pid, tid, arg);
        if (rc != CRMPI_OK) {
            break;
        }
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)host_pid, (int)tid);
        FILE *f = fopen(path, "re");
        if (!f) {
            continue; /* the thread just ended */
        }
        int child;
        while (rc == CRMPI_OK && fscanf(f, "%d", &child) == 1) {
            rc = crs_criu_tree_walk((pid_t)child, fn, arg, depth + 1);
            if (rc == CRMPI_ERR_NOT_FOUND) {
                rc = CRMPI_OK; /* the child just ended */
            }
        }
        fclose(f);
    }
    closedir(dir);
    return rc;
}

/* Record `path` (open for writing or mapped, `size` bytes now) once, as the most it is kept as. */
static int crs_criu_file_add(crs_criu_meta_t *meta, const char *path, uint64_t size,
                             crs_criu_file_kind_t kind)
{
    crs_criu_file_rec_t *grown;

    if (strchr(path, '\n'))
        return CRMPI_OK; /* no line of the record can name it: not brought back */
    for (size_t i = 0; i < meta->num_files; i++) {
        if (strcmp(meta->files[i].path, path) == 0) {
            if (kind > meta->files[i].kind)
                meta->files[i].kind = kind;
            return CRMPI_OK;
        }
    }
    grown = realloc(meta->files, (meta->num_files + 1) * sizeof(meta->files[0]));
    if (!grown)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    meta->files = grown;
    meta->files[meta->num_files] =
        (crs_criu_file_rec_t){.size = size, .path = strdup(path), .kind = kind};
    if (!meta->files[meta->num_files].path)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    meta->num_files++;
    return CRMPI_OK;
}

/* The regular files process `host_pid` maps shared and writable ("rw-s" in its maps). */
static int crs_criu_collect_maps(pid_t host_pid, crs_criu_meta_t *meta)
{
    char maps_path[64], *line = NULL;
    size_t cap = 0;
    int rc = CRMPI_OK;
    FILE *f;

    snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", (int)host_pid);
    f = fopen(maps_path, "re");
    while (f && rc == CRMPI_OK && getline(&line, &cap, f) > 0) {
        char perms[8];
        int path_at = 0;
        struct stat st;

        if (sscanf(line, "%*x-%*x %7s %*x %*x:%*x %*u %n", perms, &path_at) != 1 || path_at <= 0 ||
            line[path_at] != '/' || perms[1] != 'w' || perms[3] != 's')
            continue;
        line[strcspn(line, "\n")] = '\0';
        if (strstr(line + path_at, " (deleted)"))
            continue; /* CRIU dumps the content of what has no name */
        if (stat(line + path_at, &st) == 0 && S_ISREG(st.st_mode))
            rc =
                crs_criu_file_add(meta, line + path_at, (uint64_t)st.st_size, CRS_CRIU_FILE_MAPPED);
    }
    free(line);
    if (f)
        fclose(f);
    return rc;
}

/* The regular files process `host_pid` has open for writing. */
static int crs_criu_collect_files(pid_t host_pid, crs_criu_meta_t *meta)
{
    char dir_path[64];
    struct dirent *entry;
    DIR *dir;
    int rc = CRMPI_OK;

    snprintf(dir_path, sizeof(dir_path), "/proc/%d/fd", (int)host_pid);
    dir = opendir(dir_path);
    while (dir && rc == CRMPI_OK && (entry = readdir(dir)) != NULL) {
        char path[320], target[4096], line[128];
        unsigned flags = 0;
        struct stat st;
        ssize_t len;
        FILE *info;

        if (entry->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir_path, entry->d_name);
        len = readlink(path, target, sizeof(target) - 1);
        if (len <= 0 || target[0] != '/' || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
            continue;
        target[len] = '\0';
        if (strstr(target, " (deleted)"))
            continue; /* nothing to bring back by name */
        snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)host_pid, entry->d_name);
        info = fopen(path, "re");
        while (info && fgets(line, sizeof(line), info))
            if (sscanf(line, "flags: %o", &flags) == 1)
                break;
        if (info)
            fclose(info);
        if ((flags & O_ACCMODE) != O_RDONLY)
            rc = crs_criu_file_add(meta, target, (uint64_t)st.st_size,
                                   meta->copy_written ? CRS_CRIU_FILE_CONTENT : CRS_CRIU_FILE_SIZE);
    }
    if (dir)
        closedir(dir);
    return rc;
}

static int crs_criu_collect_thread(pid_t host_pid, pid_t host_tid, void *arg)
{
    crs_criu_meta_t *meta = arg;
    crs_criu_thread_rec_t rec;
    memset(&rec, 0, sizeof(rec));

    /* The descriptor table is the process's: looked at once, from its first thread. */
    if (host_tid == host_pid) {
        int rc = crs_criu_collect_files(host_pid, meta);
        if (rc == CRMPI_OK)
            rc = crs_criu_collect_maps(host_pid, meta);
        if (rc != CRMPI_OK)
            return rc;
    }

    rec.ns_pid = (pid_t)crs_criu_status_last(host_pid, host_tid, "NStgid:", NULL, 0);
    rec.ns_tid = (pid_t)crs_criu_status_last(host_pid, host_tid, "NSpid:", NULL, 0);
    if (rec.ns_pid <= 0 || rec.ns_tid <= 0 ||
        sched_getaffinity(host_tid, sizeof(rec.cpus), &rec.cpus) < 0) {
        return CRMPI_OK; /* ended meanwhile; it will not be in the image either */
    }
    if (crs_criu_status_last(host_pid, host_tid, "Mems_allowed_list:", rec.mems, sizeof(rec.mems)) <
        0) {
        snprintf(rec.mems, sizeof(rec.mems), "?");
    }
    rec.policy_mode = CRS_CRIU_NO_POLICY;
    if (meta->num_nodes > 0)
        crs_criu_numa_collect_thread(host_pid, host_tid, &rec);
    /* Memory areas are the process's: looked at once, from its first thread. */
    if (host_tid == host_pid && meta->num_nodes > 0) {
        int rc = crs_criu_numa_collect_process(host_pid, rec.ns_pid, &rec, meta);
        if (rc != CRMPI_OK)
            return rc;
    }
    crs_criu_thread_rec_t *grown =
        realloc(meta->threads, (meta->num_threads + 1) * sizeof(meta->threads[0]));
    if (!grown) {
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    meta->threads = grown;
    meta->threads[meta->num_threads++] = rec;
    return CRMPI_OK;
}

int crs_criu_meta_collect(pid_t init_pid, crs_criu_meta_t *meta_out)
{
    crs_criu_meta_t meta;
    char path[64], target[CRMPI_CRS_KEY_MAX];
    memset(&meta, 0, sizeof(meta));

    if (sched_getaffinity(init_pid, sizeof(meta.cpuset), &meta.cpuset) < 0) {
        return CRMPI_ERR_NOT_FOUND;
    }
    for (int fd = 0; fd < CRMPI_CRS_NUM_FDS; fd++) {
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)init_pid, fd);
        ssize_t len = readlink(path, target, sizeof(target) - 1);
        if (len < 0) {
            continue; /* closed in the init: nothing to inherit */
        }
        target[len] = '\0';
        memcpy(meta.key[fd], target, (size_t)len + 1);
        meta.have_fd[fd] = 1;
    }
    bool numa = true;
    crmpi_param_get_bool("crs_criu_numa", &numa); /* unregistered (unit tests): on */
    crmpi_param_get_bool("crs_criu_file_content", &meta.copy_written); /* unregistered: off */
    /* Without a topology (hwloc said why) the checkpoint goes on without memory placement:
     * a restart of it leaves memory where CRIU puts it, which is still correct. */
    if (numa && crs_criu_numa_collect_nodes(&meta.cpuset, &meta) == CRMPI_ERR_OUT_OF_RESOURCE) {
        crs_criu_meta_free(&meta);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    int rc = crs_criu_tree_walk(init_pid, crs_criu_collect_thread, &meta, 0);
    if (rc != CRMPI_OK) {
        crs_criu_meta_free(&meta);
        return rc;
    }
    *meta_out = meta;
    return CRMPI_OK;
}

void crs_criu_cpulist_format(const cpu_set_t *set, char *text, size_t len)
{
    size_t used = 0;
    text[0] = '\0';
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, set)) {
            continue;
        }
        int last = cpu;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set)) {
            last++;
        }
        int n = last > cpu
                    ? snprintf(text + used, len - used, "%s%d-%d", used ? "," : "", cpu, last)
                    : snprintf(text + used, len - used, "%s%d", used ? "," : "", cpu);
        if (n < 0 || (size_t)n >= len - used) {
            break;
        }
        used += (size_t)n;
        cpu = last;
    }
    if (used == 0) {
        snprintf(text, len, "none");
    }
}

int crs_criu_cpulist_parse(const char *text, cpu_set_t *set_out)
{
    cpu_set_t set;
    const char *p = text;
    CPU_ZERO(&set);
    if (*text == '\0') {
        return CRMPI_ERR_BAD_PARAM;
    }
    if (strcmp(text, "none") == 0) {
        *set_out = set;
        return CRMPI_OK;
    }
    while (*p) {
        char *end;
        long first = strtol(p, &end, 10), last;
        if (end == p || first < 0 || first >= CPU_SETSIZE) {
            return CRMPI_ERR_BAD_PARAM;
        }
        last = first;
        p = end;
        if (*p == '-') {
            last = strtol(p + 1, &end, 10);
            if (end == p + 1 || last < first || last >= CPU_SETSIZE) {
                return CRMPI_ERR_BAD_PARAM;
            }
            p = end;
        }
        for (long cpu = first; cpu <= last; cpu++) {
            CPU_SET((int)cpu, &set);
        }
        if (*p == ',' && p[1] != '\0') {
            p++;
        } else if (*p) {
            return CRMPI_ERR_BAD_PARAM;
        }
    }
    *set_out = set;
    return CRMPI_OK;
}

/* The record's word for each kind of file. */
static const char *const crs_criu_file_tokens[] = {
    [CRS_CRIU_FILE_SIZE] = "wfile",
    [CRS_CRIU_FILE_CONTENT] = "cfile",
    [CRS_CRIU_FILE_MAPPED] = "mfile",
};

int crs_criu_meta_write(int dirfd, const crs_criu_meta_t *meta)
{
    static const char tmp_name[] = CRS_CRIU_META_FILE ".tmp";
    char cpus[CRS_CRIU_CPULIST_MAX];
    int fd = openat(dirfd, tmp_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        goto err_report;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        goto err_report;
    }
    crs_criu_cpulist_format(&meta->cpuset, cpus, sizeof(cpus));
    fprintf(f, "%s %d\n", CRS_CRIU_META_MAGIC, CRS_CRIU_META_VERSION);
    fprintf(f, "# fd <number in the init> <inherit key>\n");
    fprintf(f, "# thread <ns pid> <ns tid> <cpus> <mems allowed> [<its own memory policy>]\n");
    fprintf(f, "# wfile <size> <path>: a regular file open for writing\n");
    fprintf(f, "# cfile <size> <path>: one open for writing, copied as mapped.<n> "
               "(crs_criu_file_content)\n");
    fprintf(f, "# mfile <size> <path>: one mapped shared and writable, copied as mapped.<n>\n");
    if (meta->num_nodes > 0) {
        fprintf(f, "# numanode <os index> <hwloc logical index> <1: local to the cpuset>\n");
        fprintf(f,
                "# vma <ns pid> <start> <end> <policy> <pages per OS node: N<node>=<pages>,...>\n");
        fprintf(f, "# pages <ns pid> <start>: its pages' nodes in order, <node>x<count>,... "
                   "('-': not resident)\n");
        fprintf(f, "# thp <ns pid> <start>: its ranges in transparent huge pages, "
                   "<start>-<end>,...\n");
    }
    fprintf(f, "cpuset %s\n", cpus);
    for (int i = 0; i < CRMPI_CRS_NUM_FDS; i++) {
        if (meta->have_fd[i]) {
            fprintf(f, "fd %d %s\n", i, meta->key[i]);
        }
    }
    for (size_t i = 0; i < meta->num_threads; i++) {
        const crs_criu_thread_rec_t *rec = &meta->threads[i];
        char policy[CRS_CRIU_CPULIST_MAX] = "";
        crs_criu_cpulist_format(&rec->cpus, cpus, sizeof(cpus));
        if (rec->policy_mode >= 0) {
            policy[0] = ' ';
            crs_criu_numa_policy_format(rec->policy_mode, rec->policy_flags, rec->policy_nodes,
                                        policy + 1, sizeof(policy) - 1);
        }
        fprintf(f, "thread %d %d %s %s%s\n", (int)rec->ns_pid, (int)rec->ns_tid, cpus, rec->mems,
                policy);
    }
    for (size_t i = 0; i < meta->num_nodes; i++)
        fprintf(f, "numanode %d %d %d\n", meta->nodes[i].os_index, meta->nodes[i].logical,
                meta->nodes[i].local);
    for (size_t i = 0; i < meta->num_vmas; i++) {
        const crs_criu_vma_rec_t *vma = &meta->vmas[i];
        char policy[CRS_CRIU_CPULIST_MAX];
        int any = 0;

        crs_criu_numa_policy_format(vma->mode, vma->flags, vma->policy_nodes, policy,
                                    sizeof(policy));
        fprintf(f, "vma %d %" PRIx64 " %" PRIx64 " %s ", (int)vma->ns_pid, vma->start, vma->end,
                policy);
        for (int node = 0; node < CRS_CRIU_NUMA_MAX_NODES; node++)
            if (vma->pages[node])
                fprintf(f, "%sN%d=%" PRIu64, any++ ? "," : "", node, vma->pages[node]);
        fprintf(f, "%s\n", any ? "" : "-");
        for (size_t r = 0; r < vma->num_runs; r++) {
            const crs_criu_page_run_t *run = &vma->runs[r];
            if (r == 0)
                fprintf(f, "pages %d %" PRIx64 " ", (int)vma->ns_pid, vma->start);
            if (run->node >= 0)
                fprintf(f, "%s%dx%u", r ? "," : "", (int)run->node, run->count);
            else
                fprintf(f, "%s-x%u", r ? "," : "", run->count);
        }
        if (vma->num_runs)
            fprintf(f, "\n");
        for (size_t r = 0; r < vma->num_thp; r++) {
            if (r == 0)
                fprintf(f, "thp %d %" PRIx64 " ", (int)vma->ns_pid, vma->start);
            fprintf(f, "%s%" PRIx64 "-%" PRIx64, r ? "," : "", vma->thp[2 * r],
                    vma->thp[2 * r + 1]);
        }
        if (vma->num_thp)
            fprintf(f, "\n");
    }
    /* Every file has a line, in order: mapped.<n> is the n-th. */
    for (size_t i = 0; i < meta->num_files; i++)
        fprintf(f, "%s %llu %s\n", crs_criu_file_tokens[meta->files[i].kind],
                (unsigned long long)meta->files[i].size, meta->files[i].path);
    if (fflush(f) != 0 || fsync(fd) < 0) {
        fclose(f);
        goto err_report;
    }
    if (fclose(f) != 0 || renameat(dirfd, tmp_name, dirfd, CRS_CRIU_META_FILE) < 0) {
        goto err_report;
    }
    return CRMPI_OK;

err_report:
    return CRMPI_ERR_IO;
}

/* A "numanode" line: each OS index once, within the limits. */
static int crs_criu_meta_add_node(crs_criu_meta_t *meta, int os_index, int logical, int local)
{
    crs_criu_node_rec_t *grown;

    if (os_index < 0 || os_index >= CRS_CRIU_NUMA_MAX_NODES || logical < 0 ||
        logical >= CRS_CRIU_NUMA_MAX_NODES || (local != 0 && local != 1))
        return CRMPI_ERR_PROTO;
    for (size_t i = 0; i < meta->num_nodes; i++)
        if (meta->nodes[i].os_index == os_index)
            return CRMPI_ERR_PROTO;
    grown = realloc(meta->nodes, (meta->num_nodes + 1) * sizeof(meta->nodes[0]));
    if (!grown)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    meta->nodes = grown;
    meta->nodes[meta->num_nodes++] =
        (crs_criu_node_rec_t){.os_index = os_index, .logical = logical, .local = local};
    return CRMPI_OK;
}

/* A "vma" line: its policy and "N<node>=<pages>,..." (or "-"). */
static int crs_criu_meta_add_vma(crs_criu_meta_t *meta, int ns_pid, unsigned long long start,
                                 unsigned long long end, const char *policy, const char *pages)
{
    crs_criu_vma_rec_t vma, *grown;
    const char *p = pages;

    memset(&vma, 0, sizeof(vma));
    if (ns_pid <= 0 || start >= end)
        return CRMPI_ERR_PROTO;
    vma.ns_pid = ns_pid;
    vma.start = start;
    vma.end = end;
    int rc = crs_criu_numa_policy_parse(policy, &vma.mode, &vma.flags, &vma.policy_nodes);
    if (rc == CRMPI_ERR_NOT_SUPPORTED)
        vma.mode = -1; /* kept, never re-applied */
    else if (rc != CRMPI_OK)
        return CRMPI_ERR_PROTO;
    if (strcmp(p, "-") != 0) {
        for (;;) {
            int node, used = 0;
            unsigned long long count;
            if (sscanf(p, "N%d=%llu%n", &node, &count, &used) != 2 || used <= 0 || node < 0 ||
                node >= CRS_CRIU_NUMA_MAX_NODES || count == 0 || vma.pages[node] != 0)
                return CRMPI_ERR_PROTO;
            vma.pages[node] = count;
            p += used;
            if (*p == '\0')
                break;
            if (*p != ',' || p[1] == '\0')
                return CRMPI_ERR_PROTO;
            p++;
        }
    }
    grown = realloc(meta->vmas, (meta->num_vmas + 1) * sizeof(meta->vmas[0]));
    if (!grown)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    meta->vmas = grown;
    meta->vmas[meta->num_vmas++] = vma;
    return CRMPI_OK;
}

/* The area of an earlier "vma" line that a "pages" or "thp" line names, or NULL. */
static crs_criu_vma_rec_t *crs_criu_meta_vma_at(crs_criu_meta_t *meta, int ns_pid,
                                                unsigned long long start)
{
    for (size_t i = meta->num_vmas; i-- > 0;)
        if (meta->vmas[i].ns_pid == ns_pid && meta->vmas[i].start == start)
            return &meta->vmas[i];
    return NULL;
}

int crs_criu_meta_read(int dirfd, crs_criu_meta_t *meta_out)
{
    crs_criu_meta_t meta;
    char *line = NULL, *a = NULL, *c = NULL, name[32];
    size_t line_cap = 0;
    ssize_t line_len;
    int version = 0, rc = CRMPI_OK;
    memset(&meta, 0, sizeof(meta));

    int fd = openat(dirfd, CRS_CRIU_META_FILE, O_RDONLY | O_CLOEXEC);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
    if (!f) {
        if (fd >= 0) {
            close(fd);
        }
        return CRMPI_ERR_IO;
    }
    /* Whole lines, however long: a CPU list or a path may take thousands of characters. */
    if (getline(&line, &line_cap, f) < 0 || sscanf(line, "%31s %d", name, &version) != 2 ||
        strcmp(name, CRS_CRIU_META_MAGIC) != 0 || version != CRS_CRIU_META_VERSION) {
        free(line);
        fclose(f);
        return CRMPI_ERR_PROTO;
    }
    while (rc == CRMPI_OK && (line_len = getline(&line, &line_cap, f)) >= 0) {
        char b[64];
        int fdnum, ns_pid, ns_tid, fields, path_at = 0;
        unsigned long long size;
        /* A word of the line fits in a buffer as long as the line. */
        char *word = realloc(a, (size_t)line_len + 1);
        if (!word) {
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        a = word;
        word = realloc(c, (size_t)line_len + 1);
        if (!word) {
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        c = word;
        unsigned long long start, end;
        int os_index, logical, local;
        if (sscanf(line, "numanode %d %d %d", &os_index, &logical, &local) == 3) {
            rc = crs_criu_meta_add_node(&meta, os_index, logical, local);
        } else if (sscanf(line, "vma %d %llx %llx %s %s", &ns_pid, &start, &end, a, c) == 5) {
            rc = crs_criu_meta_add_vma(&meta, ns_pid, start, end, a, c);
        } else if (sscanf(line, "pages %d %llx %s", &ns_pid, &start, a) == 3) {
            /* The runs of an area of an earlier "vma" line. */
            crs_criu_vma_rec_t *vma = crs_criu_meta_vma_at(&meta, ns_pid, start);
            rc = vma ? crs_criu_numa_runs_parse(a, vma) : CRMPI_ERR_PROTO;
        } else if (sscanf(line, "thp %d %llx %s", &ns_pid, &start, a) == 3) {
            /* The huge-page ranges of an area of an earlier "vma" line. */
            crs_criu_vma_rec_t *vma = crs_criu_meta_vma_at(&meta, ns_pid, start);
            rc = vma ? crs_criu_numa_thp_parse(a, vma) : CRMPI_ERR_PROTO;
        } else if ((sscanf(line, "wfile %llu %n", &size, &path_at) == 1 ||
                    sscanf(line, "cfile %llu %n", &size, &path_at) == 1 ||
                    sscanf(line, "mfile %llu %n", &size, &path_at) == 1) &&
                   path_at > 0 && line[path_at] == '/') {
            line[strcspn(line, "\n")] = '\0';
            rc = crs_criu_file_add(&meta, line + path_at, size,
                                   line[0] == 'w'   ? CRS_CRIU_FILE_SIZE
                                   : line[0] == 'c' ? CRS_CRIU_FILE_CONTENT
                                                    : CRS_CRIU_FILE_MAPPED);
        } else if (sscanf(line, "cpuset %s", a) == 1) {
            rc = crs_criu_cpulist_parse(a, &meta.cpuset);
        } else if (sscanf(line, "fd %d %47s", &fdnum, b) == 2) {
            if (fdnum < 0 || fdnum >= CRMPI_CRS_NUM_FDS) {
                rc = CRMPI_ERR_PROTO;
                break;
            }
            memcpy(meta.key[fdnum], b, CRMPI_CRS_KEY_MAX);
            meta.have_fd[fdnum] = 1;
        } else if ((fields = sscanf(line, "thread %d %d %s %63s %s", &ns_pid, &ns_tid, a, b, c)) >=
                   4) {
            crs_criu_thread_rec_t *grown =
                realloc(meta.threads, (meta.num_threads + 1) * sizeof(meta.threads[0]));
            if (!grown) {
                rc = CRMPI_ERR_OUT_OF_RESOURCE;
                break;
            }
            meta.threads = grown;
            crs_criu_thread_rec_t *rec = &meta.threads[meta.num_threads++];
            memset(rec, 0, sizeof(*rec));
            rec->ns_pid = ns_pid;
            rec->ns_tid = ns_tid;
            snprintf(rec->mems, sizeof(rec->mems), "%s", b);
            rc = crs_criu_cpulist_parse(a, &rec->cpus);
            rec->policy_mode = CRS_CRIU_NO_POLICY;
            if (rc == CRMPI_OK && fields == 5) {
                rc = crs_criu_numa_policy_parse(c, &rec->policy_mode, &rec->policy_flags,
                                                &rec->policy_nodes);
                if (rc == CRMPI_ERR_NOT_SUPPORTED) {
                    rec->policy_mode = -1; /* kept, never re-applied */
                    rc = CRMPI_OK;
                } else if (rc != CRMPI_OK) {
                    rc = CRMPI_ERR_PROTO;
                }
            }
        }
        /* Comments and lines of later versions are ignored. */
    }
    free(a);
    free(c);
    free(line);
    fclose(f);
    if (rc != CRMPI_OK) {
        crs_criu_meta_free(&meta);
        return CRMPI_ERR_PROTO;
    }
    *meta_out = meta;
    return CRMPI_OK;
}

void crs_criu_meta_free(crs_criu_meta_t *meta)
{
    free(meta->nodes);
    meta->nodes = NULL;
    meta->num_nodes = 0;
    for (size_t i = 0; i < meta->num_vmas; i++) {
        free(meta->vmas[i].runs);
        free(meta->vmas[i].thp);
    }
    free(meta->vmas);
    meta->vmas = NULL;
    meta->num_vmas = 0;
    free(meta->threads);
    meta->threads = NULL;
    meta->num_threads = 0;
    for (size_t i = 0; i < meta->num_files; i++)
        free(meta->files[i].path);
    free(meta->files);
    meta->files = NULL;
    meta->num_files = 0;
}

int crs_criu_files_restore(const crs_criu_meta_t *meta, char *errbuf, size_t errbuf_len)
{
    for (size_t i = 0; i < meta->num_files; i++) {
        const crs_criu_file_rec_t *file = &meta->files[i];
        struct stat st;

        if (file->kind != CRS_CRIU_FILE_SIZE)
            continue; /* put back whole, by crs_criu_mapped_restore */
        if (stat(file->path, &st) < 0) {
            snprintf(errbuf, errbuf_len,
                     "crs:criu: %s, which the rank had open for writing at the checkpoint, "
                     "cannot be found (%s): the rank cannot go on without it",
                     file->path, strerror(errno));
            return CRMPI_ERR_NOT_FOUND;
        }
        if ((uint64_t)st.st_size == file->size)
            continue;
        if ((uint64_t)st.st_size < file->size) {
            snprintf(errbuf, errbuf_len,
                     "crs:criu: %s has %llu bytes, fewer than the %llu it had at the "
                     "checkpoint (truncated or rewritten since): the rank cannot go on from it",
                     file->path, (unsigned long long)st.st_size, (unsigned long long)file->size);
            return CRMPI_ERR_IO;
        }
        if (truncate(file->path, (off_t)file->size) < 0) {
            snprintf(errbuf, errbuf_len,
                     "crs:criu: cannot bring %s back to its %llu bytes of the checkpoint: %s",
                     file->path, (unsigned long long)file->size, strerror(errno));
            return CRMPI_ERR_IO;
        }
        crmpi_log_warn("crs:criu: %s cut back from %llu to its %llu bytes of the checkpoint "
                       "(the rank writes the rest again)",
                       file->path, (unsigned long long)st.st_size, (unsigned long long)file->size);
    }
    return CRMPI_OK;
}

int crs_criu_mapped_save(const crs_criu_meta_t *meta, int dirfd, char *errbuf, size_t errbuf_len)
{
    for (size_t i = 0; i < meta->num_files; i++) {
        const crs_criu_file_rec_t *file = &meta->files[i];
        char name[64];
        struct stat st;
        int src, dst = -1, ok;

        if (file->kind == CRS_CRIU_FILE_SIZE)
            continue;
        snprintf(name, sizeof(name), CRS_CRIU_MAPPED_FMT, i);
        src = open(file->path, O_RDONLY | O_CLOEXEC);
        ok = src >= 0 && fstat(src, &st) == 0 &&
             (dst = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) >= 0 &&
             crmpi_fd_copy(src, dst, (uint64_t)st.st_size) == CRMPI_OK;
        if (ok && crmpi_fault_hit("crs_criu_mapped_copy_fail")) {
            errno = EIO;
            ok = 0;
        }
        if (!ok)
            snprintf(errbuf, errbuf_len,
                     "crs:criu: cannot keep a copy of %s, which the rank %s: %s", file->path,
                     file->kind == CRS_CRIU_FILE_MAPPED ? "maps shared (its memory)" : "writes",
                     strerror(errno));
        if (src >= 0)
            close(src);
        if (dst >= 0)
            close(dst);
        if (!ok)
            return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

int crs_criu_mapped_restore(const crs_criu_meta_t *meta, int dirfd, char *errbuf, size_t errbuf_len)
{
    for (size_t i = 0; i < meta->num_files; i++) {
        const crs_criu_file_rec_t *file = &meta->files[i];
        char name[64], tmp[4200];
        struct stat st, old;
        int src, dst = -1, ok;

        if (file->kind == CRS_CRIU_FILE_SIZE)
            continue;
        snprintf(name, sizeof(name), CRS_CRIU_MAPPED_FMT, i);
        snprintf(tmp, sizeof(tmp), "%s.crmpi-restart", file->path);
        src = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
        if (src < 0) {
            snprintf(errbuf, errbuf_len,
                     "crs:criu: the images hold no copy of %s (%s), which the rank %s: it "
                     "cannot be put back as it was",
                     file->path, name,
                     file->kind == CRS_CRIU_FILE_MAPPED ? "mapped shared" : "had open for writing");
            return CRMPI_ERR_NOT_FOUND;
        }
        crmpi_mkdirs(file->path, false); /* or the open below says what failed */
        mode_t mode = stat(file->path, &old) == 0 ? old.st_mode & 07777 : 0600;
        ok = fstat(src, &st) == 0 &&
             (dst = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)) >= 0 &&
             crmpi_fd_copy(src, dst, (uint64_t)st.st_size) == CRMPI_OK &&
             rename(tmp, file->path) == 0;
        if (!ok) {
            snprintf(errbuf, errbuf_len,
                     "crs:criu: cannot put %s back as it was at the checkpoint: %s", file->path,
                     strerror(errno));
            unlink(tmp);
        }
        close(src);
        if (dst >= 0)
            close(dst);
        if (!ok)
            return CRMPI_ERR_IO;
        if (file->kind == CRS_CRIU_FILE_CONTENT)
            crmpi_log_warn("crs:criu: %s put back as it was at the checkpoint (%llu bytes; "
                           "crs_criu_file_content)",
                           file->path, (unsigned long long)st.st_size);
    }
    return CRMPI_OK;
}

void crs_criu_remap(const cpu_set_t *cpus, const cpu_set_t *old_set, const cpu_set_t *new_set,
                    cpu_set_t *out)
{
    int new_cpus[CPU_SETSIZE], num_new = 0, position = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, new_set)) {
            new_cpus[num_new++] = cpu;
        }
    }
    CPU_ZERO(out);
    for (int cpu = 0; cpu < CPU_SETSIZE && num_new > 0; cpu++) {
        if (!CPU_ISSET(cpu, old_set)) {
            continue;
        }
        if (CPU_ISSET(cpu, cpus)) {
            CPU_SET(new_cpus[position % num_new], out);
        }
        position++;
    }
    if (CPU_COUNT(out) == 0) {
        /* The thread's CPUs were outside the rank's recorded set: give it the whole new set. */
        *out = *new_set;
    }
}

const crs_criu_thread_rec_t *crs_criu_meta_thread_of(const crs_criu_meta_t *meta, pid_t host_pid,
                                                     pid_t host_tid, pid_t *ns_pid, pid_t *ns_tid)
{
    *ns_pid = (pid_t)crs_criu_status_last(host_pid, host_tid, "NStgid:", NULL, 0);
    *ns_tid = (pid_t)crs_criu_status_last(host_pid, host_tid, "NSpid:", NULL, 0);
    for (size_t i = 0; i < meta->num_threads; i++)
        if (meta->threads[i].ns_tid == *ns_tid && meta->threads[i].ns_pid == *ns_pid)
            return &meta->threads[i];
    return NULL;
}

/* What crs_criu_apply_thread needs. */
typedef struct crs_criu_apply_ctx {
    const crs_criu_meta_t *meta; /* the record */
    const cpu_set_t *new_cpuset; /* NULL: as recorded */
    int rc;                      /* first failure */
} crs_criu_apply_ctx_t;

static int crs_criu_apply_thread(pid_t host_pid, pid_t host_tid, void *arg)
{
    crs_criu_apply_ctx_t *ctx = arg;
    pid_t ns_pid, ns_tid;
    const crs_criu_thread_rec_t *rec =
        crs_criu_meta_thread_of(ctx->meta, host_pid, host_tid, &ns_pid, &ns_tid);
    cpu_set_t mask;

    if (!rec) {
        crmpi_log_warn("crs:criu: restored thread %d (namespace tid %d) has no recorded "
                       "affinity; it keeps criu's",
                       (int)host_tid, (int)ns_tid);
        return CRMPI_OK;
    }
    if (ctx->new_cpuset) {
        crs_criu_remap(&rec->cpus, &ctx->meta->cpuset, ctx->new_cpuset, &mask);
    } else {
        mask = rec->cpus;
    }
    if (sched_setaffinity(host_tid, sizeof(mask), &mask) < 0) {
        char cpus[256];
        crs_criu_cpulist_format(&mask, cpus, sizeof(cpus));
        crmpi_log_error("crs:criu: cannot give restored thread %d (namespace tid %d) CPUs %s: %s",
                        (int)host_tid, (int)ns_tid, cpus, strerror(errno));
        ctx->rc = CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

int crs_criu_affinity_apply(const crs_criu_meta_t *meta, pid_t init_pid,
                            const cpu_set_t *new_cpuset)
{
    crs_criu_apply_ctx_t ctx = {.meta = meta, .new_cpuset = new_cpuset, .rc = CRMPI_OK};
    int rc = crs_criu_tree_walk(init_pid, crs_criu_apply_thread, &ctx, 0);
    if (rc != CRMPI_OK) {
        crmpi_log_error("crs:criu: cannot list the restored threads under init %d: %s",
                        (int)init_pid, crmpi_strerror(rc));
        return rc;
    }
    return ctx.rc;
}
