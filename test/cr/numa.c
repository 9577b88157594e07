/*
 * numa.c: memory areas with their own NUMA policies (mbind on node 0: MPOL_BIND,
 * MPOL_INTERLEAVE, MPOL_PREFERRED), first-touched before the checkpoint, plus one area with
 * the default policy. After the go file, each rank reports every area's policy as
 * get_mempolicy(MPOL_F_ADDR) gives it and where its pages are (move_pages on itself):
 *
 *   numa rank R AREA: policy MODE nodes 0xMASK, P/N pages on node 0
 *
 * and checks the areas' contents. CRIU restores no policy: the line after a restart shows
 * what the restart re-applied (docs/design.md, "Memory placement"). A helper thread pins
 * itself, as an OpenMP runtime would, to the first CPU of the rank's mask; each rank also
 * prints that thread's CPUs as the kernel reports them:
 *
 *   numa rank R pinned thread: cpus LIST
 *
 * The threads have policies of their own too (set_mempolicy): the main thread MPOL_LOCAL, the
 * pinned one MPOL_BIND on node 0; the main thread's shows through every area without one of
 * its own (the default area must still report the default policy). After the go file each
 * thread reports its own:
 *
 *   numa rank R thread NAME: policy MODE nodes 0xMASK
 *
 * One more area asks for transparent huge pages (MADV_HUGEPAGE, 4 MiB on huge-page
 * boundaries), which CRIU restores as small pages; each rank reports how much of it was in
 * huge pages at its setup and is now (AnonHugePages of its smaps):
 *
 *   numa rank R huge: before KB kB, now KB kB
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <sched.h>
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "cr_common.h"

#define NUMA_PAGES 64
#define NUMA_PAGE  4096

static int numa_pinned_ready;
/* The main thread asks the pinned one for its policy through `numa_ask`, answered on
 * `numa_answer` (a blocking read, which a signal does not end: SA_RESTART). */
static int numa_ask[2], numa_answer[2];

/* The calling thread's own policy. */
static void numa_thread_policy(int *mode_out, unsigned long *nodes_out)
{
    *mode_out = -1;
    *nodes_out = 0;
    if (syscall(SYS_get_mempolicy, mode_out, nodes_out, 65UL, NULL, 0UL))
        cr_fail("get_mempolicy: %s", strerror(errno));
}

/* Pinned to the first CPU of the rank's mask, bound to node 0, then answering questions
 * about its policy until the process ends. */
static void *numa_pinned(void *arg)
{
    unsigned long node0 = 1;
    cpu_set_t mask, one;
    char ask;

    (void)arg;
    if (syscall(SYS_set_mempolicy, MPOL_BIND, &node0, 65UL))
        cr_fail("set_mempolicy pinned: %s", strerror(errno));
    sched_getaffinity(0, sizeof(mask), &mask);
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &mask)) {
            CPU_SET(cpu, &one);
            break;
        }
    }
    sched_setaffinity(0, sizeof(one), &one);
    __atomic_store_n(&numa_pinned_ready, 1, __ATOMIC_RELEASE);
    while (read(numa_ask[0], &ask, 1) == 1) {
        struct {
            int mode;
            unsigned long nodes;
        } answer;
        numa_thread_policy(&answer.mode, &answer.nodes);
        if (write(numa_answer[1], &answer, sizeof(answer)) != sizeof(answer))
            break;
    }
    return NULL;
}

static void numa_print_policies(void)
{
    struct {
        int mode;
        unsigned long nodes;
    } answer = {-1, 0};
    int mode;
    unsigned long nodes;

    numa_thread_policy(&mode, &nodes);
    printf("numa rank %d thread main: policy %d nodes 0x%lx\n", cr_rank, mode, nodes);
    if (write(numa_ask[1], "?", 1) != 1 ||
        read(numa_answer[0], &answer, sizeof(answer)) != (ssize_t)sizeof(answer))
        cr_fail("asking the pinned thread: %s", strerror(errno));
    printf("numa rank %d thread pinned: policy %d nodes 0x%lx\n", cr_rank, answer.mode,
           answer.nodes);
    fflush(stdout);
}

/* The pinned thread's CPUs as the kernel reports them (sched_getaffinity on its tid, which
 * resolves in the caller's pid namespace, unlike a path under /proc). */
static void numa_print_pinned(pthread_t thread)
{
    char cpus[256] = "";
    size_t used = 0;
    cpu_set_t mask;

    if (pthread_getaffinity_np(thread, sizeof(mask), &mask) != 0)
        snprintf(cpus, sizeof(cpus), "?");
    for (int cpu = 0; cpu < CPU_SETSIZE && used + 8 < sizeof(cpus); cpu++) {
        if (!CPU_ISSET(cpu, &mask))
            continue;
        int last = cpu;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &mask))
            last++;
        used += (size_t)(last > cpu ? snprintf(cpus + used, sizeof(cpus) - used, "%s%d-%d",
                                               used ? "," : "", cpu, last)
                                    : snprintf(cpus + used, sizeof(cpus) - used, "%s%d",
                                               used ? "," : "", cpu));
        cpu = last;
    }
    printf("numa rank %d pinned thread: cpus %s\n", cr_rank, cpus);
    fflush(stdout);
}

#define NUMA_HUGE      ((size_t)2 << 20)
#define NUMA_HUGE_SIZE (2 * NUMA_HUGE)

/* The kB of the mapping holding `addr` in transparent huge pages (smaps), or -1. */
static long numa_huge_kb(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int inside = 0;
    long kb = -1;

    while (f && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char dash;
        if (sscanf(line, "%lx%c%lx ", &lo, &dash, &hi) == 3 && dash == '-')
            inside = lo <= (uintptr_t)addr && (uintptr_t)addr < hi;
        else if (inside && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int mode;
    } areas[] = {{"bind", MPOL_BIND},
                 {"interleave", MPOL_INTERLEAVE},
                 {"preferred", MPOL_PREFERRED},
                 {"default", MPOL_DEFAULT}};
    enum { NUM_AREAS = sizeof(areas) / sizeof(areas[0]) };
    unsigned long node0 = 1;
    char *mem[NUM_AREAS];
    pthread_t pinned;

    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    if (syscall(SYS_set_mempolicy, MPOL_LOCAL, NULL, 0UL))
        cr_fail("set_mempolicy main: %s", strerror(errno));
    if (pipe(numa_ask) || pipe(numa_answer))
        cr_fail("pipe: %s", strerror(errno));
    for (int a = 0; a < NUM_AREAS; a++) {
        mem[a] = mmap(NULL, NUMA_PAGES * NUMA_PAGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mem[a] == MAP_FAILED) {
            cr_fail("mmap: %s", strerror(errno));
            return cr_finish("numa");
        }
        if (areas[a].mode != MPOL_DEFAULT &&
            syscall(SYS_mbind, mem[a], NUMA_PAGES * NUMA_PAGE, areas[a].mode, &node0, 65UL, 0U))
            cr_fail("mbind %s: %s", areas[a].name, strerror(errno));
        memset(mem[a], 'a' + a + cr_rank, NUMA_PAGES * NUMA_PAGE); /* first touch */
    }
    char *huge_map = mmap(NULL, NUMA_HUGE_SIZE + NUMA_HUGE, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (huge_map == MAP_FAILED)
        cr_fail("mmap: %s", strerror(errno));
    char *huge = (char *)(((uintptr_t)huge_map + NUMA_HUGE - 1) & ~(uintptr_t)(NUMA_HUGE - 1));
    madvise(huge, NUMA_HUGE_SIZE, MADV_HUGEPAGE); /* no THP here: it stays small */
    memset(huge, 'h' + cr_rank, NUMA_HUGE_SIZE);
    long huge_before = numa_huge_kb(huge);
    pthread_create(&pinned, NULL, numa_pinned, NULL);
    while (!__atomic_load_n(&numa_pinned_ready, __ATOMIC_ACQUIRE))
        sched_yield();
    cr_ready();
    cr_wait_go();
    /* In a restored rank the C/R thread holds the library until the restart (policies
     * included) is done: an MPI call here waits for it. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int a = 0; a < NUM_AREAS; a++) {
        void *pages[NUMA_PAGES];
        int status[NUMA_PAGES], mode = -1, on_node0 = 0;
        unsigned long nodes = 0;

        if (syscall(SYS_get_mempolicy, &mode, &nodes, 65UL, mem[a], (unsigned long)MPOL_F_ADDR))
            cr_fail("get_mempolicy %s: %s", areas[a].name, strerror(errno));
        for (int p = 0; p < NUMA_PAGES; p++)
            pages[p] = mem[a] + (size_t)p * NUMA_PAGE;
        if (syscall(SYS_move_pages, 0, (unsigned long)NUMA_PAGES, pages, NULL, status, 0))
            cr_fail("move_pages %s: %s", areas[a].name, strerror(errno));
        for (int p = 0; p < NUMA_PAGES; p++)
            on_node0 += status[p] == 0;
        for (size_t i = 0; i < NUMA_PAGES * NUMA_PAGE; i++) {
            if (mem[a][i] != 'a' + a + cr_rank) {
                cr_fail("%s: byte %zu changed", areas[a].name, i);
                break;
            }
        }
        cr_sum_bytes(&a, sizeof(a));
        printf("numa rank %d %s: policy %d nodes 0x%lx, %d/%d pages on node 0\n", cr_rank,
               areas[a].name, mode, nodes, on_node0, NUMA_PAGES);
        fflush(stdout);
    }
    for (size_t i = 0; i < NUMA_HUGE_SIZE; i++) {
        if (huge[i] != 'h' + cr_rank) {
            cr_fail("huge: byte %zu changed", i);
            break;
        }
    }
    printf("numa rank %d huge: before %ld kB, now %ld kB\n", cr_rank, huge_before,
           numa_huge_kb(huge));
    numa_print_pinned(pinned);
    numa_print_policies();
    return cr_finish("numa");
}
