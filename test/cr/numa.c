/*
 * numa.c: memory areas with their own NUMA policies (mbind on node 0: MPOL_BIND,
 * MPOL_INTERLEAVE, MPOL_PREFERRED), first-touched before the checkpoint, plus one area with
 * the default policy. After the go file, each rank reports every area's policy as
 * get_mempolicy(MPOL_F_ADDR) gives it and where its pages are (move_pages on itself):
 *
 *   numa rank R AREA: policy MODE nodes 0xMASK, P/N pages on node 0
 *
 * and checks the areas' contents. CRIU restores no policy: the line after a restart shows
 * what the restart re-applied (docs/design.md, "Memory placement").
 */
#include <errno.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "cr_common.h"

#define NUMA_PAGES 64
#define NUMA_PAGE  4096

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

    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
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
    return cr_finish("numa");
}
