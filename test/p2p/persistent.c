/*
 * persistent.c: persistent requests (MPI-3.1 section 3.9): MPI_Send_init, MPI_Ssend_init,
 * MPI_Bsend_init, MPI_Rsend_init and MPI_Recv_init started many times with MPI_Start and
 * MPI_Startall, with new data each time; MPI_Wait and MPI_Test on inactive requests;
 * MPI_Request_free of inactive requests; MPI_PROC_NULL and MPI_ANY_SOURCE.
 *
 * Every rank sends to NEXT and receives from PREV (itself with one rank).
 *   mpicc -O2 persistent.c -o persistent && mpirun -np 3 ./persistent
 */
#include "p2p_common.h"

enum mode { STANDARD, SYNCHRONOUS, BUFFERED, READY };

static int make_send(enum mode mode, void *buf, int len, int tag, MPI_Request *req)
{
    switch (mode) {
    case STANDARD: return MPI_Send_init(buf, len, MPI_BYTE, NEXT, tag, MPI_COMM_WORLD, req);
    case SYNCHRONOUS: return MPI_Ssend_init(buf, len, MPI_BYTE, NEXT, tag, MPI_COMM_WORLD, req);
    case BUFFERED: return MPI_Bsend_init(buf, len, MPI_BYTE, NEXT, tag, MPI_COMM_WORLD, req);
    case READY: return MPI_Rsend_init(buf, len, MPI_BYTE, NEXT, tag, MPI_COMM_WORLD, req);
    }
    return MPI_ERR_ARG;
}

/*
 * One persistent send to NEXT and one persistent receive from PREV, started `iterations`
 * times; the data change every iteration. Even iterations use MPI_Startall and
 * MPI_Waitall, odd ones MPI_Start and MPI_Wait in turn.
 */
static void loop(enum mode mode, int len, int iterations)
{
    unsigned char *sbuf = p2p_malloc((size_t)len), *rbuf = p2p_malloc((size_t)len + 1);
    void *attached = NULL;
    MPI_Request req[2]; /* receive, send */
    MPI_Status st[2];

    if (mode == BUFFERED) {
        /* Room for every message of the loop: our message may still sit in the buffer
         * when the next iteration starts (we know only that PREV's reached us). */
        int pack;
        MPI_OK(MPI_Pack_size(len, MPI_BYTE, MPI_COMM_WORLD, &pack));
        int size = iterations * (pack + MPI_BSEND_OVERHEAD);
        attached = p2p_malloc((size_t)size);
        MPI_OK(MPI_Buffer_attach(attached, size));
    }
    MPI_OK(MPI_Recv_init(rbuf, len + 1, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &req[0]));
    MPI_OK(make_send(mode, sbuf, len, TAG(0), &req[1]));
    for (int it = 0; it < iterations; it++) {
        char what[64];
        snprintf(what, sizeof(what), "iteration %d of %d bytes", it, len);
        p2p_fill(sbuf, (size_t)len, p2p_seed((uint32_t)p2p_rank, (uint32_t)it, (uint32_t)mode));
        rbuf[len] = 0xee;
        if (mode == READY) {
            /* A ready send needs the receive posted first: start ours, tell PREV, wait
             * for NEXT's word. */
            MPI_OK(MPI_Start(&req[0]));
            p2p_handshake(PREV, NEXT, TAG(1));
            MPI_OK(MPI_Start(&req[1]));
            MPI_OK(MPI_Waitall(2, req, st));
        } else if (it % 2 == 0) {
            MPI_OK(MPI_Startall(2, req));
            MPI_OK(MPI_Waitall(2, req, st));
        } else {
            MPI_OK(MPI_Start(&req[0]));
            MPI_OK(MPI_Start(&req[1]));
            MPI_OK(MPI_Wait(&req[1], &st[1]));
            MPI_OK(MPI_Wait(&req[0], &st[0]));
        }
        CHECK(req[0] != MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL,
              "%s: a persistent request was freed by its completion", what);
        p2p_check_status(&st[0], PREV, TAG(0), MPI_BYTE, len, what);
        p2p_check(rbuf, (size_t)len, p2p_seed((uint32_t)PREV, (uint32_t)it, (uint32_t)mode), what);
        p2p_check_untouched(rbuf + len, 1, 0xee, what);
    }
    MPI_OK(MPI_Request_free(&req[0]));
    MPI_OK(MPI_Request_free(&req[1]));
    CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL,
          "MPI_Request_free did not set the handles to MPI_REQUEST_NULL");
    if (mode == BUFFERED) {
        void *detached = NULL;
        int size = 0;
        MPI_OK(MPI_Buffer_detach(&detached, &size));
        CHECK(detached == attached, "MPI_Buffer_detach returned another buffer");
        free(attached);
    }
    free(sbuf);
    free(rbuf);
}

static void persistent_standard(void)
{
    loop(STANDARD, 64, 100);
    loop(STANDARD, 100003, 20);
}

static void persistent_synchronous(void)
{
    loop(SYNCHRONOUS, 8, 50);
    loop(SYNCHRONOUS, 70000, 10);
}

static void persistent_buffered(void)
{
    loop(BUFFERED, 1000, 50);
    loop(BUFFERED, 140001, 10);
}

static void persistent_ready(void)
{
    loop(READY, 33, 40);
    loop(READY, 65537, 10);
}

/*
 * Many persistent requests at once: 16 sends on 16 tags and the 16 receives, posted in
 * the reverse tag order, all started by one MPI_Startall, 40 times.
 */
static void persistent_startall_many(void)
{
    enum { N = 16, ITER = 20 };
    MPI_Request req[2 * N];
    MPI_Status st[2 * N];
    unsigned char *sbuf[N], *rbuf[N];

    /* Send k carries 100 + 9000 k bytes on tag k (eager and rendezvous); receive k takes
     * tag N-1-k. */
    for (int k = 0; k < N; k++) {
        int len = 100 + 9000 * k, rlen = 100 + 9000 * (N - 1 - k);
        sbuf[k] = p2p_malloc((size_t)len);
        rbuf[k] = p2p_malloc((size_t)rlen);
        MPI_OK(
            MPI_Recv_init(rbuf[k], rlen, MPI_BYTE, PREV, TAG(N - 1 - k), MPI_COMM_WORLD, &req[k]));
        MPI_OK(MPI_Send_init(sbuf[k], len, MPI_BYTE, NEXT, TAG(k), MPI_COMM_WORLD, &req[N + k]));
    }
    for (int it = 0; it < ITER; it++) {
        for (int k = 0; k < N; k++)
            p2p_fill(sbuf[k], (size_t)(100 + 9000 * k),
                     p2p_seed((uint32_t)p2p_rank, (uint32_t)it, (uint32_t)k));
        MPI_OK(MPI_Startall(2 * N, req));
        MPI_OK(MPI_Waitall(2 * N, req, st));
        for (int k = 0; k < N; k++) {
            int tag = N - 1 - k, len = 100 + 9000 * tag;
            char what[64];
            snprintf(what, sizeof(what), "iteration %d, tag %d", it, tag);
            p2p_check_status(&st[k], PREV, TAG(tag), MPI_BYTE, len, what);
            p2p_check(rbuf[k], (size_t)len, p2p_seed((uint32_t)PREV, (uint32_t)it, (uint32_t)tag),
                      what);
        }
    }
    for (int k = 0; k < 2 * N; k++)
        MPI_OK(MPI_Request_free(&req[k]));
    for (int k = 0; k < N; k++) {
        free(sbuf[k]);
        free(rbuf[k]);
    }
}

/*
 * Inactive persistent requests (MPI-3.1 section 3.7.3): MPI_Wait and MPI_Test return at
 * once with an empty status, MPI_Request_get_status says complete, the handle stays.
 */
static void persistent_inactive_complete_at_once(void)
{
    int data = 7, flag = 0;
    MPI_Request req[2];
    MPI_Status st;

    MPI_OK(MPI_Send_init(&data, 1, MPI_INT, NEXT, TAG(0), MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Recv_init(&data, 1, MPI_INT, PREV, TAG(0), MPI_COMM_WORLD, &req[1]));
    for (int i = 0; i < 2; i++) {
        const char *what = i ? "inactive receive" : "inactive send";
        MPI_OK(MPI_Wait(&req[i], &st));
        p2p_check_empty_status(&st, what);
        CHECK(req[i] != MPI_REQUEST_NULL, "%s: MPI_Wait freed it", what);
        flag = 0;
        MPI_OK(MPI_Test(&req[i], &flag, &st));
        CHECK(flag == 1, "%s: MPI_Test flag %d", what, flag);
        p2p_check_empty_status(&st, what);
        flag = 0;
        MPI_OK(MPI_Request_get_status(req[i], &flag, &st));
        CHECK(flag == 1, "%s: MPI_Request_get_status flag %d", what, flag);
        p2p_check_empty_status(&st, what);
    }
    MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    CHECK(req[0] != MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL, "MPI_Waitall freed them");
    MPI_OK(MPI_Request_free(&req[0]));
    MPI_OK(MPI_Request_free(&req[1]));
}

/*
 * MPI_Request_free of an inactive request, never started or already used: the handle
 * becomes null and nothing is sent. The next message on the tag is a plain one, and it
 * must be the first one received there.
 */
static void persistent_free_inactive(void)
{
    int never = 111, used = 0, plain = 333, got = -1;
    MPI_Request never_send, never_recv, send, recv;
    MPI_Status st;

    MPI_OK(MPI_Send_init(&never, 1, MPI_INT, NEXT, TAG(0), MPI_COMM_WORLD, &never_send));
    MPI_OK(MPI_Recv_init(&got, 1, MPI_INT, PREV, TAG(0), MPI_COMM_WORLD, &never_recv));
    MPI_OK(MPI_Request_free(&never_send));
    MPI_OK(MPI_Request_free(&never_recv));
    CHECK(never_send == MPI_REQUEST_NULL && never_recv == MPI_REQUEST_NULL,
          "handles not null after MPI_Request_free");

    /* Used three times on TAG(1), then freed while inactive. */
    MPI_OK(MPI_Send_init(&used, 1, MPI_INT, NEXT, TAG(1), MPI_COMM_WORLD, &send));
    MPI_OK(MPI_Recv_init(&got, 1, MPI_INT, PREV, TAG(1), MPI_COMM_WORLD, &recv));
    for (int i = 0; i < 3; i++) {
        MPI_Request both[2] = {recv, send};
        used = 200 + i;
        MPI_OK(MPI_Startall(2, both));
        MPI_OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
        CHECK(got == 200 + i, "use %d: got %d", i, got);
    }
    MPI_OK(MPI_Request_free(&send));
    MPI_OK(MPI_Request_free(&recv));
    CHECK(send == MPI_REQUEST_NULL && recv == MPI_REQUEST_NULL,
          "handles not null after MPI_Request_free");

    /* If the freed requests had sent or received anything, these would see it. */
    for (int tag = 0; tag < 2; tag++) {
        MPI_Request r;
        got = -1;
        MPI_OK(MPI_Irecv(&got, 1, MPI_INT, PREV, TAG(tag), MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Send(&plain, 1, MPI_INT, NEXT, TAG(tag), MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&r, &st));
        CHECK(got == plain, "tag %d: after the freed requests got %d, expected %d", tag, got,
              plain);
    }
}

/*
 * MPI_Request_free of an active persistent request completes normally: the receiver gets
 * the data (MPI-3.1 section 3.7.3 allows freeing an active send).
 */
static void persistent_free_active_send(void)
{
    int len = 80000;
    unsigned char *sbuf = p2p_malloc((size_t)len), *rbuf = p2p_malloc((size_t)len);
    MPI_Request send, recv;
    MPI_Status st;

    p2p_fill(sbuf, (size_t)len, p2p_seed((uint32_t)p2p_rank, 0, 9));
    MPI_OK(MPI_Irecv(rbuf, len, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &recv));
    MPI_OK(MPI_Send_init(sbuf, len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &send));
    MPI_OK(MPI_Start(&send));
    MPI_OK(MPI_Request_free(&send));
    CHECK(send == MPI_REQUEST_NULL, "handle not null after MPI_Request_free");
    MPI_OK(MPI_Wait(&recv, &st));
    p2p_check_status(&st, PREV, TAG(0), MPI_BYTE, len, "freed active send");
    p2p_check(rbuf, (size_t)len, p2p_seed((uint32_t)PREV, 0, 9), "freed active send");
    /* The send buffer may be reused only once we know the message arrived: NEXT says so. */
    p2p_handshake(PREV, NEXT, TAG(1));
    free(sbuf);
    free(rbuf);
}

/* A persistent MPI_ANY_SOURCE receive on rank 0, started once per sender each round. */
static void persistent_any_source(void)
{
    enum { ROUNDS = 20 };
    int out[2] = {0, 0}, in[2] = {-1, -1};
    MPI_Request send, recv;
    MPI_Status st;

    MPI_OK(MPI_Send_init(out, 2, MPI_INT, 0, TAG(0), MPI_COMM_WORLD, &send));
    if (p2p_rank == 0)
        MPI_OK(MPI_Recv_init(in, 2, MPI_INT, MPI_ANY_SOURCE, TAG(0), MPI_COMM_WORLD, &recv));
    for (int round = 0; round < ROUNDS; round++) {
        out[0] = p2p_rank;
        out[1] = round * 1000 + p2p_rank;
        MPI_OK(MPI_Start(&send));
        if (p2p_rank == 0) {
            unsigned seen = 0;
            for (int k = 0; k < p2p_size; k++) {
                MPI_OK(MPI_Start(&recv));
                MPI_OK(MPI_Wait(&recv, &st));
                int r = st.MPI_SOURCE;
                CHECK(r >= 0 && r < p2p_size && in[0] == r && in[1] == round * 1000 + r &&
                          !(seen & (1u << r)),
                      "round %d: from %d got (%d, %d)", round, r, in[0], in[1]);
                if (r >= 0 && r < p2p_size)
                    seen |= 1u << r;
            }
        }
        MPI_OK(MPI_Wait(&send, MPI_STATUS_IGNORE));
        /* Our send is done, but it may not have been received yet: rank 0 says when. */
        if (p2p_rank == 0) {
            for (int r = 1; r < p2p_size; r++)
                p2p_signal(r, TAG(1));
        } else {
            p2p_wait_signal(0, TAG(1));
        }
    }
    MPI_OK(MPI_Request_free(&send));
    if (p2p_rank == 0)
        MPI_OK(MPI_Request_free(&recv));
}

/* Persistent requests to and from MPI_PROC_NULL complete at once, every time. */
static void persistent_proc_null(void)
{
    int data[3] = {1, 2, 3}, rdata[3] = {-1, -1, -1};
    MPI_Request req[5];
    MPI_Status st[5];

    MPI_OK(MPI_Send_init(data, 3, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Ssend_init(data, 3, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Rsend_init(data, 3, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD, &req[2]));
    MPI_OK(MPI_Bsend_init(data, 3, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD, &req[3]));
    MPI_OK(MPI_Recv_init(rdata, 3, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD, &req[4]));
    for (int it = 0; it < 5; it++) {
        MPI_OK(MPI_Startall(5, req));
        MPI_OK(MPI_Waitall(5, req, st));
        p2p_check_proc_null_status(&st[4], "persistent receive from MPI_PROC_NULL");
    }
    CHECK(rdata[0] == -1 && rdata[1] == -1 && rdata[2] == -1,
          "receive from MPI_PROC_NULL wrote data");
    for (int i = 0; i < 5; i++)
        MPI_OK(MPI_Request_free(&req[i]));
}

/* One subtest a line, as test_p2p.py reads them. */
/* clang-format off */
static const p2p_test_t tests[] = {
    P2P_TEST(persistent_standard, 1),
    P2P_TEST(persistent_synchronous, 1),
    P2P_TEST(persistent_buffered, 1),
    P2P_TEST(persistent_ready, 1),
    P2P_TEST(persistent_startall_many, 1),
    P2P_TEST(persistent_inactive_complete_at_once, 1),
    P2P_TEST(persistent_free_inactive, 1),
    P2P_TEST(persistent_free_active_send, 1),
    P2P_TEST(persistent_any_source, 1),
    P2P_TEST(persistent_proc_null, 1),
};
/* clang-format on */

P2P_MAIN(tests)
