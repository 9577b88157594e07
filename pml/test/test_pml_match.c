/*
 * test_pml_match.c: MPI matching in the ob1 PML, driven through pml.h in a singleton (one
 * rank, the self BTL): sequence order, posted-versus-unexpected, wildcards and their
 * posting order, tags the library reserves, truncation, probes and matched probes, cancel
 * (of receives, of sends, of an early arrival), synchronous sends, persistent requests,
 * messages for a communicator created later, the ranks of an intercommunicator, and the
 * live requests of a communicator that MPI_Comm_free waits for.
 *
 * MPI_Init brings the PML up; the tests use communicators of their own, made with
 * crmpi_pml_add_comm, as the MPI layer makes its own. The PML runs with the library lock
 * held, as the MPI calls hold it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "btl.h"
#include "crmpi_status.h"
#include "pml.h"
#include "pml_ob1.h"
#include "progress.h"

#include "pml_test_comm.h"

static crmpi_request_t *isend_int(int value, int tag, crmpi_pml_send_mode_t mode)
{
    static int values[64];
    static int next;
    crmpi_request_t *req;
    int *slot = &values[next++ % 64];

    *slot = value;
    assert_int_equal(crmpi_pml_isend(slot, 1, MPI_INT, 0, tag, mode, pml_comm, &req), 0);
    return req;
}

static crmpi_request_t *irecv_int(int *value, int source, int tag)
{
    crmpi_request_t *req;

    assert_int_equal(crmpi_pml_irecv(value, 1, MPI_INT, source, tag, pml_comm, &req), 0);
    return req;
}

static MPI_Status wait_finish(crmpi_request_t *req)
{
    MPI_Status status;

    crmpi_pml_wait(req);
    crmpi_pml_request_finish(req, &status);
    return status;
}

/* Many messages with one (source, tag) are received in the order they were sent. */
static void test_order_kept(void **state)
{
    enum { N = 200 };
    crmpi_request_t *sends[N];
    int got;

    (void)state;
    for (int i = 0; i < N; i++)
        sends[i] = isend_int(i, 1, CRMPI_PML_SEND_STANDARD);
    for (int i = 0; i < N; i++) {
        wait_finish(irecv_int(&got, 0, 1));
        assert_int_equal(got, i);
        wait_finish(sends[i]);
    }
}

/* A wildcard receive posted before a specific one gets the first message, and vice versa. */
static void test_posting_order_decides(void **state)
{
    int a = -1, b = -1;
    crmpi_request_t *any, *specific;

    (void)state;
    any = irecv_int(&a, MPI_ANY_SOURCE, 5);
    specific = irecv_int(&b, 0, 5);
    wait_finish(isend_int(10, 5, CRMPI_PML_SEND_STANDARD));
    wait_finish(isend_int(11, 5, CRMPI_PML_SEND_STANDARD));
    wait_finish(any);
    wait_finish(specific);
    assert_int_equal(a, 10);
    assert_int_equal(b, 11);

    specific = irecv_int(&b, 0, 5);
    any = irecv_int(&a, MPI_ANY_SOURCE, MPI_ANY_TAG);
    wait_finish(isend_int(20, 5, CRMPI_PML_SEND_STANDARD));
    wait_finish(isend_int(21, 5, CRMPI_PML_SEND_STANDARD));
    wait_finish(specific);
    wait_finish(any);
    assert_int_equal(b, 20);
    assert_int_equal(a, 21);
}

/* Tags select; MPI_ANY_TAG takes the earliest unexpected message of any application tag,
 * and never a negative (library) tag. */
static void test_tags_and_any_tag(void **state)
{
    int got = -1;
    MPI_Status status;
    crmpi_request_t *lib_send = isend_int(99, -7, CRMPI_PML_SEND_STANDARD);

    (void)state;
    wait_finish(isend_int(3, 3, CRMPI_PML_SEND_STANDARD));
    wait_finish(isend_int(7, 7, CRMPI_PML_SEND_STANDARD));
    status = wait_finish(irecv_int(&got, 0, 7));
    assert_int_equal(got, 7);
    assert_int_equal(status.MPI_TAG, 7);
    status = wait_finish(irecv_int(&got, MPI_ANY_SOURCE, MPI_ANY_TAG));
    assert_int_equal(got, 3);
    assert_int_equal(status.MPI_TAG, 3);
    assert_int_equal(status.MPI_SOURCE, 0);
    /* Only the library's message is left: MPI_ANY_TAG must not see it. */
    int flag = 1;
    crmpi_pml_iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, pml_comm, &flag, &status);
    assert_int_equal(flag, 0);
    status = wait_finish(irecv_int(&got, 0, -7));
    assert_int_equal(got, 99);
    wait_finish(lib_send);
}

/* Eager and rendezvous messages that arrive before their receive keep their data. */
static void test_unexpected_sizes(void **state)
{
    static const size_t sizes[] = {0, 1, 4096, 65535, 65536, 65537, 1 << 20, (4 << 20) + 5};
    enum { NSIZES = sizeof(sizes) / sizeof(sizes[0]) };
    crmpi_request_t *sends[NSIZES];
    unsigned char *bufs[NSIZES];

    (void)state;
    for (size_t i = 0; i < NSIZES; i++) {
        bufs[i] = malloc(sizes[i] + 1);
        for (size_t j = 0; j < sizes[i]; j++)
            bufs[i][j] = (unsigned char)(j * 7 + i);
        assert_int_equal(crmpi_pml_isend(bufs[i], sizes[i], MPI_BYTE, 0, 40,
                                         CRMPI_PML_SEND_STANDARD, pml_comm, &sends[i]),
                         0);
    }
    for (size_t i = 0; i < NSIZES; i++) {
        unsigned char *in = malloc(sizes[i] + 1);
        crmpi_request_t *req;
        MPI_Status status;

        assert_int_equal(crmpi_pml_irecv(in, sizes[i], MPI_BYTE, 0, 40, pml_comm, &req), 0);
        status = wait_finish(req);
        assert_int_equal(status.MPI_ERROR, MPI_SUCCESS);
        assert_int_equal(status._nbytes, (MPI_Count)sizes[i]);
        assert_memory_equal(in, bufs[i], sizes[i]);
        wait_finish(sends[i]);
        free(in);
        free(bufs[i]);
    }
}

/* A message longer than the buffer: MPI_ERR_TRUNCATE, the buffer's worth delivered, and the
 * next message is not disturbed (the rest of a rendezvous is received and dropped). */
static void test_truncation(void **state)
{
    enum { LONG = 300000, SHORT = 100 };
    unsigned char *out = malloc(LONG);
    unsigned char in[SHORT + 1];
    crmpi_request_t *send, *recv;
    MPI_Status status;
    int got = -1;

    (void)state;
    for (int i = 0; i < LONG; i++)
        out[i] = (unsigned char)(i % 251);
    in[SHORT] = 0xAB;
    assert_int_equal(
        crmpi_pml_isend(out, LONG, MPI_BYTE, 0, 8, CRMPI_PML_SEND_STANDARD, pml_comm, &send), 0);
    crmpi_request_t *second = isend_int(42, 8, CRMPI_PML_SEND_STANDARD);
    assert_int_equal(crmpi_pml_irecv(in, SHORT, MPI_BYTE, 0, 8, pml_comm, &recv), 0);
    status = wait_finish(recv);
    assert_int_equal(status.MPI_ERROR, MPI_ERR_TRUNCATE);
    assert_int_equal(status._nbytes, SHORT);
    assert_memory_equal(in, out, SHORT);
    assert_int_equal(in[SHORT], 0xAB); /* nothing written past the buffer */
    wait_finish(send);
    status = wait_finish(irecv_int(&got, 0, 8));
    assert_int_equal(status.MPI_ERROR, MPI_SUCCESS);
    assert_int_equal(got, 42);
    wait_finish(second);
    free(out);
}

/* Iprobe leaves the message; Improbe takes it out of matching for good. */
static void test_probe_and_matched_probe(void **state)
{
    crmpi_request_t *req;
    struct crmpi_message_s *msg;
    MPI_Status status;
    int flag = 0, got = -1, other = -1;

    (void)state;
    wait_finish(isend_int(5, 12, CRMPI_PML_SEND_STANDARD));
    crmpi_pml_iprobe(0, 12, pml_comm, &flag, &status);
    assert_int_equal(flag, 1);
    assert_int_equal(status._nbytes, sizeof(int));
    crmpi_pml_iprobe(0, 12, pml_comm, &flag, &status);
    assert_int_equal(flag, 1);

    crmpi_pml_improbe(MPI_ANY_SOURCE, 12, pml_comm, &flag, &msg, &status);
    assert_int_equal(flag, 1);
    assert_int_equal(status.MPI_TAG, 12);
    /* A receive posted now must not steal the probed message. */
    crmpi_request_t *later = irecv_int(&other, MPI_ANY_SOURCE, MPI_ANY_TAG);
    assert_int_equal(crmpi_pml_imrecv(&got, 1, MPI_INT, msg, &req), 0);
    wait_finish(req);
    assert_int_equal(got, 5);
    assert_false(later->complete);
    wait_finish(isend_int(6, 13, CRMPI_PML_SEND_STANDARD));
    wait_finish(later);
    assert_int_equal(other, 6);

    /* MPI_PROC_NULL: found at once, nothing to receive. */
    crmpi_pml_improbe(MPI_PROC_NULL, 0, pml_comm, &flag, &msg, &status);
    assert_int_equal(flag, 1);
    assert_ptr_equal(msg, MPI_MESSAGE_NO_PROC);
    assert_int_equal(status.MPI_SOURCE, MPI_PROC_NULL);
}

/* An unmatched receive can be cancelled; a matched one completes normally. */
static void test_cancel(void **state)
{
    int got = -1;
    crmpi_request_t *req = irecv_int(&got, 0, 77);
    MPI_Status status;

    (void)state;
    crmpi_pml_cancel(req);
    status = wait_finish(req);
    assert_int_equal(status._cancelled, 1);

    wait_finish(isend_int(1, 78, CRMPI_PML_SEND_STANDARD));
    /* Arrived (the sender completing says nothing of that), so the receive matches at once. */
    for (int flag = 0; !flag;)
        crmpi_pml_iprobe(0, 78, pml_comm, &flag, NULL);
    req = irecv_int(&got, 0, 78);
    crmpi_pml_cancel(req);
    status = wait_finish(req);
    assert_int_equal(status._cancelled, 0);
    assert_int_equal(got, 1);
}

/* A send is cancelled while its message waits unmatched at the receiver, eager or not,
 * and completes normally once a receive has matched it (MPI-3.1 section 3.8.4). */
static void test_cancel_send(void **state)
{
    static const crmpi_pml_send_mode_t modes[] = {CRMPI_PML_SEND_STANDARD,
                                                  CRMPI_PML_SEND_SYNCHRONOUS};
    int got = -1, flag = 1;
    MPI_Status status;

    (void)state;
    for (int m = 0; m < 2; m++) {
        crmpi_request_t *send = isend_int(40 + m, 79, modes[m]);

        crmpi_pml_cancel(send);
        status = wait_finish(send);
        assert_int_equal(status._cancelled, 1);
        crmpi_pml_iprobe(0, 79, pml_comm, &flag, NULL);
        assert_false(flag); /* dropped: nothing left to receive */
    }
    crmpi_request_t *recv = irecv_int(&got, 0, 80);
    crmpi_request_t *send = isend_int(42, 80, CRMPI_PML_SEND_SYNCHRONOUS);

    crmpi_pml_cancel(send);
    status = wait_finish(send);
    assert_int_equal(status._cancelled, 0);
    wait_finish(recv);
    assert_int_equal(got, 42);
}

/* A cancelled message that arrived ahead of its turn is dropped when its turn comes; it
 * still counts as arrived, as its sender counts it as sent (the checkpoint's bookmarks). */
static void test_cancel_early_arrival(void **state)
{
    pml_ob1_match_hdr_t first = {.ctx = 5, .src = 0, .tag = 81, .seq = 0};
    pml_ob1_match_hdr_t early = {.ctx = 5, .src = 0, .tag = 82, .seq = 1};
    pml_ob1_cancel_hdr_t cancel = {.send_req = 0, .match = early};
    char frag[sizeof(pml_ob1_match_hdr_t) + sizeof(int)];
    int value = 7, got = -1, flag = 1;
    uint32_t sent, arrived;

    (void)state;
    /* Numbers from 0 again (nothing is in flight), as after a restart: the two messages
     * below come from a made-up sender, which is this rank. */
    assert_int_equal(crmpi_pml_cr_reset_sequences(), CRMPI_OK);
    memcpy(frag, &early, sizeof(early));
    memcpy(frag + sizeof(early), &value, sizeof(value));
    crmpi_btl_recv_table[PML_OB1_TAG_MATCH](NULL, 0, frag, sizeof(frag));
    crmpi_btl_recv_table[PML_OB1_TAG_CANCEL](NULL, 0, &cancel, sizeof(cancel));
    memcpy(frag, &first, sizeof(first));
    crmpi_btl_recv_table[PML_OB1_TAG_MATCH](NULL, 0, frag, sizeof(frag));
    crmpi_pml_cr_bookmark(0, &sent, &arrived);
    assert_int_equal(arrived, 2);
    crmpi_pml_iprobe(0, 82, pml_comm, &flag, NULL);
    assert_false(flag);
    wait_finish(irecv_int(&got, 0, 81));
    assert_int_equal(got, 7);
    for (int i = 0; i < 100; i++)
        crmpi_progress(); /* the CANCEL_REPLY, to no request of this rank, is dropped */
    /* Nothing is left out of order, and this rank's own numbering agrees again. */
    assert_int_equal(crmpi_pml_cr_reset_sequences(), CRMPI_OK);
}

/* A synchronous send does not complete before its receive is posted, even when small. */
static void test_synchronous_send(void **state)
{
    int got = -1;
    crmpi_request_t *send = isend_int(9, 30, CRMPI_PML_SEND_SYNCHRONOUS);

    (void)state;
    for (int i = 0; i < 1000; i++)
        crmpi_progress();
    assert_false(send->complete);
    wait_finish(irecv_int(&got, 0, 30));
    wait_finish(send);
    assert_int_equal(got, 9);
}

/* Fragments that name what they should not are ignored: the ids of the wire are looked up
 * in the PML's own table, never followed as addresses (a forged FRAG naming a made-up
 * request used to crash the rank). */
static void test_forged_fragments(void **state)
{
    static char payload[64];
    int got = -1, other = -1;
    crmpi_request_t *send = isend_int(11, 31, CRMPI_PML_SEND_SYNCHRONOUS);
    crmpi_request_t *recv_other = irecv_int(&other, 0, 32); /* nobody acknowledged it */
    const uint64_t forged[] = {0, 0xdeadbeef00000001ull, (uint64_t)(uintptr_t)send,
                               (uint64_t)(uintptr_t)recv_other, UINT64_MAX};

    (void)state;
    for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
        pml_ob1_ack_hdr_t ack = {.send_req = forged[i], .recv_req = forged[i], .offset = 0};
        pml_ob1_frag_hdr_t frag = {.recv_req = forged[i], .offset = 0};

        memcpy(payload, &frag, sizeof(frag));
        crmpi_btl_recv_table[PML_OB1_TAG_ACK](NULL, 0, &ack, sizeof(ack));
        crmpi_btl_recv_table[PML_OB1_TAG_FRAG](NULL, 0, payload, sizeof(payload));
        crmpi_btl_recv_table[PML_OB1_TAG_FRAG](NULL, 0, payload, 3); /* shorter than its header */
    }
    for (int i = 0; i < 1000; i++)
        crmpi_progress();
    assert_false(send->complete);
    assert_false(recv_other->complete);
    wait_finish(irecv_int(&got, 0, 31));
    wait_finish(send);
    assert_int_equal(got, 11);
    assert_int_equal(crmpi_pml_cancel(recv_other), CRMPI_OK);
    wait_finish(recv_other);
    assert_int_equal(other, -1);
}

/* Persistent requests restart with the same arguments. */
static void test_persistent(void **state)
{
    int out = 0, in = -1;
    crmpi_request_t *send, *recv;

    (void)state;
    assert_int_equal(
        crmpi_pml_isend_init(&out, 1, MPI_INT, 0, 50, CRMPI_PML_SEND_STANDARD, pml_comm, &send), 0);
    assert_int_equal(crmpi_pml_irecv_init(&in, 1, MPI_INT, 0, 50, pml_comm, &recv), 0);
    for (int round = 0; round < 3; round++) {
        out = 100 + round;
        assert_int_equal(crmpi_pml_start(recv), 0);
        assert_int_equal(crmpi_pml_start(send), 0);
        wait_finish(send);
        wait_finish(recv);
        assert_int_equal(in, 100 + round);
        assert_false(recv->active);
    }
    crmpi_pml_request_free(send);
    crmpi_pml_request_free(recv);
}

/* A message for a communicator this rank has not created yet waits for it: the sender's
 * communicator is deleted before the message arrives, as if only the sender had it. */
static void test_orphan_adopted(void **state)
{
    crmpi_pml_comm_t *sender = comm_add(9, MPI_COMM_NULL), *receiver;
    crmpi_request_t *send;
    int value = 31, got = -1;
    MPI_Status status;

    (void)state;
    assert_int_equal(
        crmpi_pml_isend(&value, 1, MPI_INT, 0, 2, CRMPI_PML_SEND_STANDARD, sender, &send), 0);
    wait_finish(send); /* eager: handed to the BTL, which delivers at the next progress */
    crmpi_pml_del_comm(sender);
    for (int i = 0; i < 10; i++)
        crmpi_progress();
    receiver = comm_add(9, MPI_COMM_NULL);
    assert_int_equal(crmpi_pml_recv(&got, 1, MPI_INT, 0, 2, receiver, &status), 0);
    assert_int_equal(got, 31);
    crmpi_pml_del_comm(receiver);
}

/*
 * An intercommunicator's PML communicator: sends name ranks of the remote group, and a
 * message carries the sender's rank in its local group, which receives match against.
 * Here this process is rank 2 of a local group of 3 and also every rank of a remote group
 * of 4 (the PML does not care that the groups overlap), so a send to remote rank 3 comes
 * back to it from source 2.
 */
static void test_intercomm_ranks(void **state)
{
    static const uint32_t local_world[3] = {7, 8, 0};
    static const uint32_t remote_world[4] = {0, 0, 0, 0};
    crmpi_pml_comm_params_t params = {
        .context_id = 14,
        .rank = 2,
        .size = 3,
        .world_ranks = local_world,
        .remote_size = 4,
        .remote_world_ranks = remote_world,
        .name = "test intercomm",
        .owner = MPI_COMM_NULL,
    };
    crmpi_pml_comm_t *inter = NULL;
    crmpi_request_t *send, *wrong_source, *recv;
    int out = 41, got = -1, stray = -1, flag = 0;
    MPI_Status status;

    (void)state;
    assert_int_equal(crmpi_pml_add_comm(&params, &inter), CRMPI_OK);
    /* A receive from remote rank 3 does not take a message from remote rank 2. */
    assert_int_equal(crmpi_pml_irecv(&stray, 1, MPI_INT, 3, 1, inter, &wrong_source), 0);
    assert_int_equal(crmpi_pml_isend(&out, 1, MPI_INT, 3, 1, CRMPI_PML_SEND_STANDARD, inter, &send),
                     0);
    wait_finish(send);
    for (int i = 0; i < 10 && !flag; i++)
        crmpi_pml_iprobe(2, 1, inter, &flag, &status);
    assert_int_equal(flag, 1);
    assert_int_equal(status.MPI_SOURCE, 2);
    assert_false(wrong_source->complete);
    assert_int_equal(crmpi_pml_irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 1, inter, &recv), 0);
    status = wait_finish(recv);
    assert_int_equal(got, 41);
    assert_int_equal(status.MPI_SOURCE, 2);
    crmpi_pml_cancel(wrong_source);
    status = wait_finish(wrong_source);
    assert_int_equal(status._cancelled, 1);
    crmpi_pml_del_comm(inter);
}

/* The idle function's calls: the owners it was called with, in order. */
static MPI_Comm idle_owners[8];
static int idle_calls;

static void record_idle(MPI_Comm owner)
{
    assert_true(idle_calls < 8);
    idle_owners[idle_calls++] = owner;
}

/* A released communicator with live requests: the idle function runs once, when the last
 * is released, with the communicator's owner; its requests carry that owner. Requests of
 * another layer count as well. (MPI_Comm_free is not used here: the MPI layer's idle
 * function stays replaced.) */
static void test_release_waits_for_requests(void **state)
{
    static char marker; /* stands for an MPI communicator: only its address is used */
    MPI_Comm owner = (MPI_Comm)(void *)&marker;
    crmpi_pml_comm_t *pcomm = comm_add(12, owner);
    crmpi_request_t *recv, *send;
    int in = -1, out = 4;

    (void)state;
    crmpi_pml_set_comm_idle_fn(record_idle);
    idle_calls = 0;
    assert_true(crmpi_pml_comm_release(pcomm)); /* nothing live: it may go at once */

    assert_int_equal(crmpi_pml_irecv(&in, 1, MPI_INT, 0, 1, pcomm, &recv), 0);
    assert_ptr_equal(recv->owner, owner);
    assert_ptr_equal(crmpi_pml_comm_owner(pcomm), owner);
    assert_false(crmpi_pml_comm_release(pcomm));
    assert_int_equal(crmpi_pml_isend(&out, 1, MPI_INT, 0, 1, CRMPI_PML_SEND_STANDARD, pcomm, &send),
                     0);
    wait_finish(send);
    crmpi_pml_wait(recv);
    assert_int_equal(idle_calls, 0); /* complete is not released */
    crmpi_pml_request_finish(recv, NULL);
    assert_int_equal(in, 4);
    assert_int_equal(idle_calls, 1);
    assert_ptr_equal(idle_owners[0], owner);

    /* Another layer's request (a non-blocking collective) keeps it too; once called, the
     * function is not called again until the communicator is released again. */
    crmpi_pml_comm_request_started(pcomm);
    crmpi_pml_comm_request_ended(pcomm);
    assert_int_equal(idle_calls, 1);
    crmpi_pml_comm_request_started(pcomm);
    assert_false(crmpi_pml_comm_release(pcomm));
    crmpi_pml_comm_request_ended(pcomm);
    assert_int_equal(idle_calls, 2);

    /* A request freed before it completes is released when it completes. */
    assert_int_equal(crmpi_pml_irecv(&in, 1, MPI_INT, 0, 2, pcomm, &recv), 0);
    crmpi_pml_request_free(recv);
    assert_false(crmpi_pml_comm_release(pcomm));
    out = 6;
    assert_int_equal(crmpi_pml_isend(&out, 1, MPI_INT, 0, 2, CRMPI_PML_SEND_STANDARD, pcomm, &send),
                     0);
    wait_finish(send);
    for (int i = 0; i < 10 && idle_calls < 3; i++)
        crmpi_progress();
    assert_int_equal(idle_calls, 3);
    assert_int_equal(in, 6);
    assert_true(crmpi_pml_comm_release(pcomm));
    crmpi_pml_del_comm(pcomm);
    crmpi_pml_set_comm_idle_fn(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_kept),
        cmocka_unit_test(test_posting_order_decides),
        cmocka_unit_test(test_tags_and_any_tag),
        cmocka_unit_test(test_unexpected_sizes),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_probe_and_matched_probe),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_cancel_send),
        cmocka_unit_test(test_cancel_early_arrival),
        cmocka_unit_test(test_synchronous_send),
        cmocka_unit_test(test_forged_fragments),
        cmocka_unit_test(test_persistent),
        cmocka_unit_test(test_orphan_adopted),
        cmocka_unit_test(test_intercomm_ranks),
        cmocka_unit_test(test_release_waits_for_requests),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
