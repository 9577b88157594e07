/*
 * wildcard.c: matching with MPI_ANY_SOURCE and MPI_ANY_TAG (MPI-3.1 sections 3.2.4 and
 * 3.5): wildcard receives against one and several senders, per-sender order under
 * MPI_ANY_SOURCE, and which of several posted receives (wildcard or specific) a message
 * matches: always the first posted one that matches it.
 *
 * Rank 0 is the receiver of the receives with MPI_ANY_TAG (see p2p_common.h), and of most
 * others; every rank, rank 0 included, sends to it. With one rank, rank 0 sends to itself.
 * The last subtest receives with MPI_ANY_SOURCE on every rank.
 *   mpicc -O2 wildcard.c -o wildcard && mpirun -np 4 ./wildcard
 */
#include "p2p_common.h"

#define MAX_LEN 70001

/* Message i of rank r: a header (sender, index) then the pattern; every fifth is long
 * enough for a rendezvous over sm and tcp. */
static size_t msg_len(int r, int i)
{
    return (i % 5 == 4) ? (size_t)MAX_LEN - (size_t)r : (size_t)(16 + (i * 13 + r) % 200);
}

typedef struct header {
    int sender, index;
} header_t;

static void make_msg(unsigned char *buf, int r, int i)
{
    header_t h = {r, i};
    memcpy(buf, &h, sizeof(h));
    p2p_fill(buf + sizeof(h), msg_len(r, i) - sizeof(h), p2p_seed((uint32_t)r, (uint32_t)i, 2));
}

/* Check a received message; @return its index, or -1 when it is not a valid message. */
static int check_msg(const unsigned char *buf, const MPI_Status *st, int expected_tag)
{
    header_t h;
    int count = p2p_count(st, MPI_BYTE);
    char what[96];

    memcpy(&h, buf, sizeof(h));
    if (count < (int)sizeof(h) || h.sender != st->MPI_SOURCE || h.sender < 0 ||
        h.sender >= p2p_size || h.index < 0) {
        p2p_fail("message from MPI_SOURCE %d (tag %d, %d bytes) has header sender %d index %d",
                 st->MPI_SOURCE, st->MPI_TAG, count, h.sender, h.index);
        return -1;
    }
    snprintf(what, sizeof(what), "message %d of rank %d", h.index, h.sender);
    CHECK(expected_tag < 0 || st->MPI_TAG == expected_tag, "%s: tag %d, expected %d", what,
          st->MPI_TAG, expected_tag);
    if (count != (int)msg_len(h.sender, h.index)) {
        p2p_fail("%s: %d bytes, expected %zu", what, count, msg_len(h.sender, h.index));
        return -1;
    }
    p2p_check(buf + sizeof(h), (size_t)count - sizeof(h),
              p2p_seed((uint32_t)h.sender, (uint32_t)h.index, 2), what);
    return h.index;
}

/* `n` messages from this rank to rank 0 on tags tag_of(i), started without blocking. */
typedef struct sends {
    int n;
    unsigned char **buf;
    MPI_Request *req;
} sends_t;

static sends_t start_sends(int n, int (*tag_of)(int r, int i))
{
    sends_t s = {n, p2p_malloc(sizeof(unsigned char *) * (size_t)n),
                 p2p_malloc(sizeof(MPI_Request) * (size_t)n)};
    for (int i = 0; i < n; i++) {
        s.buf[i] = p2p_malloc(msg_len(p2p_rank, i));
        make_msg(s.buf[i], p2p_rank, i);
        MPI_OK(MPI_Isend(s.buf[i], (int)msg_len(p2p_rank, i), MPI_BYTE, 0, tag_of(p2p_rank, i),
                         MPI_COMM_WORLD, &s.req[i]));
    }
    return s;
}

static void finish_sends(sends_t *s)
{
    MPI_OK(MPI_Waitall(s->n, s->req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < s->n; i++)
        free(s->buf[i]);
    free(s->buf);
    free(s->req);
}

static int tag_fixed(int r, int i)
{
    (void)r;
    (void)i;
    return TAG(0);
}

static int tag_varied(int r, int i)
{
    return TAG(1 + (i * 7 + r) % 20);
}

/*
 * Rank 0 receives every rank's `per_rank` messages with the given source and tag
 * (wildcards) and checks that each sender's messages came in its order, all of them.
 */
static void receive_all(int per_rank, int source, int tag, int (*tag_of)(int r, int i))
{
    int *next = calloc((size_t)p2p_size, sizeof(int));
    unsigned char *buf = p2p_malloc(MAX_LEN);
    int senders = source == MPI_ANY_SOURCE ? p2p_size : 1;
    MPI_Status st;

    for (int k = 0; k < senders * per_rank; k++) {
        MPI_OK(MPI_Recv(buf, MAX_LEN, MPI_BYTE, source, tag, MPI_COMM_WORLD, &st));
        int r = st.MPI_SOURCE;
        int i = check_msg(buf, &st, -1);
        if (i < 0)
            continue;
        CHECK(source == MPI_ANY_SOURCE || r == source, "message from %d, asked for %d", r, source);
        CHECK(i == next[r], "rank %d's message %d arrived when %d was due (overtaken)", r, i,
              next[r]);
        CHECK(st.MPI_TAG == tag_of(r, i), "rank %d's message %d has tag %d, sent with %d", r, i,
              st.MPI_TAG, tag_of(r, i));
        next[r] = i + 1;
    }
    for (int r = 0; r < p2p_size; r++) {
        if (source == MPI_ANY_SOURCE || r == source)
            CHECK(next[r] == per_rank, "received %d of rank %d's %d messages", next[r], r,
                  per_rank);
    }
    free(next);
    free(buf);
}

/* Every rank sends 40 messages on one tag; rank 0 receives them with MPI_ANY_SOURCE. */
static void any_source_many_senders(void)
{
    sends_t s = start_sends(40, tag_fixed);
    if (p2p_rank == 0)
        receive_all(40, MPI_ANY_SOURCE, TAG(0), tag_fixed);
    finish_sends(&s);
}

/* One sender (rank 1, or rank 0 alone) on 20 tags; rank 0 receives with MPI_ANY_TAG. */
static void any_tag_one_sender(void)
{
    int sender = p2p_size > 1 ? 1 : 0;
    sends_t s = {0};
    if (p2p_rank == sender)
        s = start_sends(40, tag_varied);
    if (p2p_rank == 0)
        receive_all(40, sender, MPI_ANY_TAG, tag_varied);
    if (p2p_rank == sender)
        finish_sends(&s);
}

/* Every rank on several tags; rank 0 receives with both wildcards. */
static void any_source_any_tag(void)
{
    sends_t s = start_sends(30, tag_varied);
    if (p2p_rank == 0)
        receive_all(30, MPI_ANY_SOURCE, MPI_ANY_TAG, tag_varied);
    finish_sends(&s);
}

/*
 * Rank 0 posts every receive with MPI_ANY_SOURCE before anyone sends: the receives are
 * matched in the order they were posted, so each sender's messages fill them in its order.
 */
static void any_source_preposted(void)
{
    const int per_rank = 25;
    int n = per_rank * p2p_size;
    unsigned char **buf = NULL;
    MPI_Request *req = NULL;
    MPI_Status *st = NULL;

    if (p2p_rank == 0) {
        buf = p2p_malloc(sizeof(*buf) * (size_t)n);
        req = p2p_malloc(sizeof(*req) * (size_t)n);
        st = p2p_malloc(sizeof(*st) * (size_t)n);
        for (int k = 0; k < n; k++) {
            buf[k] = p2p_malloc(MAX_LEN);
            MPI_OK(MPI_Irecv(buf[k], MAX_LEN, MPI_BYTE, MPI_ANY_SOURCE, TAG(0), MPI_COMM_WORLD,
                             &req[k]));
        }
        for (int r = 1; r < p2p_size; r++)
            p2p_signal(r, TAG(30));
    } else {
        p2p_wait_signal(0, TAG(30));
    }
    sends_t s = start_sends(per_rank, tag_fixed);
    if (p2p_rank == 0) {
        int *next = calloc((size_t)p2p_size, sizeof(int));
        MPI_OK(MPI_Waitall(n, req, st));
        for (int k = 0; k < n; k++) {
            int r = st[k].MPI_SOURCE, i = check_msg(buf[k], &st[k], TAG(0));
            if (i >= 0) {
                CHECK(i == next[r], "receive %d got rank %d's message %d, expected %d", k, r, i,
                      next[r]);
                next[r] = i + 1;
            }
            free(buf[k]);
        }
        for (int r = 0; r < p2p_size; r++)
            CHECK(next[r] == per_rank, "rank %d: %d of %d messages", r, next[r], per_rank);
        free(next);
        free(buf);
        free(req);
        free(st);
    }
    finish_sends(&s);
}

/*
 * Posted receives A then B, both able to match the sender's first message: A takes it
 * (MPI-3.1 section 3.5: the first matching receive posted), B the second. Done for
 * (ANY_SOURCE, specific source), (specific, ANY_SOURCE), (ANY_TAG, specific tag) and
 * (specific tag, ANY_TAG), with small and large messages.
 */
static void posted_order_decides(void)
{
    const int sender = p2p_size > 1 ? 1 : 0;
    struct {
        int src_a, tag_a, src_b, tag_b;
    } cases[] = {
        {MPI_ANY_SOURCE, TAG(0), sender, TAG(0)},      {sender, TAG(1), MPI_ANY_SOURCE, TAG(1)},
        {sender, MPI_ANY_TAG, sender, TAG(2)},         {sender, TAG(3), sender, MPI_ANY_TAG},
        {MPI_ANY_SOURCE, MPI_ANY_TAG, sender, TAG(4)},
    };
    const int message_tags[] = {TAG(0), TAG(1), TAG(2), TAG(3), TAG(4)};
    const size_t ncases = sizeof(cases) / sizeof(cases[0]);

    for (int large = 0; large < 2; large++) {
        for (size_t c = 0; c < ncases; c++) {
            /* Index 0 and 1: small; the large variant uses indexes 4 and 9 (rendezvous). */
            int first = large ? 4 : 0, second = large ? 9 : 1;
            unsigned char *a = NULL, *b = NULL;
            MPI_Request req[2];
            MPI_Status st[2];

            if (p2p_rank == 0) {
                a = p2p_malloc(MAX_LEN);
                b = p2p_malloc(MAX_LEN);
                MPI_OK(MPI_Irecv(a, MAX_LEN, MPI_BYTE, cases[c].src_a, cases[c].tag_a,
                                 MPI_COMM_WORLD, &req[0]));
                MPI_OK(MPI_Irecv(b, MAX_LEN, MPI_BYTE, cases[c].src_b, cases[c].tag_b,
                                 MPI_COMM_WORLD, &req[1]));
                if (sender != 0)
                    p2p_signal(sender, TAG(31));
            }
            if (p2p_rank == sender) {
                unsigned char *m1 = p2p_malloc(MAX_LEN), *m2 = p2p_malloc(MAX_LEN);
                MPI_Request sreq[2];
                if (sender != 0)
                    p2p_wait_signal(0, TAG(31));
                make_msg(m1, sender, first);
                make_msg(m2, sender, second);
                MPI_OK(MPI_Isend(m1, (int)msg_len(sender, first), MPI_BYTE, 0, message_tags[c],
                                 MPI_COMM_WORLD, &sreq[0]));
                MPI_OK(MPI_Isend(m2, (int)msg_len(sender, second), MPI_BYTE, 0, message_tags[c],
                                 MPI_COMM_WORLD, &sreq[1]));
                if (p2p_rank == 0)
                    MPI_OK(MPI_Waitall(2, req, st));
                MPI_OK(MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE));
                free(m1);
                free(m2);
            }
            if (p2p_rank == 0) {
                if (sender != 0)
                    MPI_OK(MPI_Waitall(2, req, st));
                int ia = check_msg(a, &st[0], message_tags[c]);
                int ib = check_msg(b, &st[1], message_tags[c]);
                CHECK(ia == first && ib == second,
                      "case %zu (%s): first posted receive got message %d, second got %d", c,
                      large ? "large" : "small", ia, ib);
                free(a);
                free(b);
            }
        }
    }
}

/*
 * Messages already waiting (unexpected): a specific receive takes the first matching one
 * even when a wildcard receive is posted after it, and a wildcard receive takes the
 * earliest matching one.
 */
static void unexpected_first_match(void)
{
    const int sender = p2p_size > 1 ? 1 : 0;
    sends_t s = {0};

    if (p2p_rank == sender) {
        /* Messages 0..4 on tags: 0:T5 1:T6 2:T5 3:T6 4:T5 (4 is rendezvous). */
        s.n = 5;
        s.buf = p2p_malloc(sizeof(unsigned char *) * 5);
        s.req = p2p_malloc(sizeof(MPI_Request) * 5);
        for (int i = 0; i < 5; i++) {
            s.buf[i] = p2p_malloc(msg_len(sender, i));
            make_msg(s.buf[i], sender, i);
            MPI_OK(MPI_Isend(s.buf[i], (int)msg_len(sender, i), MPI_BYTE, 0, TAG(i % 2 ? 6 : 5),
                             MPI_COMM_WORLD, &s.req[i]));
        }
        p2p_signal(0, TAG(32));
    }
    if (p2p_rank == 0) {
        unsigned char *buf = p2p_malloc(MAX_LEN);
        MPI_Status st;
        p2p_wait_signal(sender, TAG(32));
        p2p_sleep_ms(20);
        /* Tag T6 specifically: message 1, not 0. */
        MPI_OK(MPI_Recv(buf, MAX_LEN, MPI_BYTE, sender, TAG(6), MPI_COMM_WORLD, &st));
        CHECK(check_msg(buf, &st, TAG(6)) == 1, "specific tag did not take message 1");
        /* Any tag: message 0, the earliest left. */
        MPI_OK(MPI_Recv(buf, MAX_LEN, MPI_BYTE, sender, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(check_msg(buf, &st, TAG(5)) == 0, "MPI_ANY_TAG did not take message 0");
        /* Any source, tag T5: message 2. */
        MPI_OK(MPI_Recv(buf, MAX_LEN, MPI_BYTE, MPI_ANY_SOURCE, TAG(5), MPI_COMM_WORLD, &st));
        CHECK(check_msg(buf, &st, TAG(5)) == 2, "MPI_ANY_SOURCE did not take message 2");
        /* Both wildcards: message 3; then the specific receive: message 4 (rendezvous). */
        MPI_OK(MPI_Recv(buf, MAX_LEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(check_msg(buf, &st, TAG(6)) == 3, "both wildcards did not take message 3");
        MPI_OK(MPI_Recv(buf, MAX_LEN, MPI_BYTE, sender, TAG(5), MPI_COMM_WORLD, &st));
        CHECK(check_msg(buf, &st, TAG(5)) == 4, "specific receive did not take message 4");
        free(buf);
    }
    if (p2p_rank == sender)
        finish_sends(&s);
}

/* A wildcard source does not widen the tag: MPI_ANY_SOURCE with tag T skips a message on
 * tag T+1 that was sent first, even a large one. */
static void any_source_keeps_tag(void)
{
    const int sender = p2p_size > 1 ? p2p_size - 1 : 0;
    sends_t s = {0};
    if (p2p_rank == sender) {
        s.n = 2;
        s.buf = p2p_malloc(sizeof(unsigned char *) * 2);
        s.req = p2p_malloc(sizeof(MPI_Request) * 2);
        for (int i = 0; i < 2; i++) {
            int index = i == 0 ? 4 : 1; /* first a large message on T8, then a small on T7 */
            s.buf[i] = p2p_malloc(msg_len(sender, index));
            make_msg(s.buf[i], sender, index);
            MPI_OK(MPI_Isend(s.buf[i], (int)msg_len(sender, index), MPI_BYTE, 0,
                             i == 0 ? TAG(8) : TAG(7), MPI_COMM_WORLD, &s.req[i]));
        }
    }
    if (p2p_rank == 0) {
        unsigned char *buf = p2p_malloc(MAX_LEN);
        MPI_Status st;
        MPI_OK(MPI_Recv(buf, MAX_LEN, MPI_BYTE, MPI_ANY_SOURCE, TAG(7), MPI_COMM_WORLD, &st));
        CHECK(check_msg(buf, &st, TAG(7)) == 1, "MPI_ANY_SOURCE on tag T7 got another message");
        MPI_OK(MPI_Recv(buf, MAX_LEN, MPI_BYTE, sender, TAG(8), MPI_COMM_WORLD, &st));
        CHECK(check_msg(buf, &st, TAG(8)) == 4, "tag T8 did not get the large message");
        free(buf);
    }
    if (p2p_rank == sender)
        finish_sends(&s);
}

/* MPI_ANY_SOURCE with a specific tag is safe on every rank: each rank receives from all
 * the others (and itself) at once. */
static void any_source_on_every_rank(void)
{
    const int per_peer = 10;
    int n = per_peer * p2p_size;
    unsigned char **sbuf = p2p_malloc(sizeof(*sbuf) * (size_t)n);
    MPI_Request *sreq = p2p_malloc(sizeof(*sreq) * (size_t)n);
    int *next = calloc((size_t)p2p_size, sizeof(int));
    unsigned char *buf = p2p_malloc(MAX_LEN);
    MPI_Status st;

    for (int k = 0; k < n; k++) {
        int dest = k % p2p_size, i = k / p2p_size;
        sbuf[k] = p2p_malloc(msg_len(p2p_rank, i));
        make_msg(sbuf[k], p2p_rank, i);
        MPI_OK(MPI_Isend(sbuf[k], (int)msg_len(p2p_rank, i), MPI_BYTE, dest, TAG(9), MPI_COMM_WORLD,
                         &sreq[k]));
    }
    for (int k = 0; k < n; k++) {
        MPI_OK(MPI_Recv(buf, MAX_LEN, MPI_BYTE, MPI_ANY_SOURCE, TAG(9), MPI_COMM_WORLD, &st));
        int r = st.MPI_SOURCE, i = check_msg(buf, &st, TAG(9));
        if (i >= 0) {
            CHECK(i == next[r], "rank %d's message %d arrived when %d was due", r, i, next[r]);
            next[r] = i + 1;
        }
    }
    for (int r = 0; r < p2p_size; r++)
        CHECK(next[r] == per_peer, "%d of rank %d's %d messages", next[r], r, per_peer);
    MPI_OK(MPI_Waitall(n, sreq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < n; k++)
        free(sbuf[k]);
    free(sbuf);
    free(sreq);
    free(next);
    free(buf);
}

/* One subtest a line, as test_p2p.py reads them. */
/* clang-format off */
static const p2p_test_t tests[] = {
    P2P_TEST(any_source_many_senders, 1),
    P2P_TEST(any_tag_one_sender, 1),
    P2P_TEST(any_source_any_tag, 1),
    P2P_TEST(any_source_preposted, 1),
    P2P_TEST(posted_order_decides, 1),
    P2P_TEST(unexpected_first_match, 1),
    P2P_TEST(any_source_keeps_tag, 1),
    P2P_TEST(any_source_on_every_rank, 1),
};
/* clang-format on */

P2P_MAIN(tests)
