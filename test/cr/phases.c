/*
 * phases: a job whose ranks are outside the span where a checkpoint can be taken (between
 * the end of MPI_Init and the start of MPI_Finalize), for the tests of refused checkpoints.
 *   phases init      every rank waits for the go before MPI_Init (ready files are named
 *                    ready.pre.<pid>: the rank is not known yet)
 *   phases finalize  rank 0 waits for the go before MPI_Finalize; every other rank enters
 *                    MPI_Finalize at once and waits there for rank 0
 */
#include "cr_common.h"

int main(int argc, char **argv)
{
    int before_init = argc > 1 && strcmp(argv[1], "init") == 0;

    if (before_init) {
        const char *dir = getenv("CR_READY_DIR");
        char path[4096];
        int fd;

        if (dir) {
            snprintf(path, sizeof(path), "%s/ready.pre.%d", dir, (int)getpid());
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd >= 0)
                close(fd);
        }
        cr_wait_go();
    }
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    char out[CR_EAGER_BYTES], in[CR_EAGER_BYTES];
    int right = (cr_rank + 1) % cr_size, left = (cr_rank + cr_size - 1) % cr_size;

    cr_fill(out, sizeof(out), cr_rank, right, 1, 0);
    MPI_Sendrecv(out, sizeof(out), MPI_BYTE, right, 1, in, sizeof(in), MPI_BYTE, left, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    cr_check(in, sizeof(in), left, cr_rank, 1, 0, "phases");
    if (cr_rank == 0) {
        /* The result line first: rank 0 must not wait in cr_finish for ranks that are in
         * MPI_Finalize already. */
        printf("cr phases np=%d checksum=%016llx: %s\n", cr_size, (unsigned long long)cr_sum,
               cr_errors ? "FAIL" : "ok");
        fflush(stdout);
        if (!before_init) {
            cr_ready();
            cr_wait_go();
        }
    } else if (!before_init) {
        cr_ready();
    }
    MPI_Finalize();
    return cr_errors ? 1 : 0;
}
