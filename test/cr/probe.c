/*
 * probe: probes and matched probes across the checkpoint. Each rank sends its right
 * neighbour five messages (tags 1..5; 2 and 4 rendezvous, the others eager). Before the
 * checkpoint the neighbour takes tags 2 and 1 with MPI_Improbe (matched, not received:
 * the drain must pull tag 2's rendezvous data for a message that is no longer in any
 * queue); after it: MPI_Probe for tag 4, MPI_Iprobe for tag 3, MPI_Mrecv of the two
 * matched messages, and MPI_Mprobe (ANY_SOURCE, ANY_TAG), which must find tag 5.
 */
#include "cr_common.h"

static const size_t probe_len[6] = {
    0, CR_EAGER_BYTES, CR_RNDV_BYTES, CR_EAGER_BYTES, CR_RNDV_BYTES, CR_EAGER_BYTES};

static void probe_expect(MPI_Status *st, int src, int tag, const char *what)
{
    int count;

    MPI_Get_count(st, MPI_BYTE, &count);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || (size_t)count != probe_len[tag])
        cr_fail("%s: (source %d, tag %d, %d bytes), (%d, %d, %zu) expected", what, st->MPI_SOURCE,
                st->MPI_TAG, count, src, tag, probe_len[tag]);
}

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    int right = (cr_rank + 1) % cr_size, left = (cr_rank + cr_size - 1) % cr_size;
    char *sbuf[6], *rbuf[6];
    MPI_Request req[6];
    MPI_Message m1, m2, m5;
    MPI_Status st;
    int flag;

    for (int tag = 1; tag <= 5; tag++) {
        sbuf[tag] = malloc(probe_len[tag]);
        rbuf[tag] = malloc(probe_len[tag]);
        cr_fill(sbuf[tag], probe_len[tag], cr_rank, right, tag, 0);
        MPI_Isend(sbuf[tag], (int)probe_len[tag], MPI_BYTE, right, tag, MPI_COMM_WORLD,
                  &req[tag - 1]);
    }
    do
        MPI_Improbe(left, 2, MPI_COMM_WORLD, &flag, &m2, &st);
    while (!flag);
    probe_expect(&st, left, 2, "Improbe before the checkpoint");
    do
        MPI_Improbe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &m1, &st);
    while (!flag);
    probe_expect(&st, left, 1, "Improbe(ANY_SOURCE) before the checkpoint");
    cr_ready();
    cr_wait_go();

    MPI_Probe(left, 4, MPI_COMM_WORLD, &st);
    probe_expect(&st, left, 4, "Probe");
    MPI_Recv(rbuf[4], (int)probe_len[4], MPI_BYTE, left, 4, MPI_COMM_WORLD, &st);
    do
        MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &flag, &st);
    while (!flag);
    probe_expect(&st, left, 3, "Iprobe");
    MPI_Recv(rbuf[3], (int)probe_len[3], MPI_BYTE, left, 3, MPI_COMM_WORLD, &st);
    MPI_Mrecv(rbuf[2], (int)probe_len[2], MPI_BYTE, &m2, &st);
    probe_expect(&st, left, 2, "Mrecv of the matched tag 2");
    MPI_Mrecv(rbuf[1], (int)probe_len[1], MPI_BYTE, &m1, &st);
    probe_expect(&st, left, 1, "Mrecv of the matched tag 1");
    MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m5, &st);
    probe_expect(&st, left, 5, "Mprobe(ANY_SOURCE, ANY_TAG)");
    MPI_Mrecv(rbuf[5], (int)probe_len[5], MPI_BYTE, &m5, &st);
    MPI_Waitall(5, req, MPI_STATUSES_IGNORE);
    for (int tag = 1; tag <= 5; tag++)
        cr_check(rbuf[tag], probe_len[tag], left, cr_rank, tag, 0, "probe");
    return cr_finish("probe");
}
