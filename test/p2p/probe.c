/*
 * probe.c: MPI_Probe and MPI_Iprobe (MPI-3.1 section 3.8.1), matched probes MPI_Mprobe,
 * MPI_Improbe, MPI_Mrecv and MPI_Imrecv (section 3.8.2-3.8.3), MPI_Get_count with
 * MPI_UNDEFINED, and MPI_PROC_NULL in every call that takes a rank (section 3.11).
 *
 * Rank 0 probes; "the sender" is rank 1 (rank 0 itself with one rank), which sends with
 * MPI_Isend so that a rank can probe its own messages.
 *   mpicc -O2 probe.c -o probe && mpirun -np 2 ./probe
 */
#include "p2p_common.h"

#define SENDER (p2p_size > 1 ? 1 : 0)

/* The sender's non-blocking sends of one subtest; sizes in bytes, pattern per index. */
typedef struct sends {
    int n;
    unsigned char *buf[16];
    MPI_Request req[16];
} sends_t;

static void send_msg(sends_t *s, int dest, size_t len, int tag, int index)
{
    s->buf[s->n] = p2p_malloc(len);
    p2p_fill(s->buf[s->n], len, p2p_seed((uint32_t)p2p_rank, (uint32_t)index, 3));
    MPI_OK(MPI_Isend(s->buf[s->n], (int)len, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &s->req[s->n]));
    s->n++;
}

static void finish_sends(sends_t *s)
{
    MPI_OK(MPI_Waitall(s->n, s->req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < s->n; i++)
        free(s->buf[i]);
    s->n = 0;
}

/* Receive a message described by `st` (from a probe) with a buffer of exactly its size. */
static void recv_probed(const MPI_Status *st, size_t len, int index)
{
    unsigned char *buf = p2p_malloc(len);
    MPI_Status rst;
    char what[64];
    snprintf(what, sizeof(what), "message %d (%zu bytes)", index, len);
    MPI_OK(MPI_Recv(buf, (int)len, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD, &rst));
    p2p_check_status(&rst, st->MPI_SOURCE, st->MPI_TAG, MPI_BYTE, (int)len, what);
    p2p_check(buf, len, p2p_seed((uint32_t)st->MPI_SOURCE, (uint32_t)index, 3), what);
    free(buf);
}

/* Probe each message of a range of sizes, eager and rendezvous, and receive it with the
 * count the probe gave, as MPI_INT and as MPI_BYTE. */
static void probe_gives_count(void)
{
    static const size_t ints[] = {0, 1, 1024, 16385, 262147};
    const int n = (int)(sizeof(ints) / sizeof(ints[0]));
    sends_t s = {0};

    if (p2p_rank == SENDER) {
        for (int i = 0; i < n; i++)
            send_msg(&s, 0, ints[i] * sizeof(int), TAG(i), i);
    }
    if (p2p_rank == 0) {
        for (int i = n - 1; i >= 0; i--) { /* in reverse: probes by tag skip earlier ones */
            MPI_Status st;
            int count_int, count_byte, elements;
            MPI_OK(MPI_Probe(SENDER, TAG(i), MPI_COMM_WORLD, &st));
            count_int = p2p_count(&st, MPI_INT);
            count_byte = p2p_count(&st, MPI_BYTE);
            MPI_OK(MPI_Get_elements(&st, MPI_INT, &elements));
            CHECK(st.MPI_SOURCE == SENDER && st.MPI_TAG == TAG(i), "probe %d: source %d tag %d", i,
                  st.MPI_SOURCE, st.MPI_TAG);
            CHECK(count_int == (int)ints[i] && elements == (int)ints[i] &&
                      count_byte == (int)(ints[i] * sizeof(int)),
                  "probe of %zu ints: count %d ints, %d elements, %d bytes", ints[i], count_int,
                  elements, count_byte);
            recv_probed(&st, ints[i] * sizeof(int), i);
        }
    }
    finish_sends(&s);
}

/* Every rank sends one message of its own size and tag; rank 0 probes with both wildcards
 * and receives what each probe announced. */
static void probe_any_source_any_tag(void)
{
    sends_t s = {0};
    send_msg(&s, 0, (size_t)(100 + 40000 * p2p_rank), TAG(p2p_rank), p2p_rank);
    if (p2p_rank == 0) {
        int *seen = calloc((size_t)p2p_size, sizeof(int));
        for (int k = 0; k < p2p_size; k++) {
            MPI_Status st;
            MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int r = st.MPI_SOURCE;
            if (r < 0 || r >= p2p_size || st.MPI_TAG != TAG(r) || seen[r]) {
                p2p_fail("probe %d: source %d tag %d (seen before: %d)", k, r, st.MPI_TAG,
                         r >= 0 && r < p2p_size ? seen[r] : -1);
                break;
            }
            seen[r] = 1;
            CHECK(p2p_count(&st, MPI_BYTE) == 100 + 40000 * r, "rank %d: probe count %d", r,
                  p2p_count(&st, MPI_BYTE));
            recv_probed(&st, (size_t)(100 + 40000 * r), r);
        }
        free(seen);
    }
    finish_sends(&s);
}

/* MPI_Iprobe says no until the message is sent, then yes; a probe does not receive. */
static void iprobe_before_and_after(void)
{
    sends_t s = {0};
    if (p2p_rank == 0) {
        int flag = -1;
        MPI_Status st;
        /* The sender waits for our signal: nothing can be there yet. */
        for (int i = 0; i < 50; i++) {
            MPI_OK(MPI_Iprobe(SENDER, TAG(0), MPI_COMM_WORLD, &flag, &st));
            CHECK(flag == 0, "MPI_Iprobe found a message before it was sent (try %d)", i);
            MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
            CHECK(flag == 0, "MPI_Iprobe(ANY, ANY) found a message nobody sent (try %d)", i);
        }
        if (SENDER == 0)
            send_msg(&s, 0, 70001, TAG(0), 0);
        else
            p2p_signal(SENDER, TAG(1));
        int polls = 0;
        do {
            MPI_OK(MPI_Iprobe(SENDER, TAG(0), MPI_COMM_WORLD, &flag, &st));
            polls++;
        } while (!flag);
        p2p_check_status(&st, SENDER, TAG(0), MPI_BYTE, 70001, "iprobe");
        /* Not consumed: probed again, then received. */
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG(0), MPI_COMM_WORLD, &flag, &st));
        CHECK(flag == 1, "second MPI_Iprobe does not see the message");
        recv_probed(&st, 70001, 0);
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag == 0, "MPI_Iprobe still finds a message after it was received");
    } else if (p2p_rank == SENDER) {
        p2p_wait_signal(0, TAG(1));
        send_msg(&s, 0, 70001, TAG(0), 0);
    }
    finish_sends(&s);
}

/* Probes see the first of two messages on one tag, as often as asked, until it is received;
 * then the second. */
static void probe_does_not_receive(void)
{
    sends_t s = {0};
    if (p2p_rank == SENDER) {
        send_msg(&s, 0, 100, TAG(0), 0);
        send_msg(&s, 0, 200000, TAG(0), 1);
    }
    if (p2p_rank == 0) {
        for (int m = 0; m < 2; m++) {
            size_t len = m ? 200000 : 100;
            MPI_Status st;
            int flag = 0;
            for (int k = 0; k < 3; k++) {
                MPI_OK(MPI_Probe(SENDER, TAG(0), MPI_COMM_WORLD, &st));
                CHECK(p2p_count(&st, MPI_BYTE) == (int)len, "message %d: probe %d says %d bytes", m,
                      k, p2p_count(&st, MPI_BYTE));
            }
            while (!flag)
                MPI_OK(MPI_Iprobe(SENDER, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
            CHECK(p2p_count(&st, MPI_BYTE) == (int)len, "message %d: MPI_Iprobe says %d bytes", m,
                  p2p_count(&st, MPI_BYTE));
            recv_probed(&st, len, m);
        }
    }
    finish_sends(&s);
}

/* A 7-byte message is not a whole number of ints or shorts: MPI_Get_count on the probe's
 * status says MPI_UNDEFINED for them (datatype.c does it on a receive's status). */
static void get_count_undefined(void)
{
    sends_t s = {0};
    if (p2p_rank == SENDER)
        send_msg(&s, 0, 7, TAG(0), 0);
    if (p2p_rank == 0) {
        MPI_Status st;
        unsigned char buf[8];
        MPI_OK(MPI_Probe(SENDER, TAG(0), MPI_COMM_WORLD, &st));
        CHECK(p2p_count(&st, MPI_INT) == MPI_UNDEFINED, "probe: MPI_INT count %d",
              p2p_count(&st, MPI_INT));
        CHECK(p2p_count(&st, MPI_SHORT) == MPI_UNDEFINED, "probe: MPI_SHORT count %d",
              p2p_count(&st, MPI_SHORT));
        CHECK(p2p_count(&st, MPI_CHAR) == 7, "probe: MPI_CHAR count %d", p2p_count(&st, MPI_CHAR));
        memset(buf, 0xee, sizeof(buf));
        MPI_OK(MPI_Recv(buf, 8, MPI_BYTE, SENDER, TAG(0), MPI_COMM_WORLD, &st));
        CHECK(p2p_count(&st, MPI_BYTE) == 7, "recv: MPI_BYTE count %d", p2p_count(&st, MPI_BYTE));
        p2p_check(buf, 7, p2p_seed((uint32_t)SENDER, 0, 3), "7 bytes");
        p2p_check_untouched(buf + 7, 1, 0xee, "byte after the message");
    }
    finish_sends(&s);
}

/* Receive a matched message and check it; `message` must be null afterwards. */
static void mrecv_check(MPI_Message *message, size_t len, int tag, int index, int nonblocking)
{
    unsigned char *buf = p2p_malloc(len + 1);
    MPI_Status st;
    char what[64];

    snprintf(what, sizeof(what), "matched message %d (%zu bytes)", index, len);
    buf[len] = 0xee;
    if (nonblocking) {
        MPI_Request req;
        MPI_OK(MPI_Imrecv(buf, (int)len + 1, MPI_BYTE, message, &req));
        CHECK(*message == MPI_MESSAGE_NULL, "%s: handle not null after MPI_Imrecv", what);
        MPI_OK(MPI_Wait(&req, &st));
    } else {
        MPI_OK(MPI_Mrecv(buf, (int)len + 1, MPI_BYTE, message, &st));
        CHECK(*message == MPI_MESSAGE_NULL, "%s: handle not null after MPI_Mrecv", what);
    }
    p2p_check_status(&st, SENDER, tag, MPI_BYTE, (int)len, what);
    p2p_check(buf, len, p2p_seed((uint32_t)SENDER, (uint32_t)index, 3), what);
    p2p_check_untouched(buf + len, 1, 0xee, what);
    free(buf);
}

/* Two messages on one tag, matched in order by MPI_Mprobe and MPI_Improbe, received in
 * the reverse order with MPI_Mrecv and MPI_Imrecv. */
static void mprobe_then_mrecv(void)
{
    sends_t s = {0};
    for (int large = 0; large < 2; large++) {
        size_t len0 = large ? 150000 : 1000, len1 = large ? 9 : 80000;
        if (p2p_rank == SENDER) {
            send_msg(&s, 0, len0, TAG(large), 2 * large);
            send_msg(&s, 0, len1, TAG(large), 2 * large + 1);
        }
        if (p2p_rank == 0) {
            MPI_Message m0 = MPI_MESSAGE_NULL, m1 = MPI_MESSAGE_NULL;
            MPI_Status st;
            int flag = 0;
            MPI_OK(MPI_Mprobe(SENDER, TAG(large), MPI_COMM_WORLD, &m0, &st));
            CHECK(m0 != MPI_MESSAGE_NULL && m0 != MPI_MESSAGE_NO_PROC, "MPI_Mprobe: no message");
            p2p_check_status(&st, SENDER, TAG(large), MPI_BYTE, (int)len0, "mprobe");
            while (!flag)
                MPI_OK(MPI_Improbe(SENDER, TAG(large), MPI_COMM_WORLD, &flag, &m1, &st));
            p2p_check_status(&st, SENDER, TAG(large), MPI_BYTE, (int)len1, "improbe");
            mrecv_check(&m1, len1, TAG(large), 2 * large + 1, large);
            mrecv_check(&m0, len0, TAG(large), 2 * large, !large);
        }
        finish_sends(&s);
    }
}

/*
 * A matched message belongs to its MPI_Message: a later receive or probe, even with both
 * wildcards, does not see it. Message A is matched, then B (same tag) must be what a
 * wildcard receive gets; a probe after that finds nothing; A is then received whole.
 */
static void mprobe_not_stolen(void)
{
    for (int large = 0; large < 2; large++) {
        sends_t s = {0};
        size_t len_a = large ? 300001 : 64, len_b = large ? 17 : 70000;
        /* The sender starts each round when told: the probe for "nothing left" below must
         * not see the next round's messages. */
        if (p2p_rank == 0 && SENDER != 0)
            p2p_signal(SENDER, TAG(1));
        if (p2p_rank == SENDER) {
            if (SENDER != 0)
                p2p_wait_signal(0, TAG(1));
            send_msg(&s, 0, len_a, TAG(large), 10 * large);
            send_msg(&s, 0, len_b, TAG(large), 10 * large + 1);
        }
        if (p2p_rank == 0) {
            MPI_Message a = MPI_MESSAGE_NULL;
            MPI_Status st;
            unsigned char *buf = p2p_malloc(400000);
            int flag = 0;
            if (large) {
                do {
                    MPI_OK(MPI_Improbe(SENDER, TAG(large), MPI_COMM_WORLD, &flag, &a, &st));
                } while (!flag);
            } else {
                MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &a, &st));
            }
            p2p_check_status(&st, SENDER, TAG(large), MPI_BYTE, (int)len_a, "matched A");
            MPI_OK(
                MPI_Recv(buf, 400000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            p2p_check_status(&st, SENDER, TAG(large), MPI_BYTE, (int)len_b,
                             "wildcard receive after the matched probe (must be B)");
            if (p2p_count(&st, MPI_BYTE) == (int)len_b)
                p2p_check(buf, len_b, p2p_seed((uint32_t)SENDER, (uint32_t)(10 * large + 1), 3),
                          "B");
            /* This iteration's tag only: the sender may already have sent the next
             * iteration's messages, which a probe may rightly see. */
            MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG(large), MPI_COMM_WORLD, &flag, &st));
            CHECK(flag == 0, "MPI_Iprobe finds a message: the matched one was not removed");
            mrecv_check(&a, len_a, TAG(large), 10 * large, large);
            free(buf);
        }
        finish_sends(&s);
    }
}

/* MPI_Improbe says no before the message is sent, and never hands out a message twice. */
static void improbe_flag(void)
{
    sends_t s = {0};
    if (p2p_rank == 0) {
        MPI_Message m = MPI_MESSAGE_NULL;
        MPI_Status st;
        int flag = -1;
        MPI_OK(MPI_Improbe(SENDER, TAG(0), MPI_COMM_WORLD, &flag, &m, &st));
        CHECK(flag == 0, "MPI_Improbe found a message before it was sent");
        if (SENDER == 0)
            send_msg(&s, 0, 5000, TAG(0), 0);
        else
            p2p_signal(SENDER, TAG(1));
        do {
            MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, TAG(0), MPI_COMM_WORLD, &flag, &m, &st));
        } while (!flag);
        p2p_check_status(&st, SENDER, TAG(0), MPI_BYTE, 5000, "improbe");
        MPI_Message again = MPI_MESSAGE_NULL;
        MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &again, &st));
        CHECK(flag == 0, "MPI_Improbe handed out a matched message twice");
        mrecv_check(&m, 5000, TAG(0), 0, 1);
    } else if (p2p_rank == SENDER) {
        p2p_wait_signal(0, TAG(1));
        send_msg(&s, 0, 5000, TAG(0), 0);
    }
    finish_sends(&s);
}

/* MPI_PROC_NULL: sends and receives complete at once and move nothing; probes find a
 * message "from MPI_PROC_NULL" at once; matched probes give MPI_MESSAGE_NO_PROC. */
static void proc_null_everywhere(void)
{
    int buf[4] = {11, 22, 33, 44}, rbuf[4];
    MPI_Status st;
    MPI_Request req[4];
    MPI_Status sts[4];
    MPI_Message m = MPI_MESSAGE_NULL;
    int flag = 0;

    MPI_OK(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD));
    MPI_OK(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD));
    MPI_OK(MPI_Rsend(buf, 4, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD));

    memset(rbuf, 0x5a, sizeof(rbuf));
    MPI_OK(MPI_Recv(rbuf, 4, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD, &st));
    p2p_check_proc_null_status(&st, "MPI_Recv from MPI_PROC_NULL");
    p2p_check_untouched(rbuf, sizeof(rbuf), 0x5a, "MPI_Recv from MPI_PROC_NULL");

    MPI_OK(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Issend(buf, 4, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Irsend(buf, 4, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD, &req[2]));
    MPI_OK(MPI_Irecv(rbuf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &req[3]));
    MPI_OK(MPI_Waitall(4, req, sts));
    p2p_check_proc_null_status(&sts[3], "MPI_Irecv from MPI_PROC_NULL");
    p2p_check_untouched(rbuf, sizeof(rbuf), 0x5a, "MPI_Irecv from MPI_PROC_NULL");
    for (int i = 0; i < 4; i++)
        CHECK(req[i] == MPI_REQUEST_NULL, "request %d not null after MPI_Waitall", i);

    MPI_OK(MPI_Probe(MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD, &st));
    p2p_check_proc_null_status(&st, "MPI_Probe of MPI_PROC_NULL");
    MPI_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag == 1, "MPI_Iprobe of MPI_PROC_NULL: flag %d", flag);
    p2p_check_proc_null_status(&st, "MPI_Iprobe of MPI_PROC_NULL");

    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, TAG(0), MPI_COMM_WORLD, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC, "MPI_Mprobe of MPI_PROC_NULL: not MPI_MESSAGE_NO_PROC");
    p2p_check_proc_null_status(&st, "MPI_Mprobe of MPI_PROC_NULL");
    MPI_OK(MPI_Mrecv(rbuf, 4, MPI_INT, &m, &st));
    p2p_check_proc_null_status(&st, "MPI_Mrecv of MPI_MESSAGE_NO_PROC");
    flag = 0;
    m = MPI_MESSAGE_NULL;
    MPI_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(flag == 1 && m == MPI_MESSAGE_NO_PROC, "MPI_Improbe of MPI_PROC_NULL: flag %d", flag);
    p2p_check_proc_null_status(&st, "MPI_Improbe of MPI_PROC_NULL");
    MPI_OK(MPI_Imrecv(rbuf, 4, MPI_INT, &m, &req[0]));
    MPI_OK(MPI_Wait(&req[0], &st));
    p2p_check_proc_null_status(&st, "MPI_Imrecv of MPI_MESSAGE_NO_PROC");
    p2p_check_untouched(rbuf, sizeof(rbuf), 0x5a, "receives of MPI_MESSAGE_NO_PROC");

    MPI_OK(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, TAG(0), rbuf, 4, MPI_INT, MPI_PROC_NULL,
                        TAG(0), MPI_COMM_WORLD, &st));
    p2p_check_proc_null_status(&st, "MPI_Sendrecv with MPI_PROC_NULL");
    MPI_OK(MPI_Sendrecv_replace(buf, 4, MPI_INT, MPI_PROC_NULL, TAG(0), MPI_PROC_NULL, TAG(0),
                                MPI_COMM_WORLD, &st));
    p2p_check_proc_null_status(&st, "MPI_Sendrecv_replace with MPI_PROC_NULL");
    CHECK(buf[0] == 11 && buf[1] == 22 && buf[2] == 33 && buf[3] == 44,
          "MPI_Sendrecv_replace with MPI_PROC_NULL changed the buffer");
    p2p_check_untouched(rbuf, sizeof(rbuf), 0x5a, "MPI_Sendrecv from MPI_PROC_NULL");

    /* A real peer on one side and MPI_PROC_NULL on the other; the other half of each
     * exchange is posted first, so that nothing relies on buffering. */
    int out = 1000 + p2p_rank, in = -1, unused = -1;
    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, PREV, TAG(1), MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, NEXT, TAG(1), &unused, 1, MPI_INT, MPI_PROC_NULL, TAG(1),
                        MPI_COMM_WORLD, &st));
    p2p_check_proc_null_status(&st, "MPI_Sendrecv to a peer, from MPI_PROC_NULL");
    MPI_OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    CHECK(unused == -1, "receive half from MPI_PROC_NULL wrote %d", unused);
    CHECK(in == 1000 + PREV, "got %d from rank %d, expected %d", in, PREV, 1000 + PREV);
    out += 100;
    MPI_OK(MPI_Isend(&out, 1, MPI_INT, NEXT, TAG(2), MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Sendrecv(&unused, 1, MPI_INT, MPI_PROC_NULL, TAG(2), &in, 1, MPI_INT, PREV, TAG(2),
                        MPI_COMM_WORLD, &st));
    p2p_check_status(&st, PREV, TAG(2), MPI_INT, 1, "MPI_Sendrecv to MPI_PROC_NULL, from a peer");
    CHECK(in == 1100 + PREV, "got %d from rank %d, expected %d", in, PREV, 1100 + PREV);
    MPI_OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
}

/* One subtest a line, as test_p2p.py reads them. */
/* clang-format off */
static const p2p_test_t tests[] = {
    P2P_TEST(probe_gives_count, 1),
    P2P_TEST(probe_any_source_any_tag, 1),
    P2P_TEST(iprobe_before_and_after, 1),
    P2P_TEST(probe_does_not_receive, 1),
    P2P_TEST(get_count_undefined, 1),
    P2P_TEST(mprobe_then_mrecv, 1),
    P2P_TEST(mprobe_not_stolen, 1),
    P2P_TEST(improbe_flag, 1),
    P2P_TEST(proc_null_everywhere, 1),
};
/* clang-format on */

P2P_MAIN(tests)
