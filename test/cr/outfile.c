/*
 * outfile: every rank appends lines to an output file of its own ($CR_OUT_DIR/out.<rank>)
 * before the checkpoint and after it, as an application writing its results would. A job
 * restarted from the checkpoint finds the file longer than it was then (the original job
 * went on writing): the restart must bring it back to its size at the checkpoint, and the
 * file must end up as one uninterrupted run writes it. An input file ($CR_OUT_DIR/in.<rank>,
 * when it exists) stays open for reading across the checkpoint: a test changes it to make
 * the restore fail in CRIU.
 */
#include "cr_common.h"

int main(int argc, char **argv)
{
    char path[4096];
    FILE *out;

    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    snprintf(path, sizeof(path), "%s/out.%d", getenv("CR_OUT_DIR") ? getenv("CR_OUT_DIR") : ".",
             cr_rank);
    out = fopen(path, "w");
    if (!out) {
        cr_fail("cannot create %s", path);
        return cr_finish("outfile");
    }
    for (int i = 0; i < 3; i++)
        fprintf(out, "rank %d line %d before\n", cr_rank, i);
    fflush(out);
    snprintf(path, sizeof(path), "%s/in.%d", getenv("CR_OUT_DIR") ? getenv("CR_OUT_DIR") : ".",
             cr_rank);
    FILE *in = fopen(path, "r");
    cr_ready();
    cr_wait_go();
    for (int i = 0; i < 3; i++)
        fprintf(out, "rank %d line %d after\n", cr_rank, i);
    fclose(out);
    if (in)
        fclose(in);
    MPI_Barrier(MPI_COMM_WORLD);
    /* What the file holds is what this rank "received" from its own past. */
    snprintf(path, sizeof(path), "%s/out.%d", getenv("CR_OUT_DIR") ? getenv("CR_OUT_DIR") : ".",
             cr_rank);
    out = fopen(path, "r");
    char line[128];
    int lines = 0;
    while (out && fgets(line, sizeof(line), out)) {
        cr_sum_bytes(line, strlen(line));
        lines++;
    }
    if (out)
        fclose(out);
    if (lines != 6)
        cr_fail("%s has %d lines, expected 6", path, lines);
    return cr_finish("outfile");
}
