/*
 * mempolicy.c: memory policies of address ranges handed to a restored rank (mempolicy.h).
 * mbind and set_mempolicy are called through syscall(2): the system calls are all that is
 * needed, and libnuma would be one more library in every rank for two calls.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/mempolicy.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <time.h>

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

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1 */
#endif

int crmpi_mempolicy_collapse(const crmpi_mempolicy_area_t *areas, size_t num_areas,
                             size_t *collapsed_out)
{
    pid_t self = getpid();
    size_t collapsed = 0;

    for (size_t i = 0; i < num_areas; i++) {
        const crmpi_mempolicy_area_t *area = &areas[i];

        if (area->pid != self)
            continue;
        if (madvise((void *)(uintptr_t)area->start, (size_t)(area->end - area->start),
                    MADV_COLLAPSE) < 0) {
            crmpi_log_warn("%" PRIx64 "-%" PRIx64 " was in transparent huge pages at the "
                           "checkpoint and stays in small pages: %s",
                           area->start, area->end, strerror(errno));
            continue;
        }
        collapsed++;
    }
    *collapsed_out = collapsed;
    return CRMPI_OK;
}

/* The longest text of one thread: pid, tid, mode, flags, mask and separators. */
#define MEMPOLICY_THREAD_TEXT_MAX 72

int crmpi_mempolicy_threads_format(int signo, const crmpi_mempolicy_thread_t *threads,
                                   size_t num_threads, char **text_out)
{
    char *text = malloc(num_threads * MEMPOLICY_THREAD_TEXT_MAX + 16);
    size_t used;

    if (!text)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    used = (size_t)snprintf(text, 16, "%d/", signo);
    for (size_t i = 0; i < num_threads; i++) {
        const crmpi_mempolicy_thread_t *t = &threads[i];
        used +=
            (size_t)snprintf(text + used, MEMPOLICY_THREAD_TEXT_MAX + 1, "%s%d:%d:%d:%x:%" PRIx64,
                             i ? "," : "", (int)t->pid, (int)t->tid, t->mode, t->flags, t->nodes);
    }
    *text_out = text;
    return CRMPI_OK;
}

int crmpi_mempolicy_threads_parse(const char *text, int *signo_out,
                                  crmpi_mempolicy_thread_t **threads_out, size_t *num_threads_out)
{
    crmpi_mempolicy_thread_t *threads = NULL;
    size_t num = 0, cap = 0;
    int signo, used = 0;
    const char *p;

    if (sscanf(text, "%d/%n", &signo, &used) != 1 || used <= 0 || signo < SIGRTMIN ||
        signo > SIGRTMAX)
        return CRMPI_ERR_PROTO;
    for (p = text + used; *p;) {
        unsigned long long nodes;
        int pid, tid, mode;
        unsigned flags;

        if (sscanf(p, "%d:%d:%d:%x:%llx%n", &pid, &tid, &mode, &flags, &nodes, &used) != 5 ||
            used <= 0 || pid <= 0 || tid <= 0 || mode < MPOL_DEFAULT || mode >= MPOL_MAX ||
            (flags & ~(unsigned)(MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES)) != 0 ||
            (p[used] != ',' && p[used] != '\0') || (p[used] == ',' && p[used + 1] == '\0')) {
            free(threads);
            return CRMPI_ERR_PROTO;
        }
        if (num == cap) {
            crmpi_mempolicy_thread_t *grown;

            cap = cap ? cap * 2 : 8;
            grown = realloc(threads, cap * sizeof(*threads));
            if (!grown) {
                free(threads);
                return CRMPI_ERR_OUT_OF_RESOURCE;
            }
            threads = grown;
        }
        threads[num++] = (crmpi_mempolicy_thread_t){
            .pid = pid, .tid = tid, .mode = mode, .flags = flags, .nodes = nodes};
        p += used + (p[used] == ',');
    }
    *signo_out = signo;
    *threads_out = threads;
    *num_threads_out = num;
    return CRMPI_OK;
}

/* set_mempolicy(2) of the calling thread; @return 0 or an errno value. */
static int mempolicy_thread_set(int mode, unsigned flags, uint64_t nodes)
{
    unsigned long mask = (unsigned long)nodes;
    int no_nodes = mode == MPOL_DEFAULT || mode == MPOL_LOCAL;

    if (syscall(SYS_set_mempolicy, mode | (int)flags, no_nodes ? NULL : &mask,
                no_nodes ? 0UL : (unsigned long)CRMPI_MEMPOLICY_MAX_NODES + 1) < 0)
        return errno;
    return 0;
}

/* What a thread's handler finds: its policy, and where it says it is done. */
typedef struct mempolicy_slot {
    pid_t tid;        /* the thread */
    int mode;         /* its policy */
    unsigned flags;   /* its policy's flags */
    uint64_t nodes;   /* its policy's nodes */
    atomic_int state; /* 0: not yet; 1: set; else the errno value of the refusal */
} mempolicy_slot_t;

/* The slots of the apply in progress (one at a time: the C/R thread's restart). */
static mempolicy_slot_t *_Atomic mempolicy_slots;
static atomic_size_t mempolicy_num_slots;

/* Runs in the thread the signal was sent to; async-signal-safe: system calls only. */
static void mempolicy_thread_handler(int signo)
{
    int saved_errno = errno;
    pid_t self = (pid_t)syscall(SYS_gettid);
    mempolicy_slot_t *slots = atomic_load(&mempolicy_slots);
    size_t num = atomic_load(&mempolicy_num_slots);

    (void)signo;
    for (size_t i = 0; slots && i < num; i++) {
        if (slots[i].tid != self || atomic_load(&slots[i].state) != 0)
            continue;
        int err = mempolicy_thread_set(slots[i].mode, slots[i].flags, slots[i].nodes);
        atomic_store(&slots[i].state, err ? err : 1);
    }
    errno = saved_errno;
}

int crmpi_mempolicy_threads_apply(int signo, const crmpi_mempolicy_thread_t *threads,
                                  size_t num_threads, size_t *applied_out)
{
    pid_t self = getpid(), me = (pid_t)syscall(SYS_gettid);
    mempolicy_slot_t *slots = calloc(num_threads ? num_threads : 1, sizeof(*slots));
    struct sigaction ours = {.sa_handler = mempolicy_thread_handler, .sa_flags = SA_RESTART},
                     ignore = {.sa_handler = SIG_IGN}, theirs;
    size_t num = 0, applied = 0, waiting = 0;

    if (!slots)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (size_t i = 0; i < num_threads; i++) {
        if (threads[i].pid != self)
            continue;
        slots[num] = (mempolicy_slot_t){.tid = threads[i].tid,
                                        .mode = threads[i].mode,
                                        .flags = threads[i].flags,
                                        .nodes = threads[i].nodes};
        atomic_init(&slots[num].state, 0);
        if (threads[i].tid == me) {
            int err = mempolicy_thread_set(threads[i].mode, threads[i].flags, threads[i].nodes);
            atomic_store(&slots[num].state, err ? err : 1);
        }
        num++;
    }
    atomic_store(&mempolicy_slots, slots);
    atomic_store(&mempolicy_num_slots, num);
    sigemptyset(&ours.sa_mask);
    sigaction(signo, &ours, &theirs);
    for (size_t i = 0; i < num; i++) {
        if (atomic_load(&slots[i].state) == 0 && syscall(SYS_tgkill, self, slots[i].tid, signo) < 0)
            atomic_store(&slots[i].state, errno); /* ended since the restore */
    }
    /* Up to a second: a thread takes the signal as soon as it runs, unless it blocks it. */
    for (int turn = 0; turn < 1000; turn++) {
        waiting = 0;
        for (size_t i = 0; i < num; i++)
            waiting += atomic_load(&slots[i].state) == 0;
        if (waiting == 0)
            break;
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    /* SIG_IGN drops a signal still pending, so that the application's disposition (the
     * default one ends the process) never sees ours. */
    sigaction(signo, &ignore, NULL);
    sigaction(signo, &theirs, NULL);
    for (size_t i = 0; i < num; i++) {
        int state = atomic_load(&slots[i].state);
        if (state == 1)
            applied++;
        else
            crmpi_log_warn("memory policy %d (nodes 0x%" PRIx64 ") of thread %d could not be "
                           "restored: %s; the thread keeps the policy it has",
                           slots[i].mode, slots[i].nodes, (int)slots[i].tid,
                           state == 0 ? "it did not take the signal (blocked?)" : strerror(state));
    }
    if (waiting == 0) {
        /* Every handler is done with the slots. Otherwise one may still be running: leave
         * them (a few bytes, once). */
        atomic_store(&mempolicy_slots, NULL);
        atomic_store(&mempolicy_num_slots, 0);
        free(slots);
    }
    *applied_out = applied;
    return CRMPI_OK;
}
