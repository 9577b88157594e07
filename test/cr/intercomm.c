/*
 * intercomm: an intercommunicator between the two halves of the world (A, the lower
 * ranks, and B) with its traffic in flight when the checkpoint lands. Every process has
 * sent an eager and a rendezvous message to every process of the other group; the
 * receives of the eager ones are posted, those of the rendezvous ones come after the go.
 * A non-blocking MPI_Iallreduce of rendezvous size is pending on the intercommunicator.
 * The processes of B are inside a blocking MPI_Bcast whose root, rank 0 of A, enters it
 * only after the go (the rest of A passes MPI_PROC_NULL and waits for the allreduce).
 * Then everything completes and is checked, and the merged intracommunicator carries a
 * ring exchange.
 */
#include "cr_common.h"

enum { NINTS = CR_RNDV_BYTES / sizeof(int), MAX_REMOTE = 64 };

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    int half = cr_size / 2, group = cr_rank >= half;
    int lrank = group ? cr_rank - half : cr_rank, rsize = group ? half : cr_size - half;
    int remote_base = group ? 0 : half; /* world rank of remote rank 0 */
    MPI_Comm local, inter, merged;
    MPI_Request eager_reqs[2 * MAX_REMOTE], rndv_sends[MAX_REMOTE], allreduce_req;

    if (cr_size < 2 || rsize > MAX_REMOTE) {
        cr_fail("needs 2 to %d ranks", 2 * MAX_REMOTE);
        return cr_finish("intercomm");
    }
    MPI_Comm_split(MPI_COMM_WORLD, group, cr_rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_base, 7, &inter);

    /* Eager and rendezvous messages to every remote rank; the eager receives posted. */
    char *eager_out = malloc((size_t)rsize * CR_EAGER_BYTES);
    char *eager_in = malloc((size_t)rsize * CR_EAGER_BYTES);
    char *rndv_out = malloc((size_t)rsize * CR_RNDV_BYTES);
    char *rndv_in = malloc(CR_RNDV_BYTES);
    for (int r = 0; r < rsize; r++) {
        char *out = eager_out + (size_t)r * CR_EAGER_BYTES;
        cr_fill(out, CR_EAGER_BYTES, cr_rank, remote_base + r, 1, 0);
        MPI_Irecv(eager_in + (size_t)r * CR_EAGER_BYTES, CR_EAGER_BYTES, MPI_BYTE, r, 1, inter,
                  &eager_reqs[r]);
        MPI_Isend(out, CR_EAGER_BYTES, MPI_BYTE, r, 1, inter, &eager_reqs[rsize + r]);
        out = rndv_out + (size_t)r * CR_RNDV_BYTES;
        cr_fill(out, CR_RNDV_BYTES, cr_rank, remote_base + r, 2, 0);
        MPI_Isend(out, CR_RNDV_BYTES, MPI_BYTE, r, 2, inter, &rndv_sends[r]);
    }

    /* The allreduce: each group gets the sum of the other's values. */
    int *vals = malloc(NINTS * sizeof(int)), *sums = malloc(NINTS * sizeof(int));
    for (int i = 0; i < NINTS; i++) {
        vals[i] = cr_rank + i;
        sums[i] = -1;
    }
    MPI_Iallreduce(vals, sums, NINTS, MPI_INT, MPI_SUM, inter, &allreduce_req);

    /* The broadcast from rank 0 of A, which enters it only after the go. */
    char *bcast = malloc(CR_RNDV_BYTES);
    int root = group ? 0 : lrank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    if (root == MPI_ROOT)
        cr_fill(bcast, CR_RNDV_BYTES, 0, -1, 3, 0);
    cr_ready();
    if (root == MPI_ROOT)
        cr_wait_go();
    MPI_Bcast(bcast, CR_RNDV_BYTES, MPI_BYTE, root, inter);

    MPI_Wait(&allreduce_req, MPI_STATUS_IGNORE);
    MPI_Waitall(2 * rsize, eager_reqs, MPI_STATUSES_IGNORE);
    for (int r = 0; r < rsize; r++)
        cr_check(eager_in + (size_t)r * CR_EAGER_BYTES, CR_EAGER_BYTES, remote_base + r, cr_rank, 1,
                 0, "eager message");
    for (int r = 0; r < rsize; r++) {
        MPI_Status status;
        MPI_Recv(rndv_in, CR_RNDV_BYTES, MPI_BYTE, r, 2, inter, &status);
        if (status.MPI_SOURCE != r)
            cr_fail("rendezvous message from remote rank %d has source %d", r, status.MPI_SOURCE);
        cr_check(rndv_in, CR_RNDV_BYTES, remote_base + r, cr_rank, 2, 0, "rendezvous message");
    }
    MPI_Waitall(rsize, rndv_sends, MPI_STATUSES_IGNORE);
    if (group == 1)
        cr_check(bcast, CR_RNDV_BYTES, 0, -1, 3, 0, "Bcast from the other group");
    int remote_sum = 0;
    for (int r = 0; r < rsize; r++)
        remote_sum += remote_base + r;
    for (int i = 0; i < NINTS; i++) {
        if (sums[i] != remote_sum + rsize * i) {
            cr_fail("Iallreduce: element %d is %d, expected %d", i, sums[i],
                    remote_sum + rsize * i);
            break;
        }
    }
    cr_sum_bytes(sums, NINTS * sizeof(int));

    /* The merged communicator, A first: world order; a ring on it. */
    MPI_Intercomm_merge(inter, group, &merged);
    int mrank, right = (cr_rank + 1) % cr_size, left = (cr_rank + cr_size - 1) % cr_size;
    MPI_Comm_rank(merged, &mrank);
    if (mrank != cr_rank)
        cr_fail("merged rank %d", mrank);
    char out[CR_EAGER_BYTES], in[CR_EAGER_BYTES];
    cr_fill(out, sizeof(out), cr_rank, right, 4, 0);
    MPI_Sendrecv(out, sizeof(out), MPI_BYTE, right, 4, in, sizeof(in), MPI_BYTE, left, 4, merged,
                 MPI_STATUS_IGNORE);
    cr_check(in, sizeof(in), left, cr_rank, 4, 0, "ring on the merged communicator");

    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    free(eager_out);
    free(eager_in);
    free(rndv_out);
    free(rndv_in);
    free(vals);
    free(sums);
    free(bcast);
    return cr_finish("intercomm");
}
