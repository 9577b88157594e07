/*
 * requests.c: many outstanding requests and every completion call (MPI-3.1 section 3.7):
 * 1000 MPI_Isend and 1000 MPI_Irecv per pair completed by MPI_Waitall, MPI_Waitany,
 * MPI_Waitsome, MPI_Testall, MPI_Testany and MPI_Testsome loops; MPI_Request_get_status;
 * null requests; MPI_Cancel (section 3.8.4) of unmatched and matched receives and of sends
 * of every mode.
 *
 * Every rank sends to NEXT and receives from PREV (itself with one rank).
 *   mpicc -O2 requests.c -o requests && mpirun -np 3 ./requests
 */
#include "p2p_common.h"

#define NREQ  1000
#define SMALL 64    /* bytes of most messages */
#define LARGE 70001 /* every 100th message: rendezvous over sm and tcp */

static size_t len_of(int i)
{
    return i % 100 == 99 ? LARGE : (size_t)(8 + i % (SMALL - 7));
}

/* Messages i of one batch: tag by i % 4, so that receives match across four queues. */
static int tag_of(int i)
{
    return TAG(i % 4);
}

typedef struct batch {
    unsigned char *sbuf[NREQ], *rbuf[NREQ];
    MPI_Request req[2 * NREQ]; /* receives [0, NREQ), sends [NREQ, 2 NREQ) */
    MPI_Status st[2 * NREQ];
    int done[2 * NREQ]; /* times each index was reported complete */
} batch_t;

/* Post NREQ receives from PREV and NREQ sends to NEXT, interleaved. */
static batch_t *batch_start(uint32_t salt)
{
    batch_t *b = p2p_malloc(sizeof(*b));
    memset(b->done, 0, sizeof(b->done));
    for (int i = 0; i < NREQ; i++) {
        b->rbuf[i] = p2p_malloc(len_of(i));
        b->sbuf[i] = p2p_malloc(len_of(i));
        p2p_fill(b->sbuf[i], len_of(i), p2p_seed((uint32_t)p2p_rank, (uint32_t)i, salt));
        MPI_OK(MPI_Irecv(b->rbuf[i], (int)len_of(i), MPI_BYTE, PREV, tag_of(i), MPI_COMM_WORLD,
                         &b->req[i]));
        MPI_OK(MPI_Isend(b->sbuf[i], (int)len_of(i), MPI_BYTE, NEXT, tag_of(i), MPI_COMM_WORLD,
                         &b->req[NREQ + i]));
    }
    return b;
}

/* Every request completed exactly once, every handle null, every message right. */
static void batch_check(batch_t *b, uint32_t salt, const char *how)
{
    int twice = 0, never = 0, live = 0;
    for (int i = 0; i < 2 * NREQ; i++) {
        twice += b->done[i] > 1;
        never += b->done[i] == 0;
        live += b->req[i] != MPI_REQUEST_NULL;
    }
    CHECK(twice == 0 && never == 0 && live == 0,
          "%s: %d requests reported twice, %d never, %d handles not null", how, twice, never, live);
    for (int i = 0; i < NREQ; i++) {
        char what[64];
        snprintf(what, sizeof(what), "%s, message %d", how, i);
        p2p_check_status(&b->st[i], PREV, tag_of(i), MPI_BYTE, (int)len_of(i), what);
        p2p_check(b->rbuf[i], len_of(i), p2p_seed((uint32_t)PREV, (uint32_t)i, salt), what);
        free(b->rbuf[i]);
        free(b->sbuf[i]);
    }
    free(b);
}

static void many_waitall(void)
{
    batch_t *b = batch_start(1);
    MPI_OK(MPI_Waitall(2 * NREQ, b->req, b->st));
    for (int i = 0; i < 2 * NREQ; i++)
        b->done[i] = 1;
    batch_check(b, 1, "MPI_Waitall");
}

static void many_waitany(void)
{
    batch_t *b = batch_start(2);
    int index = -1;
    MPI_Status st;
    for (int k = 0; k < 2 * NREQ; k++) {
        MPI_OK(MPI_Waitany(2 * NREQ, b->req, &index, &st));
        if (index < 0 || index >= 2 * NREQ) {
            p2p_fail("MPI_Waitany returned index %d with requests left", index);
            break;
        }
        b->done[index]++;
        b->st[index] = st;
    }
    /* All null now: MPI_UNDEFINED and an empty status. */
    MPI_OK(MPI_Waitany(2 * NREQ, b->req, &index, &st));
    CHECK(index == MPI_UNDEFINED, "MPI_Waitany on null requests: index %d", index);
    p2p_check_empty_status(&st, "MPI_Waitany on null requests");
    batch_check(b, 2, "MPI_Waitany");
}

static void many_waitsome(void)
{
    batch_t *b = batch_start(3);
    int *indices = p2p_malloc(sizeof(int) * 2 * NREQ), outcount = 0, left = 2 * NREQ, calls = 0;
    MPI_Status *st = p2p_malloc(sizeof(MPI_Status) * 2 * NREQ);
    while (left > 0) {
        MPI_OK(MPI_Waitsome(2 * NREQ, b->req, &outcount, indices, st));
        calls++;
        if (outcount < 1 || outcount > left) {
            p2p_fail("MPI_Waitsome: outcount %d with %d requests left", outcount, left);
            break;
        }
        for (int k = 0; k < outcount; k++) {
            b->done[indices[k]]++;
            b->st[indices[k]] = st[k];
        }
        left -= outcount;
    }
    MPI_OK(MPI_Waitsome(2 * NREQ, b->req, &outcount, indices, st));
    CHECK(outcount == MPI_UNDEFINED, "MPI_Waitsome on null requests: outcount %d", outcount);
    free(indices);
    free(st);
    batch_check(b, 3, "MPI_Waitsome");
}

static void many_testall(void)
{
    batch_t *b = batch_start(4);
    int flag = 0;
    while (!flag) {
        MPI_OK(MPI_Testall(2 * NREQ, b->req, &flag, b->st));
        /* While not all are complete, none may be freed (MPI-3.1 section 3.7.5). */
        int freed = 0;
        for (int i = 0; i < 2 * NREQ && !flag; i++)
            freed += b->req[i] == MPI_REQUEST_NULL;
        if (freed) {
            p2p_fail("MPI_Testall freed %d requests while returning flag 0", freed);
            break;
        }
    }
    for (int i = 0; i < 2 * NREQ; i++)
        b->done[i] = 1;
    batch_check(b, 4, "MPI_Testall");
}

static void many_testany(void)
{
    batch_t *b = batch_start(5);
    int index, flag, left = 2 * NREQ;
    MPI_Status st;
    while (left > 0) {
        MPI_OK(MPI_Testany(2 * NREQ, b->req, &index, &flag, &st));
        if (!flag)
            continue;
        if (index < 0 || index >= 2 * NREQ) {
            p2p_fail("MPI_Testany: flag 1, index %d, %d requests left", index, left);
            break;
        }
        b->done[index]++;
        b->st[index] = st;
        left--;
    }
    flag = 0;
    MPI_OK(MPI_Testany(2 * NREQ, b->req, &index, &flag, &st));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "MPI_Testany on null requests: flag %d index %d",
          flag, index);
    p2p_check_empty_status(&st, "MPI_Testany on null requests");
    batch_check(b, 5, "MPI_Testany");
}

static void many_testsome(void)
{
    batch_t *b = batch_start(6);
    int *indices = p2p_malloc(sizeof(int) * 2 * NREQ), outcount, left = 2 * NREQ;
    MPI_Status *st = p2p_malloc(sizeof(MPI_Status) * 2 * NREQ);
    while (left > 0) {
        MPI_OK(MPI_Testsome(2 * NREQ, b->req, &outcount, indices, st));
        if (outcount < 0 || outcount > left) {
            p2p_fail("MPI_Testsome: outcount %d with %d requests left", outcount, left);
            break;
        }
        for (int k = 0; k < outcount; k++) {
            b->done[indices[k]]++;
            b->st[indices[k]] = st[k];
        }
        left -= outcount;
    }
    MPI_OK(MPI_Testsome(2 * NREQ, b->req, &outcount, indices, st));
    CHECK(outcount == MPI_UNDEFINED, "MPI_Testsome on null requests: outcount %d", outcount);
    free(indices);
    free(st);
    batch_check(b, 6, "MPI_Testsome");
}

/* The completion calls mixed in one batch: Waitany, then Testsome, then Waitall. */
static void many_mixed_with_nulls(void)
{
    batch_t *b = batch_start(7);
    int index, outcount, *indices = p2p_malloc(sizeof(int) * 2 * NREQ);
    MPI_Status st, *sts = p2p_malloc(sizeof(MPI_Status) * 2 * NREQ);
    for (int k = 0; k < 300; k++) {
        MPI_OK(MPI_Waitany(2 * NREQ, b->req, &index, &st));
        if (index >= 0 && index < 2 * NREQ) {
            b->done[index]++;
            b->st[index] = st;
        }
    }
    MPI_OK(MPI_Testsome(2 * NREQ, b->req, &outcount, indices, sts));
    for (int k = 0; k < outcount && outcount != MPI_UNDEFINED; k++) {
        b->done[indices[k]]++;
        b->st[indices[k]] = sts[k];
    }
    /* Waitall over a mix of null and live requests: statuses of the live ones. */
    MPI_OK(MPI_Waitall(2 * NREQ, b->req, sts));
    for (int i = 0; i < 2 * NREQ; i++) {
        if (!b->done[i]) {
            b->done[i] = 1;
            b->st[i] = sts[i];
        }
    }
    free(indices);
    free(sts);
    batch_check(b, 7, "Waitany + Testsome + Waitall");
}

/* Null requests: every call returns at once; statuses are empty. */
static void null_requests(void)
{
    MPI_Request req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st, sts[3];
    int flag = 0, index = 0, outcount = 0, indices[3];

    MPI_OK(MPI_Wait(&req[0], &st));
    p2p_check_empty_status(&st, "MPI_Wait on MPI_REQUEST_NULL");
    MPI_OK(MPI_Test(&req[0], &flag, &st));
    CHECK(flag == 1, "MPI_Test on MPI_REQUEST_NULL: flag %d", flag);
    p2p_check_empty_status(&st, "MPI_Test on MPI_REQUEST_NULL");
    flag = 0;
    MPI_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    CHECK(flag == 1, "MPI_Request_get_status on MPI_REQUEST_NULL: flag %d", flag);
    p2p_check_empty_status(&st, "MPI_Request_get_status on MPI_REQUEST_NULL");
    MPI_OK(MPI_Waitall(3, req, sts));
    for (int i = 0; i < 3; i++)
        p2p_check_empty_status(&sts[i], "MPI_Waitall on MPI_REQUEST_NULL");
    MPI_OK(MPI_Waitany(3, req, &index, &st));
    CHECK(index == MPI_UNDEFINED, "MPI_Waitany: index %d", index);
    MPI_OK(MPI_Waitsome(3, req, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "MPI_Waitsome: outcount %d", outcount);
    flag = 0;
    MPI_OK(MPI_Testall(3, req, &flag, sts));
    CHECK(flag == 1, "MPI_Testall: flag %d", flag);
    MPI_OK(MPI_Testsome(3, req, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "MPI_Testsome: outcount %d", outcount);
    /* A zero-length array. */
    MPI_OK(MPI_Waitall(0, req, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Testany(0, req, &index, &flag, &st));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "MPI_Testany of 0: flag %d index %d", flag, index);
}

/*
 * MPI_Request_get_status reports completion without freeing; MPI_Test then frees. The
 * sender holds its message until the receiver has seen "not complete" many times.
 */
static void request_get_status(void)
{
    int in = -1, out = 4242 + p2p_rank, flag = 1;
    MPI_Request rreq, sreq;
    MPI_Status st;

    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, PREV, TAG(0), MPI_COMM_WORLD, &rreq));
    for (int k = 0; k < 100; k++) {
        MPI_OK(MPI_Request_get_status(rreq, &flag, &st));
        if (flag)
            break;
    }
    CHECK(flag == 0, "MPI_Request_get_status: receive complete before anything was sent");
    p2p_handshake(PREV, NEXT, TAG(1)); /* tell PREV to send; NEXT tells us */
    MPI_OK(MPI_Isend(&out, 1, MPI_INT, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
    flag = 0;
    while (!flag)
        MPI_OK(MPI_Request_get_status(rreq, &flag, &st));
    CHECK(rreq != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    p2p_check_status(&st, PREV, TAG(0), MPI_INT, 1, "MPI_Request_get_status");
    CHECK(in == 4242 + PREV, "received %d", in);
    flag = 0;
    MPI_OK(MPI_Test(&rreq, &flag, &st));
    CHECK(flag == 1 && rreq == MPI_REQUEST_NULL, "MPI_Test after completion: flag %d", flag);
    p2p_check_status(&st, PREV, TAG(0), MPI_INT, 1, "MPI_Test after MPI_Request_get_status");
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
}

/*
 * A receive nobody sends to is cancelled: MPI_Wait returns, MPI_Test_cancelled says so, the
 * buffer is untouched, and the cancelled receive does not take a later message on its tag.
 * The later message is sent only once its receiver has cancelled (a handshake on a tag no
 * cancelled receive can match).
 */
static void cancel_unmatched_receive(void)
{
    /* MPI_ANY_TAG only from oneself: nobody else can send us a message then. */
    struct {
        int source, tag;
    } kinds[] = {{PREV, TAG(0)}, {MPI_ANY_SOURCE, TAG(1)}, {p2p_rank, MPI_ANY_TAG}};

    for (int k = 0; k < 3; k++) {
        unsigned char buf[100];
        int flag = 0, got = -1, cancelled = -1;
        MPI_Request req;
        MPI_Status st;
        memset(buf, 0x5a, sizeof(buf));
        MPI_OK(MPI_Irecv(buf, sizeof(buf), MPI_BYTE, kinds[k].source, kinds[k].tag, MPI_COMM_WORLD,
                         &req));
        MPI_OK(MPI_Cancel(&req));
        MPI_OK(MPI_Wait(&req, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled == 1, "receive %d (source %d, tag %d): not cancelled", k, kinds[k].source,
              kinds[k].tag);
        CHECK(req == MPI_REQUEST_NULL, "receive %d: handle not null after MPI_Wait", k);
        p2p_check_untouched(buf, sizeof(buf), 0x5a, "cancelled receive");
        p2p_handshake(PREV, NEXT, TAG(5));
        int tag = kinds[k].tag == MPI_ANY_TAG ? TAG(2) : kinds[k].tag, out = 77 + k;
        MPI_Request r;
        MPI_OK(MPI_Irecv(&got, 1, MPI_INT, PREV, tag, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Send(&out, 1, MPI_INT, NEXT, tag, MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&r, &st));
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(got == 77 + k && flag == 0,
              "message after cancelled receive %d: got %d (cancelled %d)", k, got, flag);
    }
}

/* A receive that already completed cannot be cancelled: its data and status stand. */
static void cancel_completed_receive(void)
{
    int len = 70000;
    unsigned char *sbuf = p2p_malloc((size_t)len), *rbuf = p2p_malloc((size_t)len);
    MPI_Request rreq, sreq;
    MPI_Status st;
    int flag = 0, cancelled = -1;

    p2p_fill(sbuf, (size_t)len, p2p_seed((uint32_t)p2p_rank, 0, 30));
    MPI_OK(MPI_Irecv(rbuf, len, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &rreq));
    MPI_OK(MPI_Isend(sbuf, len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
    while (!flag)
        MPI_OK(MPI_Request_get_status(rreq, &flag, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Cancel(&rreq));
    MPI_OK(MPI_Wait(&rreq, &st));
    MPI_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled == 0, "a completed receive was cancelled");
    p2p_check_status(&st, PREV, TAG(0), MPI_BYTE, len, "completed receive");
    p2p_check(rbuf, (size_t)len, p2p_seed((uint32_t)PREV, 0, 30), "completed receive");
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    free(sbuf);
    free(rbuf);
}

/*
 * Cancel racing the message (MPI-3.1 section 3.8.4: either the cancel succeeds and the
 * message is still there for another receive, or the receive completes normally; never
 * both, never neither). Small and large messages, many times.
 */
static void cancel_racing_receive(void)
{
    static const int lens[] = {16, 70000};
    int cancelled_count = 0, completed_count = 0;
    for (int it = 0; it < 40; it++) {
        int len = lens[it % 2];
        unsigned char *sbuf = p2p_malloc((size_t)len), *rbuf = p2p_malloc((size_t)len);
        uint32_t seed_in = p2p_seed((uint32_t)PREV, (uint32_t)it, 31);
        MPI_Request rreq, sreq;
        MPI_Status st;
        int cancelled = -1;
        char what[64];

        snprintf(what, sizeof(what), "iteration %d (%d bytes)", it, len);
        p2p_fill(sbuf, (size_t)len, p2p_seed((uint32_t)p2p_rank, (uint32_t)it, 31));
        memset(rbuf, 0x5a, (size_t)len);
        MPI_OK(MPI_Irecv(rbuf, len, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &rreq));
        MPI_OK(MPI_Isend(sbuf, len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
        if (it % 4 >= 2)
            p2p_sleep_ms(1);
        MPI_OK(MPI_Cancel(&rreq));
        MPI_OK(MPI_Wait(&rreq, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        if (cancelled) {
            cancelled_count++;
            p2p_check_untouched(rbuf, (size_t)len, 0x5a, what);
            MPI_OK(MPI_Recv(rbuf, len, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &st));
        } else {
            completed_count++;
        }
        p2p_check_status(&st, PREV, TAG(0), MPI_BYTE, len, what);
        p2p_check(rbuf, (size_t)len, seed_in, what);
        MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        free(sbuf);
        free(rbuf);
    }
    CHECK(cancelled_count + completed_count == 40, "%d cancelled + %d completed", cancelled_count,
          completed_count);
}

/*
 * Cancel of a send may succeed or not (MPI-3.1 section 3.8.4); either way the receiver must
 * agree. Its receive is posted first (so that nothing waits on anything else); the sender
 * cancels, waits, says whether the cancel took, then sends a marker on the same tag. If it
 * took, the posted receive gets the marker; if not, the data, and the marker comes next.
 */
static void cancel_send_consistent(void)
{
    static const int lens[] = {16, 100000};
    for (int it = 0; it < 4; it++) {
        int len = lens[it % 2], cancelled = -1, peer_cancelled = -1, mark_out = 1000 + it;
        unsigned char *sbuf = p2p_malloc((size_t)len), *rbuf = p2p_malloc((size_t)len);
        MPI_Request sreq, rreq, info_req, info_rreq, mreq;
        MPI_Status st;

        p2p_fill(sbuf, (size_t)len, p2p_seed((uint32_t)p2p_rank, (uint32_t)it, 32));
        MPI_OK(MPI_Irecv(rbuf, len, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &rreq));
        MPI_OK(MPI_Irecv(&peer_cancelled, 1, MPI_INT, PREV, TAG(1), MPI_COMM_WORLD, &info_rreq));
        MPI_OK(MPI_Isend(sbuf, len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
        MPI_OK(MPI_Cancel(&sreq));
        MPI_OK(MPI_Wait(&sreq, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        MPI_OK(MPI_Isend(&cancelled, 1, MPI_INT, NEXT, TAG(1), MPI_COMM_WORLD, &info_req));
        MPI_OK(MPI_Isend(&mark_out, 1, MPI_INT, NEXT, TAG(0), MPI_COMM_WORLD, &mreq));
        MPI_OK(MPI_Wait(&info_rreq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&rreq, &st));
        if (!peer_cancelled) {
            p2p_check_status(&st, PREV, TAG(0), MPI_BYTE, len, "send that was not cancelled");
            p2p_check(rbuf, (size_t)len, p2p_seed((uint32_t)PREV, (uint32_t)it, 32),
                      "send that was not cancelled");
            MPI_OK(MPI_Recv(rbuf, len, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &st));
        }
        int marker = -99;
        memcpy(&marker, rbuf, sizeof(int));
        CHECK(p2p_count(&st, MPI_BYTE) == (int)sizeof(int) && marker == 1000 + it,
              "iteration %d: expected the marker (the peer's send was %s), got %d bytes", it,
              peer_cancelled ? "cancelled" : "not cancelled", p2p_count(&st, MPI_BYTE));
        MPI_OK(MPI_Wait(&info_req, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&mreq, MPI_STATUS_IGNORE));
        free(sbuf);
        free(rbuf);
    }
}

/*
 * A send no receive has matched is cancelled, whatever its mode and protocol: MPI_Wait
 * returns although its receiver posts nothing (MPI-3.1 section 3.8.4: waiting for a
 * cancelled communication is local), and MPI_Test_cancelled says so (the standard would
 * also allow a normal completion, but that needs a receive; crmpi takes back any message
 * its receiver holds unmatched, buffered ones too). The receiver then gets the next
 * message on that tag, not this one.
 */
static void cancel_unmatched_send(void)
{
    static const char *const modes[] = {"MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Bsend_init"};
    int attached_size = 2 * (100000 + MPI_BSEND_OVERHEAD), detached_size;
    void *attached = p2p_malloc((size_t)attached_size), *detached;

    MPI_OK(MPI_Buffer_attach(attached, attached_size));
    for (int k = 0; k < 8; k++) {
        int len = k % 2 ? 100000 : 16, mode = k / 2, cancelled = -1, out = 500 + k;
        unsigned char *sbuf = p2p_malloc((size_t)len), *rbuf = p2p_malloc(100000);
        MPI_Request sreq, rreq;
        MPI_Status st;

        p2p_fill(sbuf, (size_t)len, p2p_seed((uint32_t)p2p_rank, (uint32_t)k, 33));
        if (mode == 0)
            MPI_OK(MPI_Isend(sbuf, len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
        else if (mode == 1)
            MPI_OK(MPI_Issend(sbuf, len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
        else if (mode == 2)
            MPI_OK(MPI_Ibsend(sbuf, len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
        else
            MPI_OK(MPI_Bsend_init(sbuf, len, MPI_BYTE, NEXT, TAG(0), MPI_COMM_WORLD, &sreq));
        if (mode == 3)
            MPI_OK(MPI_Start(&sreq));
        MPI_OK(MPI_Cancel(&sreq));
        MPI_OK(MPI_Wait(&sreq, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled == 1, "%s of %d bytes to rank %d, unmatched: not cancelled", modes[mode],
              len, NEXT);
        if (mode == 3)
            MPI_OK(MPI_Request_free(&sreq));
        /* Every rank has cancelled before any receive on TAG(0) is posted. */
        p2p_handshake(NEXT, PREV, TAG(5));
        MPI_OK(MPI_Irecv(rbuf, 100000, MPI_BYTE, PREV, TAG(0), MPI_COMM_WORLD, &rreq));
        MPI_OK(MPI_Send(&out, 1, MPI_INT, NEXT, TAG(0), MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&rreq, &st));
        int marker = -99;
        memcpy(&marker, rbuf, sizeof(int));
        CHECK(p2p_count(&st, MPI_BYTE) == (int)sizeof(int) && marker == 500 + k,
              "after a cancelled %s of %d bytes: got %d bytes (%d), not the next message",
              modes[mode], len, p2p_count(&st, MPI_BYTE), marker);
        free(sbuf);
        free(rbuf);
    }
    /* Detach waits for buffered messages: a cancelled one must not keep its block. */
    MPI_OK(MPI_Buffer_detach(&detached, &detached_size));
    free(attached);
}

/* One subtest a line, as test_p2p.py reads them. */
/* clang-format off */
static const p2p_test_t tests[] = {
    P2P_TEST(many_waitall, 1),
    P2P_TEST(many_waitany, 1),
    P2P_TEST(many_waitsome, 1),
    P2P_TEST(many_testall, 1),
    P2P_TEST(many_testany, 1),
    P2P_TEST(many_testsome, 1),
    P2P_TEST(many_mixed_with_nulls, 1),
    P2P_TEST(null_requests, 1),
    P2P_TEST(request_get_status, 1),
    P2P_TEST(cancel_unmatched_receive, 1),
    P2P_TEST(cancel_completed_receive, 1),
    P2P_TEST(cancel_racing_receive, 1),
    P2P_TEST(cancel_send_consistent, 1),
    P2P_TEST(cancel_unmatched_send, 1),
};
/* clang-format on */

P2P_MAIN(tests)
