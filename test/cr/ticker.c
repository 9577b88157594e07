/*
 * ticker: a job that keeps printing while it is checkpointed, for the tests of what the
 * agents do while they copy a checkpoint to stable storage (the ranks run meanwhile, and
 * their output must keep flowing). Every 20 ms each rank passes a small message around the
 * ring (to itself when alone), checks what it received, and prints
 *
 *     tick RANK N SECONDS.MICROSECONDS
 *
 * with N counting from 0 and the time read from CLOCK_REALTIME just before the line is
 * written (the tests compare it with when the line reached them). The ranks say they are
 * ready after 10 ticks and stop, all at the same tick (an allreduce of the go file's
 * existence), once the go file exists.
 */
#include "cr_common.h"

#define TICKER_READY 10

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    const struct timespec period = {0, 20 * 1000 * 1000};
    int right = (cr_rank + 1) % cr_size, left = (cr_rank + cr_size - 1) % cr_size;
    char out[CR_EAGER_BYTES], in[CR_EAGER_BYTES];

    for (int tick = 0;; tick++) {
        int go = cr_go_now(), all_go = 0;
        struct timespec now;

        cr_fill(out, sizeof(out), cr_rank, right, 1, tick);
        MPI_Sendrecv(out, sizeof(out), MPI_BYTE, right, 1, in, sizeof(in), MPI_BYTE, left, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        cr_check(in, sizeof(in), left, cr_rank, 1, tick, "ticker");
        clock_gettime(CLOCK_REALTIME, &now);
        printf("tick %d %d %lld.%06ld\n", cr_rank, tick, (long long)now.tv_sec, now.tv_nsec / 1000);
        fflush(stdout);
        if (tick == TICKER_READY)
            cr_ready();
        MPI_Allreduce(&go, &all_go, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (all_go && tick >= TICKER_READY)
            break;
        nanosleep(&period, NULL);
    }
    return cr_finish("ticker");
}
