/*
 * pheap.c: a rank holding an open persistent heap (libcrmpi-pheap) across a transparent
 * checkpoint. The heap is a file mapped shared, which CRIU maps again by name at a restore
 * instead of dumping it, and whose lock CRIU must dump: the dump keeps a copy of the file
 * and the restart puts it back (docs/design.md, "Files").
 *
 * Each rank opens a heap in PHEAP_DIR, perm_malloc's 256 KiB filled with a pattern of its
 * own and sends it to the next rank. Once ready, it waits for CR_GO, then checks that its
 * heap still holds the pattern, and writes another one over it: a run restarted from the
 * checkpoint after the first run ended finds the first pattern again only if the heap was
 * restored as it was at the checkpoint, not as the first run left the file.
 * Built with -lcrmpi-pheap (test_mpix.py).
 */
#include "cr_common.h"

#include <crmpi/pheap.h>

#define PHEAP_BYTES (256 * 1024)

int main(int argc, char **argv)
{
    const char *dir = getenv("PHEAP_DIR");
    char heap_path[4096];
    unsigned char *mine, *got;

    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    snprintf(heap_path, sizeof(heap_path), "%s/heap.%d", dir ? dir : ".", cr_rank);
    if (mopen(heap_path, "w+", (size_t)16 << 20) != 0 || !(mine = perm_malloc(PHEAP_BYTES)))
        MPI_Abort(MPI_COMM_WORLD, 2);
    got = malloc(PHEAP_BYTES);
    cr_fill(mine, PHEAP_BYTES, cr_rank, cr_rank, 1, 0);
    MPI_Sendrecv(mine, PHEAP_BYTES, MPI_BYTE, (cr_rank + 1) % cr_size, 1, got, PHEAP_BYTES,
                 MPI_BYTE, (cr_rank + cr_size - 1) % cr_size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    cr_check(got, PHEAP_BYTES, (cr_rank + cr_size - 1) % cr_size, (cr_rank + cr_size - 1) % cr_size,
             1, 0, "the neighbour's heap");

    cr_ready();
    cr_wait_go();

    cr_check(mine, PHEAP_BYTES, cr_rank, cr_rank, 1, 0, "this rank's heap after the checkpoint");
    cr_fill(mine, PHEAP_BYTES, cr_rank, cr_rank, 2, 0); /* the file changes under the image */
    MPI_Barrier(MPI_COMM_WORLD);
    free(got);
    mclose();
    return cr_finish("pheap");
}
