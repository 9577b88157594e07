/*
 * sizes.c: every size class through every send mode (MPI-3.1 section 3.4), and the
 * semantics of the modes: a synchronous send does not complete before the receive is
 * posted, a buffered send completes without the receiver, a ready send meets a posted
 * receive; MPI_Buffer_attach/detach; MPI_Sendrecv and MPI_Sendrecv_replace in a ring.
 *
 * The sizes straddle each BTL's eager limit and fragment size (sm: 4 KiB eager, 32 KiB
 * fragments; tcp: 64 KiB eager, 128 KiB fragments) and end with a message of several
 * fragments that is not a multiple of anything.
 *
 * Every rank sends to NEXT and receives from PREV (itself with one rank).
 *   mpicc -O2 sizes.c -o sizes && mpirun -np 4 ./sizes
 */
#include "p2p_common.h"

static const size_t sizes[] = {0,    1,     7,     8,     1024,   4095,    4096,
                               4097, 65535, 65536, 65537, 131075, 1048576, 4194309};
#define NUM_SIZES (sizeof(sizes) / sizeof(sizes[0]))
#define GUARD     16 /* bytes after the message in each receive buffer, left alone */

enum mode { SEND, ISEND, SSEND, ISSEND, BSEND, IBSEND, RSEND, IRSEND };

/* One message of `len` bytes to NEXT in `mode`, one from PREV, both checked. */
static void ring_exchange(enum mode mode, size_t len, int index)
{
    unsigned char *sbuf = p2p_malloc(len), *rbuf = p2p_malloc(len + GUARD);
    uint32_t seed_out = p2p_seed((uint32_t)p2p_rank, (uint32_t)index, 100 + (uint32_t)mode);
    uint32_t seed_in = p2p_seed((uint32_t)PREV, (uint32_t)index, 100 + (uint32_t)mode);
    MPI_Request rreq, sreq = MPI_REQUEST_NULL;
    MPI_Status st;
    char what[64];

    snprintf(what, sizeof(what), "%zu bytes", len);
    p2p_fill(sbuf, len, seed_out);
    memset(rbuf, 0xa5, len + GUARD);
    /* Room for GUARD more bytes than sent: the count must say what was sent. */
    MPI_OK(MPI_Irecv(rbuf, (int)(len + GUARD), MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &rreq));
    if (mode == RSEND || mode == IRSEND) /* our receive is posted; wait for NEXT's */
        p2p_handshake(PREV, NEXT, TAG(1));
    switch (mode) {
    case SEND: MPI_OK(MPI_Send(sbuf, (int)len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD)); break;
    case SSEND: MPI_OK(MPI_Ssend(sbuf, (int)len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD)); break;
    case BSEND: MPI_OK(MPI_Bsend(sbuf, (int)len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD)); break;
    case RSEND: MPI_OK(MPI_Rsend(sbuf, (int)len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD)); break;
    case ISEND:
        MPI_OK(MPI_Isend(sbuf, (int)len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
        break;
    case ISSEND:
        MPI_OK(MPI_Issend(sbuf, (int)len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
        break;
    case IBSEND:
        MPI_OK(MPI_Ibsend(sbuf, (int)len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
        break;
    case IRSEND:
        MPI_OK(MPI_Irsend(sbuf, (int)len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
        break;
    }
    if (mode == BSEND || mode == IBSEND) {
        /* The message is in the attached buffer: ours may be overwritten at once. */
        MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        memset(sbuf, 0, len);
    }
    MPI_OK(MPI_Wait(&rreq, &st));
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    p2p_check_status(&st, PREV, TAG(0), MPI_BYTE, (int)len, what);
    p2p_check(rbuf, len, seed_in, what);
    p2p_check_untouched(rbuf + len, GUARD, 0xa5, what);
    free(sbuf);
    free(rbuf);
}

static void all_sizes(enum mode mode)
{
    void *attached = NULL;
    int attached_size = 0;

    if (mode == BSEND || mode == IBSEND) {
        /* Room for every message at once: all we learn in the loop is that PREV's
         * messages reached us, not that ours left the buffer. */
        for (size_t i = 0; i < NUM_SIZES; i++) {
            int pack;
            MPI_OK(MPI_Pack_size((int)sizes[i], MPI_BYTE, MPI_COMM_WORLD, &pack));
            attached_size += pack + MPI_BSEND_OVERHEAD;
        }
        attached = p2p_malloc((size_t)attached_size);
        MPI_OK(MPI_Buffer_attach(attached, attached_size));
    }
    for (size_t i = 0; i < NUM_SIZES; i++)
        ring_exchange(mode, sizes[i], (int)i);
    if (attached) {
        void *detached = NULL;
        int detached_size = -1;
        MPI_OK(MPI_Buffer_detach(&detached, &detached_size));
        CHECK(detached == attached && detached_size == attached_size,
              "MPI_Buffer_detach gave %p (%d bytes), attached %p (%d bytes)", detached,
              detached_size, attached, attached_size);
        free(attached);
    }
}

static void sizes_send(void)
{
    all_sizes(SEND);
}

static void sizes_isend(void)
{
    all_sizes(ISEND);
}

static void sizes_ssend(void)
{
    all_sizes(SSEND);
}

static void sizes_issend(void)
{
    all_sizes(ISSEND);
}

static void sizes_bsend(void)
{
    all_sizes(BSEND);
}

static void sizes_ibsend(void)
{
    all_sizes(IBSEND);
}

static void sizes_rsend(void)
{
    all_sizes(RSEND);
}

static void sizes_irsend(void)
{
    all_sizes(IRSEND);
}

/* Large messages as MPI_INT and MPI_DOUBLE: counts in elements, data in place. */
static void sizes_typed(void)
{
    static const int counts[] = {1, 1023, 1024, 16385, 262147};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        int n = counts[i];
        int *si = p2p_malloc(sizeof(int) * (size_t)n), *ri = p2p_malloc(sizeof(int) * (size_t)n);
        double *sd = p2p_malloc(sizeof(double) * (size_t)n);
        double *rd = p2p_malloc(sizeof(double) * (size_t)n);
        MPI_Request req[4];
        MPI_Status st[4];
        for (int k = 0; k < n; k++) {
            si[k] = p2p_rank * 1000000 + k;
            sd[k] = p2p_rank + k * 0.5;
            ri[k] = -1;
            rd[k] = -1.0;
        }
        MPI_OK(MPI_Irecv(ri, n, MPI_INT, PREV, TAG(0), MPI_COMM_WORLD, &req[0]));
        MPI_OK(MPI_Irecv(rd, n, MPI_DOUBLE, PREV, TAG(1), MPI_COMM_WORLD, &req[1]));
        MPI_OK(MPI_Isend(sd, n, MPI_DOUBLE, NEXT, TAG(1), MPI_COMM_WORLD, &req[2]));
        MPI_OK(MPI_Isend(si, n, MPI_INT, NEXT, TAG(0), MPI_COMM_WORLD, &req[3]));
        MPI_OK(MPI_Waitall(4, req, st));
        p2p_check_status(&st[0], PREV, TAG(0), MPI_INT, n, "ints");
        p2p_check_status(&st[1], PREV, TAG(1), MPI_DOUBLE, n, "doubles");
        int bad = 0;
        for (int k = 0; k < n; k++)
            bad += ri[k] != PREV * 1000000 + k || rd[k] != PREV + k * 0.5;
        CHECK(bad == 0, "%d of %d elements wrong", bad, n);
        free(si);
        free(ri);
        free(sd);
        free(rd);
    }
}

/*
 * MPI_Ssend does not return before the receive is posted. Rank 0 reads the clock, tells
 * rank 1 to start, and sends; rank 1 sleeps DELAY_MS after the word, then receives. So
 * whatever the scheduling, the receive is posted at least DELAY_MS after rank 0 read the
 * clock, and MPI_Ssend cannot return sooner.
 */
#define DELAY_MS 200
static void ssend_waits_for_receive(void)
{
    static const size_t lens[] = {0, 8, 100000};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t len = lens[i];
        unsigned char *buf = p2p_malloc(len);
        if (p2p_rank == 0) {
            p2p_fill(buf, len, p2p_seed(0, (uint32_t)i, 7));
            double t0 = MPI_Wtime();
            p2p_signal(1, TAG(1));
            MPI_OK(MPI_Ssend(buf, (int)len, MPI_BYTE, 1, TAG(0), MPI_COMM_WORLD));
            double elapsed = MPI_Wtime() - t0;
            CHECK(elapsed >= DELAY_MS / 1000.0,
                  "MPI_Ssend of %zu bytes returned after %.3f s, before the receive was posted "
                  "(%.3f s)",
                  len, elapsed, DELAY_MS / 1000.0);
        } else if (p2p_rank == 1) {
            MPI_Status st;
            p2p_wait_signal(0, TAG(1));
            p2p_sleep_ms(DELAY_MS);
            MPI_OK(MPI_Recv(buf, (int)len, MPI_BYTE, 0, TAG(0), MPI_COMM_WORLD, &st));
            p2p_check_status(&st, 0, TAG(0), MPI_BYTE, (int)len, "ssend");
            p2p_check(buf, len, p2p_seed(0, (uint32_t)i, 7), "ssend");
        }
        free(buf);
    }
}

/*
 * MPI_Issend is not complete while the receiver has posted nothing: rank 1 posts its
 * receive only after rank 0 has tested many times and sent the word. No clock involved.
 */
static void issend_incomplete_until_matched(void)
{
    static const size_t lens[] = {0, 16, 5000, 70000};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t len = lens[i];
        unsigned char *buf = p2p_malloc(len);
        if (p2p_rank == 0) {
            MPI_Request req;
            MPI_Status st;
            int flag = 0, early = 0;
            p2p_fill(buf, len, p2p_seed(0, (uint32_t)i, 8));
            MPI_OK(MPI_Issend(buf, (int)len, MPI_BYTE, 1, TAG(0), MPI_COMM_WORLD, &req));
            for (int k = 0; k < 200 && !early; k++) {
                MPI_OK(MPI_Request_get_status(req, &flag, &st));
                early = flag;
                if (k % 20 == 0)
                    p2p_sleep_ms(1);
            }
            MPI_OK(MPI_Test(&req, &flag, &st));
            early = early || flag;
            CHECK(!early, "MPI_Issend of %zu bytes completed before the receive was posted", len);
            p2p_signal(1, TAG(1));
            if (!flag)
                MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else if (p2p_rank == 1) {
            MPI_Status st;
            p2p_wait_signal(0, TAG(1));
            MPI_OK(MPI_Recv(buf, (int)len, MPI_BYTE, 0, TAG(0), MPI_COMM_WORLD, &st));
            p2p_check_status(&st, 0, TAG(0), MPI_BYTE, (int)len, "issend");
            p2p_check(buf, len, p2p_seed(0, (uint32_t)i, 8), "issend");
        }
        free(buf);
    }
}

/*
 * MPI_Bsend returns without the receiver: rank 1 posts its receives only after rank 0's
 * buffered sends (eager and rendezvous sizes) have all returned. A blocking
 * implementation hangs here (and the alarm names this subtest).
 */
static void bsend_completes_without_receiver(void)
{
    static const size_t lens[] = {10, 5000, 70000, 300000};
    const int n = (int)(sizeof(lens) / sizeof(lens[0]));
    if (p2p_rank == 0) {
        int size = 0;
        for (int i = 0; i < n; i++) {
            int pack;
            MPI_OK(MPI_Pack_size((int)lens[i], MPI_BYTE, MPI_COMM_WORLD, &pack));
            size += pack + MPI_BSEND_OVERHEAD;
        }
        void *attached = p2p_malloc((size_t)size), *detached = NULL;
        unsigned char *buf = p2p_malloc(300000);
        MPI_OK(MPI_Buffer_attach(attached, size));
        for (int i = 0; i < n; i++) {
            p2p_fill(buf, lens[i], p2p_seed(0, (uint32_t)i, 9));
            MPI_OK(MPI_Bsend(buf, (int)lens[i], MPI_BYTE, 1, TAG(0), MPI_COMM_WORLD));
        }
        memset(buf, 0, 300000); /* the copies in the attached buffer are what travels */
        p2p_signal(1, TAG(1));
        /* Detach waits until every buffered message has been delivered. */
        int detached_size = 0;
        MPI_OK(MPI_Buffer_detach(&detached, &detached_size));
        CHECK(detached == attached && detached_size == size, "MPI_Buffer_detach: %p %d", detached,
              detached_size);
        free(attached);
        free(buf);
    } else if (p2p_rank == 1) {
        unsigned char *buf = p2p_malloc(300000);
        MPI_Status st;
        p2p_wait_signal(0, TAG(1));
        for (int i = 0; i < n; i++) {
            char what[32];
            snprintf(what, sizeof(what), "bsend %zu bytes", lens[i]);
            MPI_OK(MPI_Recv(buf, 300000, MPI_BYTE, 0, TAG(0), MPI_COMM_WORLD, &st));
            p2p_check_status(&st, 0, TAG(0), MPI_BYTE, (int)lens[i], what);
            p2p_check(buf, lens[i], p2p_seed(0, (uint32_t)i, 9), what);
        }
        free(buf);
    }
}

/* Attach, use, detach, attach another buffer, use, detach: each detach returns the buffer
 * of its attach. */
static void bsend_attach_detach_twice(void)
{
    for (int round = 0; round < 2; round++) {
        int len = round ? 70000 : 100, pack, size;
        MPI_OK(MPI_Pack_size(len, MPI_BYTE, MPI_COMM_WORLD, &pack));
        size = 3 * (pack + MPI_BSEND_OVERHEAD);
        void *attached = p2p_malloc((size_t)size), *detached = NULL;
        unsigned char *sbuf = p2p_malloc((size_t)len), *rbuf = p2p_malloc(3 * (size_t)len);
        MPI_Request rreq[3];
        MPI_Status st[3];
        int detached_size = 0;

        MPI_OK(MPI_Buffer_attach(attached, size));
        for (int k = 0; k < 3; k++)
            MPI_OK(MPI_Irecv(rbuf + k * len, len, MPI_BYTE, PREV, TAG(round), MPI_COMM_WORLD,
                             &rreq[k]));
        for (int k = 0; k < 3; k++) {
            p2p_fill(sbuf, (size_t)len, p2p_seed((uint32_t)p2p_rank, (uint32_t)k, 10));
            MPI_OK(MPI_Bsend(sbuf, len, MPI_BYTE, NEXT, TAG(round), MPI_COMM_WORLD));
        }
        MPI_OK(MPI_Buffer_detach(&detached, &detached_size));
        CHECK(detached == attached && detached_size == size,
              "round %d: MPI_Buffer_detach gave %p (%d bytes), attached %p (%d bytes)", round,
              detached, detached_size, attached, size);
        MPI_OK(MPI_Waitall(3, rreq, st));
        for (int k = 0; k < 3; k++) {
            p2p_check_status(&st[k], PREV, TAG(round), MPI_BYTE, len, "bsend");
            p2p_check(rbuf + k * len, (size_t)len, p2p_seed((uint32_t)PREV, (uint32_t)k, 10),
                      "bsend");
        }
        free(attached);
        free(sbuf);
        free(rbuf);
    }
}

/* MPI_Sendrecv around the ring, many sizes, with different send and receive buffers. */
static void sendrecv_ring(void)
{
    for (size_t i = 0; i < NUM_SIZES; i++) {
        size_t len = sizes[i];
        unsigned char *sbuf = p2p_malloc(len), *rbuf = p2p_malloc(len + GUARD);
        MPI_Status st;
        char what[48];
        snprintf(what, sizeof(what), "sendrecv %zu bytes", len);
        p2p_fill(sbuf, len, p2p_seed((uint32_t)p2p_rank, (uint32_t)i, 11));
        memset(rbuf, 0xa5, len + GUARD);
        MPI_OK(MPI_Sendrecv(sbuf, (int)len, MPI_BYTE, NEXT, TAG(0), rbuf, (int)(len + GUARD),
                            MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &st));
        p2p_check_status(&st, PREV, TAG(0), MPI_BYTE, (int)len, what);
        p2p_check(rbuf, len, p2p_seed((uint32_t)PREV, (uint32_t)i, 11), what);
        p2p_check_untouched(rbuf + len, GUARD, 0xa5, what);
        free(sbuf);
        free(rbuf);
    }
    /* The other way round, with different types on the two sides of one call. */
    int out[2] = {p2p_rank, -p2p_rank}, in[2] = {-1, -1};
    double dout = p2p_rank + 0.25, din = -1;
    MPI_Status st;
    MPI_Request r;
    MPI_OK(MPI_Irecv(&din, 1, MPI_DOUBLE, PREV, TAG(3), MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Sendrecv(out, 2, MPI_INT, PREV, TAG(2), in, 2, MPI_INT, NEXT, TAG(2), MPI_COMM_WORLD,
                        &st));
    p2p_check_status(&st, NEXT, TAG(2), MPI_INT, 2, "reverse ring");
    CHECK(in[0] == NEXT && in[1] == -NEXT, "reverse ring: got %d %d from rank %d", in[0], in[1],
          NEXT);
    MPI_OK(MPI_Sendrecv(&dout, 1, MPI_DOUBLE, NEXT, TAG(3), NULL, 0, MPI_INT, MPI_PROC_NULL, 0,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(din == PREV + 0.25, "double from rank %d: %g", PREV, din);
}

/* MPI_Sendrecv_replace around the ring: after k steps the buffer holds rank (r-k)'s data. */
static void sendrecv_replace_ring(void)
{
    static const size_t lens[] = {0, 7, 4097, 65537, 1048576};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t len = lens[i];
        unsigned char *buf = p2p_malloc(len);
        p2p_fill(buf, len, p2p_seed((uint32_t)p2p_rank, (uint32_t)i, 12));
        for (int step = 1; step <= p2p_size; step++) {
            MPI_Status st;
            int from = (p2p_rank - step % p2p_size + p2p_size) % p2p_size;
            char what[64];
            snprintf(what, sizeof(what), "replace %zu bytes, step %d", len, step);
            MPI_OK(MPI_Sendrecv_replace(buf, (int)len, MPI_BYTE, NEXT, TAG(0), PREV, TAG(0),
                                        MPI_COMM_WORLD, &st));
            p2p_check_status(&st, PREV, TAG(0), MPI_BYTE, (int)len, what);
            p2p_check(buf, len, p2p_seed((uint32_t)from, (uint32_t)i, 12), what);
        }
        free(buf);
    }
}

/* One subtest a line, as test_p2p.py reads them. */
/* clang-format off */
static const p2p_test_t tests[] = {
    P2P_TEST(sizes_send, 1),
    P2P_TEST(sizes_isend, 1),
    P2P_TEST(sizes_ssend, 1),
    P2P_TEST(sizes_issend, 1),
    P2P_TEST(sizes_bsend, 1),
    P2P_TEST(sizes_ibsend, 1),
    P2P_TEST(sizes_rsend, 1),
    P2P_TEST(sizes_irsend, 1),
    P2P_TEST(sizes_typed, 1),
    P2P_TEST(ssend_waits_for_receive, 2),
    P2P_TEST(issend_incomplete_until_matched, 2),
    P2P_TEST(bsend_completes_without_receiver, 2),
    P2P_TEST(bsend_attach_detach_twice, 1),
    P2P_TEST(sendrecv_ring, 1),
    P2P_TEST(sendrecv_replace_ring, 1),
};
/* clang-format on */

P2P_MAIN(tests)
