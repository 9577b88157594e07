/*
 * corners: less common messages in flight when the checkpoint lands.
 *  - a rendezvous message to itself (MPI_Isend to its own rank), received after;
 *  - a buffered send (MPI_Bsend, rendezvous size) whose receive is posted after;
 *  - a zero-byte message, received after;
 *  - a rendezvous message of a strided datatype (MPI_Type_vector) whose receive, posted
 *    after, takes it as contiguous bytes, and the reverse;
 *  - a receive posted before and cancelled after (MPI_Cancel, MPI_Test_cancelled);
 *  - a send to MPI_PROC_NULL.
 */
#include "cr_common.h"

#define VEC_COUNT  4096 /* blocks of 16 ints, stride 32: 256 KiB of data */
#define VEC_BLOCK  16
#define VEC_STRIDE 32
#define VEC_BYTES  (VEC_COUNT * VEC_BLOCK * (int)sizeof(int))

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    int right = (cr_rank + 1) % cr_size, left = (cr_rank + cr_size - 1) % cr_size;
    MPI_Datatype vec;
    MPI_Request req[8], cancelled;
    MPI_Status st;
    int n = 0, count, flag;

    MPI_Type_vector(VEC_COUNT, VEC_BLOCK, VEC_STRIDE, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int bsize = CR_RNDV_BYTES + MPI_BSEND_OVERHEAD;
    char *attached = malloc((size_t)bsize);
    MPI_Buffer_attach(attached, bsize);

    char *self_out = malloc(CR_RNDV_BYTES), *self_in = malloc(CR_RNDV_BYTES);
    char *b_out = malloc(CR_RNDV_BYTES), *b_in = malloc(CR_RNDV_BYTES);
    int *strided_out = calloc(VEC_COUNT * VEC_STRIDE, sizeof(int));
    int *strided_in = calloc(VEC_COUNT * VEC_STRIDE, sizeof(int));
    char *flat_out = malloc(VEC_BYTES), *flat_in = malloc(VEC_BYTES);
    char never[8];

    cr_fill(self_out, CR_RNDV_BYTES, cr_rank, cr_rank, 1, 0);
    cr_fill(b_out, CR_RNDV_BYTES, cr_rank, right, 2, 0);
    for (int i = 0; i < VEC_COUNT * VEC_STRIDE; i++)
        strided_out[i] = i % VEC_STRIDE < VEC_BLOCK ? cr_rank * 1000003 + i : -1;
    cr_fill(flat_out, VEC_BYTES, cr_rank, right, 5, 0);

    MPI_Irecv(never, sizeof(never), MPI_BYTE, left, 77, MPI_COMM_WORLD, &cancelled);
    MPI_Isend(self_out, CR_RNDV_BYTES, MPI_BYTE, cr_rank, 1, MPI_COMM_WORLD, &req[n++]);
    MPI_Bsend(b_out, CR_RNDV_BYTES, MPI_BYTE, right, 2, MPI_COMM_WORLD);
    MPI_Isend(NULL, 0, MPI_BYTE, right, 3, MPI_COMM_WORLD, &req[n++]);
    MPI_Isend(strided_out, 1, vec, right, 4, MPI_COMM_WORLD, &req[n++]);
    MPI_Isend(flat_out, VEC_BYTES, MPI_BYTE, right, 5, MPI_COMM_WORLD, &req[n++]);
    MPI_Send(self_out, 1, MPI_INT, MPI_PROC_NULL, 6, MPI_COMM_WORLD);
    cr_ready();
    cr_wait_go();

    MPI_Recv(flat_in, VEC_BYTES, MPI_BYTE, left, 4, MPI_COMM_WORLD, &st); /* vector as bytes */
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (count != VEC_BYTES)
        cr_fail("strided message: %d bytes, %d expected", count, VEC_BYTES);
    for (int i = 0, k = 0; i < VEC_COUNT * VEC_STRIDE; i++) {
        if (i % VEC_STRIDE >= VEC_BLOCK)
            continue;
        int got;
        memcpy(&got, flat_in + sizeof(int) * (size_t)k++, sizeof(int));
        if (got != left * 1000003 + i) {
            cr_fail("strided message: element %d is %d, %d expected", i, got, left * 1000003 + i);
            break;
        }
    }
    cr_sum_bytes(flat_in, VEC_BYTES);
    MPI_Recv(strided_in, 1, vec, left, 5, MPI_COMM_WORLD, &st); /* bytes into a vector */
    for (int i = 0, k = 0; i < VEC_COUNT * VEC_STRIDE; i++) {
        if (i % VEC_STRIDE < VEC_BLOCK)
            memcpy(flat_in + sizeof(int) * (size_t)k++, &strided_in[i], sizeof(int));
        else if (strided_in[i] != 0) {
            cr_fail("a strided receive wrote into a gap (element %d)", i);
            break;
        }
    }
    cr_check(flat_in, VEC_BYTES, left, cr_rank, 5, 0, "bytes received as a vector");
    MPI_Recv(NULL, 0, MPI_BYTE, left, 3, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (count != 0 || st.MPI_SOURCE != left)
        cr_fail("zero-byte message: %d bytes from %d", count, st.MPI_SOURCE);
    MPI_Recv(b_in, CR_RNDV_BYTES, MPI_BYTE, left, 2, MPI_COMM_WORLD, &st);
    cr_check(b_in, CR_RNDV_BYTES, left, cr_rank, 2, 0, "buffered send");
    MPI_Recv(self_in, CR_RNDV_BYTES, MPI_BYTE, cr_rank, 1, MPI_COMM_WORLD, &st);
    cr_check(self_in, CR_RNDV_BYTES, cr_rank, cr_rank, 1, 0, "message to itself");
    MPI_Cancel(&cancelled);
    MPI_Wait(&cancelled, &st);
    MPI_Test_cancelled(&st, &flag);
    if (!flag)
        cr_fail("the receive posted before the checkpoint could not be cancelled");
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    void *detached;
    int dsize;
    MPI_Buffer_detach(&detached, &dsize);
    MPI_Type_free(&vec);
    return cr_finish("corners");
}
