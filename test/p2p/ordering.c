/*
 * ordering.c: non-overtaking (MPI-3.1 section 3.5). Messages from one sender to one
 * receiver on one communicator that match the same receive arrive in the order they were
 * sent, whatever their protocol: eager and rendezvous messages are interleaved, matched
 * against receives posted before they arrive and against receives posted after.
 *
 * Every rank sends to NEXT and receives from PREV (itself with one rank).
 *   mpicc -O2 ordering.c -o ordering && mpirun -np 3 ./ordering
 */
#include "p2p_common.h"

/* Lengths of the mixed streams: consecutive messages cross the eager limits of sm (4 KiB)
 * and tcp (64 KiB) both ways, so eager and rendezvous messages interleave. */
static const size_t mixed_sizes[] = {1,    5000, 8,     70000, 0, 300,    140000,
                                     4096, 2,    65536, 33000, 7, 1048579};
#define NUM_MIXED (sizeof(mixed_sizes) / sizeof(mixed_sizes[0]))
#define MAX_MIXED 1048579

static size_t small_size(int i)
{
    return (size_t)(i % 61) + 4; /* 4..64 bytes: eager everywhere */
}

static size_t mixed_size(int i)
{
    return mixed_sizes[i % NUM_MIXED];
}

/* Message i of a sender is the pattern of (sender, i): a message received in the wrong place
 * shows as a wrong length or wrong bytes. */
static void make_message(unsigned char *buf, size_t len, int sender, int i)
{
    p2p_fill(buf, len, p2p_seed((uint32_t)sender, (uint32_t)i, 1));
}

static void check_message(const unsigned char *buf, const MPI_Status *st, size_t len, int sender,
                          int tag, int i)
{
    char what[96];
    snprintf(what, sizeof(what), "message %d from rank %d (%zu bytes)", i, sender, len);
    p2p_check_status(st, sender, tag, MPI_BYTE, (int)len, what);
    if (p2p_count(st, MPI_BYTE) == (int)len)
        p2p_check(buf, len, p2p_seed((uint32_t)sender, (uint32_t)i, 1), what);
}

/*
 * `n` messages from PREV on one tag, each into its own buffer, every receive posted before
 * any message is sent (the sender waits for our signal). The sender uses blocking sends:
 * the receives are there.
 */
static void stream_preposted(int n, size_t (*size_of)(int), size_t cap)
{
    unsigned char **rbuf = p2p_malloc(sizeof(*rbuf) * (size_t)n);
    MPI_Request *req = p2p_malloc(sizeof(*req) * (size_t)n);
    MPI_Status *st = p2p_malloc(sizeof(*st) * (size_t)n);
    unsigned char *sbuf = p2p_malloc(MAX_MIXED);
    MPI_Request *sreq = p2p_malloc(sizeof(*sreq) * (size_t)n);

    for (int i = 0; i < n; i++) {
        /* Room for the longest message of the stream: a wrong match shows as a wrong count. */
        rbuf[i] = p2p_malloc(cap);
        MPI_OK(MPI_Irecv(rbuf[i], (int)cap, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &req[i]));
    }
    p2p_handshake(PREV, NEXT, TAG(1));
    for (int i = 0; i < n; i++) {
        make_message(sbuf, size_of(i), p2p_rank, i);
        if (p2p_size > 1) {
            MPI_OK(MPI_Send(sbuf, (int)size_of(i), MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD));
        } else {
            /* To oneself: the receive is posted, but keep the send non-blocking anyway so
             * that a standard send to self never depends on buffering. */
            MPI_OK(
                MPI_Isend(sbuf, (int)size_of(i), MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq[i]));
            MPI_OK(MPI_Wait(&sreq[i], MPI_STATUS_IGNORE));
        }
    }
    MPI_OK(MPI_Waitall(n, req, st));
    for (int i = 0; i < n; i++) {
        check_message(rbuf[i], &st[i], size_of(i), PREV, TAG(0), i);
        free(rbuf[i]);
    }
    free(rbuf);
    free(req);
    free(st);
    free(sbuf);
    free(sreq);
}

/*
 * `n` messages from PREV on one tag, all sent (non-blocking) before the receiver posts
 * anything: eager ones wait as unexpected messages, rendezvous ones as announcements.
 */
static void stream_unexpected(int n, size_t (*size_of)(int))
{
    unsigned char **sbuf = p2p_malloc(sizeof(*sbuf) * (size_t)n);
    MPI_Request *sreq = p2p_malloc(sizeof(*sreq) * (size_t)n);
    unsigned char *rbuf = p2p_malloc(MAX_MIXED);
    MPI_Status st;

    for (int i = 0; i < n; i++) {
        sbuf[i] = p2p_malloc(size_of(i));
        make_message(sbuf[i], size_of(i), p2p_rank, i);
        MPI_OK(
            MPI_Isend(sbuf[i], (int)size_of(i), MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq[i]));
    }
    /* "All started" to NEXT; wait for PREV's, then give its messages time to arrive. */
    p2p_handshake(NEXT, PREV, TAG(1));
    p2p_sleep_ms(20);
    for (int i = 0; i < n; i++) {
        memset(rbuf, 0, size_of(i));
        MPI_OK(MPI_Recv(rbuf, MAX_MIXED, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &st));
        check_message(rbuf, &st, size_of(i), PREV, TAG(0), i);
    }
    MPI_OK(MPI_Waitall(n, sreq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++)
        free(sbuf[i]);
    free(sbuf);
    free(sreq);
    free(rbuf);
}

static void order_small_preposted(void)
{
    stream_preposted(300, small_size, 64);
}

static void order_small_unexpected(void)
{
    stream_unexpected(300, small_size);
}

static void order_mixed_preposted(void)
{
    stream_preposted(2 * (int)NUM_MIXED, mixed_size, MAX_MIXED);
}

static void order_mixed_unexpected(void)
{
    stream_unexpected(2 * (int)NUM_MIXED, mixed_size);
}

/*
 * Half preposted, half unexpected on the same tag: the receiver posts receives for the
 * first half, the sender sends everything, then the receiver receives the rest. The
 * preposted receives must take the first messages, whichever arrived first.
 */
static void order_mixed_half_preposted(void)
{
    const int n = 2 * (int)NUM_MIXED, half = (int)NUM_MIXED;
    unsigned char **sbuf = p2p_malloc(sizeof(*sbuf) * (size_t)n);
    unsigned char **rbuf = p2p_malloc(sizeof(*rbuf) * (size_t)half);
    MPI_Request *sreq = p2p_malloc(sizeof(*sreq) * (size_t)n);
    MPI_Request *rreq = p2p_malloc(sizeof(*rreq) * (size_t)half);
    MPI_Status *st = p2p_malloc(sizeof(*st) * (size_t)half);
    unsigned char *last = p2p_malloc(MAX_MIXED);
    MPI_Status one;

    for (int i = 0; i < half; i++) {
        rbuf[i] = p2p_malloc(MAX_MIXED);
        MPI_OK(MPI_Irecv(rbuf[i], MAX_MIXED, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &rreq[i]));
    }
    p2p_handshake(PREV, NEXT, TAG(1));
    for (int i = 0; i < n; i++) {
        sbuf[i] = p2p_malloc(mixed_size(i));
        make_message(sbuf[i], mixed_size(i), p2p_rank, i);
        MPI_OK(MPI_Isend(sbuf[i], (int)mixed_size(i), MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD,
                         &sreq[i]));
    }
    for (int i = half; i < n; i++) {
        MPI_OK(MPI_Recv(last, MAX_MIXED, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &one));
        check_message(last, &one, mixed_size(i), PREV, TAG(0), i);
    }
    MPI_OK(MPI_Waitall(half, rreq, st));
    for (int i = 0; i < half; i++) {
        check_message(rbuf[i], &st[i], mixed_size(i), PREV, TAG(0), i);
        free(rbuf[i]);
    }
    MPI_OK(MPI_Waitall(n, sreq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++)
        free(sbuf[i]);
    free(sbuf);
    free(rbuf);
    free(sreq);
    free(rreq);
    free(st);
    free(last);
}

/*
 * Two tags interleaved by the sender (A0 B0 A1 B1 ...), received all of B first, then all
 * of A: order holds per tag, and a message of one tag never blocks the other.
 */
static void order_two_tags_interleaved(void)
{
    const int n = 2 * (int)NUM_MIXED;
    unsigned char **sbuf = p2p_malloc(sizeof(*sbuf) * (size_t)(2 * n));
    MPI_Request *sreq = p2p_malloc(sizeof(*sreq) * (size_t)(2 * n));
    unsigned char *rbuf = p2p_malloc(MAX_MIXED);
    MPI_Status st;

    for (int i = 0; i < n; i++) {
        for (int t = 0; t < 2; t++) {
            int k = 2 * i + t, id = i + t * 1000;
            /* Tag B gets the sizes in reverse, so that A and B differ at each step. */
            size_t len = mixed_size(t ? n - 1 - i : i);
            sbuf[k] = p2p_malloc(len);
            make_message(sbuf[k], len, p2p_rank, id);
            MPI_OK(
                MPI_Isend(sbuf[k], (int)len, MPI_BYTE, NEXT, TAG(2 + t), MPI_COMM_WORLD, &sreq[k]));
        }
    }
    for (int t = 1; t >= 0; t--) {
        for (int i = 0; i < n; i++) {
            MPI_OK(MPI_Recv(rbuf, MAX_MIXED, MPI_BYTE, PREV, TAG(2 + t), MPI_COMM_WORLD, &st));
            check_message(rbuf, &st, mixed_size(t ? n - 1 - i : i), PREV, TAG(2 + t), i + t * 1000);
        }
    }
    MPI_OK(MPI_Waitall(2 * n, sreq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 2 * n; k++)
        free(sbuf[k]);
    free(sbuf);
    free(sreq);
    free(rbuf);
}

/*
 * A large message started with MPI_Isend, then small ones with blocking MPI_Send: the
 * small ones complete at once (eager) but must still be received after the large one.
 * Needs two ranks: a blocking send to oneself would depend on buffering.
 */
static void order_large_then_small_blocking(void)
{
    const size_t big = 1048576 + 5;
    const int smalls = 20;
    unsigned char *buf = p2p_malloc(big);
    MPI_Status st;

    if (p2p_rank == 0) {
        MPI_Request req;
        make_message(buf, big, 0, 0);
        MPI_OK(MPI_Isend(buf, (int)big, MPI_BYTE, 1, TAG(0), MPI_COMM_WORLD, &req));
        for (int i = 1; i <= smalls; i++) {
            unsigned char small[64];
            make_message(small, small_size(i), 0, i);
            MPI_OK(MPI_Send(small, (int)small_size(i), MPI_BYTE, 1, TAG(0), MPI_COMM_WORLD));
        }
        /* Only now may rank 1 receive: every small message was sent first. */
        p2p_signal(1, TAG(1));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else if (p2p_rank == 1) {
        p2p_wait_signal(0, TAG(1));
        for (int i = 0; i <= smalls; i++) {
            memset(buf, 0, big);
            MPI_OK(MPI_Recv(buf, (int)big, MPI_BYTE, 0, TAG(0), MPI_COMM_WORLD, &st));
            check_message(buf, &st, i == 0 ? big : small_size(i), 0, TAG(0), i);
        }
    }
    free(buf);
}

/* One subtest a line, as test_p2p.py reads them. */
/* clang-format off */
static const p2p_test_t tests[] = {
    P2P_TEST(order_small_preposted, 1),
    P2P_TEST(order_small_unexpected, 1),
    P2P_TEST(order_mixed_preposted, 1),
    P2P_TEST(order_mixed_unexpected, 1),
    P2P_TEST(order_mixed_half_preposted, 1),
    P2P_TEST(order_two_tags_interleaved, 1),
    P2P_TEST(order_large_then_small_blocking, 2),
};
/* clang-format on */

P2P_MAIN(tests)
