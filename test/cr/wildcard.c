/*
 * wildcard: ANY_SOURCE and ANY_TAG receives pending when the checkpoint lands.
 *  - rank 0 posts 2 * (np - 1) receives (ANY_SOURCE, tag 5); every other rank sends it one
 *    eager message before the checkpoint and one rendezvous message after. Which sender
 *    matches which receive depends on timing, so the checksum is taken in (source, index)
 *    order; MPI's non-overtaking rule is checked: per sender, the first message matches
 *    an earlier-posted receive than the second (MPI-3.1 section 3.5).
 *  - rank np-1 posts three receives (0, ANY_TAG); rank 0 sends tag 7 before the
 *    checkpoint, tags 8 and 9 after: they must complete the receives in that order.
 *  - rank 1 posts two receives (ANY_SOURCE, ANY_TAG) on a duplicate of MPI_COMM_WORLD;
 *    rank 0 sends one on it before the checkpoint and one after.
 */
#include "cr_common.h"

#define HDR 8 /* first bytes of a message: its index, so that a receiver knows what it got */

static void wc_fill(char *buf, size_t len, int src, int dst, int tag, int index)
{
    cr_fill(buf, len, src, dst, tag, index);
    memcpy(buf, &index, sizeof(index));
}

static int wc_index(const char *buf)
{
    int index;

    memcpy(&index, buf, sizeof(index));
    return index;
}

static void wc_check(const char *buf, size_t len, int src, int dst, int tag, int index)
{
    char *want = malloc(len);

    wc_fill(want, len, src, dst, tag, index);
    if (memcmp(want, buf, len) != 0)
        cr_fail("wildcard: message %d from %d tag %d (%zu bytes) is damaged", index, src, tag, len);
    free(want);
    cr_sum_bytes(buf, len);
}

int main(int argc, char **argv)
{
    cr_init(&argc, &argv, MPI_THREAD_SINGLE);
    int last = cr_size - 1, nany = 2 * (cr_size - 1);
    MPI_Comm dup;
    MPI_Request any_req[64], tag_req[3], dup_req[2], send_req[8];
    char *any_buf[64], *tag_buf[3], *dup_buf[2], *send_buf[8];
    int nsend = 0;

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    /* The receives, before anything is sent. */
    if (cr_rank == 0) {
        for (int i = 0; i < nany; i++) {
            any_buf[i] = malloc(CR_RNDV_BYTES);
            MPI_Irecv(any_buf[i], CR_RNDV_BYTES, MPI_BYTE, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD,
                      &any_req[i]);
        }
    }
    if (cr_rank == last) {
        for (int i = 0; i < 3; i++) {
            tag_buf[i] = malloc(CR_RNDV_BYTES);
            MPI_Irecv(tag_buf[i], CR_RNDV_BYTES, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD,
                      &tag_req[i]);
        }
    }
    if (cr_rank == 1) {
        for (int i = 0; i < 2; i++) {
            dup_buf[i] = malloc(CR_RNDV_BYTES);
            MPI_Irecv(dup_buf[i], CR_RNDV_BYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, dup,
                      &dup_req[i]);
        }
    }
    /* Every receive is posted everywhere before the first send (the non-overtaking check
     * needs rank 0's receives to be there first). */
    MPI_Comm dup2;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup2); /* a collective: a barrier here */
    MPI_Comm_free(&dup2);

    /* Before the checkpoint. */
    if (cr_rank != 0) {
        send_buf[nsend] = malloc(CR_EAGER_BYTES);
        wc_fill(send_buf[nsend], CR_EAGER_BYTES, cr_rank, 0, 5, 0);
        MPI_Isend(send_buf[nsend], CR_EAGER_BYTES, MPI_BYTE, 0, 5, MPI_COMM_WORLD,
                  &send_req[nsend]);
        nsend++;
    } else {
        send_buf[nsend] = malloc(CR_EAGER_BYTES);
        wc_fill(send_buf[nsend], CR_EAGER_BYTES, 0, last, 7, 0);
        MPI_Isend(send_buf[nsend], CR_EAGER_BYTES, MPI_BYTE, last, 7, MPI_COMM_WORLD,
                  &send_req[nsend]);
        nsend++;
        send_buf[nsend] = malloc(CR_RNDV_BYTES);
        wc_fill(send_buf[nsend], CR_RNDV_BYTES, 0, 1, 20, 0);
        MPI_Isend(send_buf[nsend], CR_RNDV_BYTES, MPI_BYTE, 1, 20, dup, &send_req[nsend]);
        nsend++;
    }
    cr_ready();
    cr_wait_go();

    /* After it. */
    if (cr_rank != 0) {
        send_buf[nsend] = malloc(CR_RNDV_BYTES);
        wc_fill(send_buf[nsend], CR_RNDV_BYTES, cr_rank, 0, 5, 1);
        MPI_Isend(send_buf[nsend], CR_RNDV_BYTES, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &send_req[nsend]);
        nsend++;
    } else {
        for (int t = 8; t <= 9; t++) {
            size_t len = t == 8 ? CR_RNDV_BYTES : CR_EAGER_BYTES;
            send_buf[nsend] = malloc(len);
            wc_fill(send_buf[nsend], len, 0, last, t, t - 7);
            MPI_Isend(send_buf[nsend], (int)len, MPI_BYTE, last, t, MPI_COMM_WORLD,
                      &send_req[nsend]);
            nsend++;
        }
        send_buf[nsend] = malloc(CR_EAGER_BYTES);
        wc_fill(send_buf[nsend], CR_EAGER_BYTES, 0, 1, 21, 1);
        MPI_Isend(send_buf[nsend], CR_EAGER_BYTES, MPI_BYTE, 1, 21, dup, &send_req[nsend]);
        nsend++;
    }

    if (cr_rank == 0) {
        MPI_Status st[64];
        int *slot_of = calloc((size_t)(2 * cr_size), sizeof(int)); /* (src, index) -> receive */

        MPI_Waitall(nany, any_req, st);
        for (int i = 0; i < nany; i++) {
            int src = st[i].MPI_SOURCE, index = wc_index(any_buf[i]), count;

            MPI_Get_count(&st[i], MPI_BYTE, &count);
            if (src < 1 || src >= cr_size || (index != 0 && index != 1) ||
                count != (index ? CR_RNDV_BYTES : CR_EAGER_BYTES)) {
                cr_fail("ANY_SOURCE receive %d: source %d, index %d, %d bytes", i, src, index,
                        count);
                continue;
            }
            slot_of[2 * src + index] = i + 1;
        }
        for (int src = 1; src < cr_size; src++) {
            int first = slot_of[2 * src], second = slot_of[2 * src + 1];

            if (!first || !second) {
                cr_fail("ANY_SOURCE: a message of rank %d is missing", src);
                continue;
            }
            if (first > second)
                cr_fail("ANY_SOURCE: rank %d's second message overtook its first", src);
            wc_check(any_buf[first - 1], CR_EAGER_BYTES, src, 0, 5, 0);
            wc_check(any_buf[second - 1], CR_RNDV_BYTES, src, 0, 5, 1);
        }
    }
    if (cr_rank == last) {
        MPI_Status st[3];

        MPI_Waitall(3, tag_req, st);
        for (int i = 0; i < 3; i++) {
            int count;

            MPI_Get_count(&st[i], MPI_BYTE, &count);
            if (st[i].MPI_TAG != 7 + i) {
                cr_fail("ANY_TAG receive %d got tag %d, %d expected", i, st[i].MPI_TAG, 7 + i);
                continue;
            }
            wc_check(tag_buf[i], (size_t)count, 0, last, 7 + i, i);
        }
    }
    if (cr_rank == 1) {
        MPI_Status st[2];

        MPI_Waitall(2, dup_req, st);
        for (int i = 0; i < 2; i++) {
            int count;

            MPI_Get_count(&st[i], MPI_BYTE, &count);
            if (st[i].MPI_SOURCE != 0 || st[i].MPI_TAG != 20 + i) {
                cr_fail("ANY_SOURCE/ANY_TAG receive %d got (%d, %d), (0, %d) expected", i,
                        st[i].MPI_SOURCE, st[i].MPI_TAG, 20 + i);
                continue;
            }
            wc_check(dup_buf[i], (size_t)count, 0, 1, 20 + i, i);
        }
    }
    MPI_Waitall(nsend, send_req, MPI_STATUSES_IGNORE);
    MPI_Comm_free(&dup);
    return cr_finish("wildcard");
}
