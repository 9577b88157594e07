/*
 * chatter: a job that writes a lot before it is checkpointed, for the test that mpirun
 * stays responsive when nobody reads its stdout for a while. Each rank writes
 * CHATTER_LINES lines
 *
 *     chatter RANK N xxxx...x
 *
 * (N from 0, padded to 64 bytes) as fast as it can, says it is ready, sleeps until the go
 * file exists (a checkpoint happens meanwhile), and finishes with the result line. The
 * test reads everything at the end and checks that every line arrived once, whole and in
 * order per rank.
 */
#include "cr_common.h"

#define CHATTER_LINES 8192

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    for (int line = 0; line < CHATTER_LINES; line++)
        printf("chatter %d %d %-*s\n", cr_rank, line, 44,
               "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    fflush(stdout);
    cr_sum_bytes(&cr_size, sizeof(cr_size));
    cr_ready();
    cr_wait_go();
    MPI_Barrier(MPI_COMM_WORLD);
    return cr_finish("chatter");
}
