/*
 * test_pml_cr.c: what ob1 does for a checkpoint (pml.h, "Checkpoint/restart"), driven in a
 * singleton over the self BTL: rendezvous messages without a receive are pulled whole so
 * their senders complete, and later receives and matched probes still get them, in order;
 * new sends are held and unnumbered until the quiesce ends; sequence numbers reset.
 *
 * MPI_Init brings the PML up; the tests use communicators of their own, made with
 * crmpi_pml_add_comm. The PML runs with the library lock held, as the C/R thread holds it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "pml.h"
#include "progress.h"

#include "pml_test_comm.h"

enum { BIG = 1 << 20 }; /* far above any eager limit: a rendezvous */

static char *pattern(size_t nbytes, unsigned seed)
{
    char *buf = malloc(nbytes);

    assert_non_null(buf);
    for (size_t i = 0; i < nbytes; i++)
        buf[i] = (char)(i * 31 + seed);
    return buf;
}

/* The drain loop of crcp, for one rank talking to itself. */
static void drain_self(void)
{
    uint32_t sent, arrived;
    int turns = 0;

    do {
        crmpi_progress();
        crmpi_pml_cr_bookmark(0, &sent, &arrived);
        assert_true(++turns < 1000000);
    } while (sent != arrived || !crmpi_pml_cr_quiet());
}

static MPI_Status wait_finish(crmpi_request_t *req)
{
    MPI_Status status;

    crmpi_pml_wait(req);
    crmpi_pml_request_finish(req, &status);
    return status;
}

/* A rendezvous send whose receive is not posted completes during the drain; the receive
 * posted afterwards gets every byte; the statistics count the pull. */
static void test_unexpected_rendezvous_pulled(void **state)
{
    char *data = pattern(BIG, 1), *got = calloc(1, BIG);
    crmpi_request_t *send;
    MPI_Status status;

    (void)state;
    assert_int_equal(
        crmpi_pml_isend(data, BIG, MPI_BYTE, 0, 5, CRMPI_PML_SEND_STANDARD, pml_comm, &send), 0);
    for (int i = 0; i < 10; i++)
        crmpi_progress();
    assert_false(send->complete); /* waits for the receive's ACK */
    assert_false(crmpi_pml_cr_quiet());

    crmpi_pml_cr_quiesce_begin();
    drain_self();
    assert_true(send->complete);
    assert_int_equal(crmpi_pml_cr_stats()->pulled_messages, 1);
    assert_true(crmpi_pml_cr_stats()->pulled_bytes > 0);
    crmpi_pml_cr_quiesce_end();

    wait_finish(send);
    assert_int_equal(crmpi_pml_recv(got, BIG, MPI_BYTE, 0, 5, pml_comm, &status), 0);
    assert_int_equal(status._nbytes, BIG);
    assert_memory_equal(got, data, BIG);
    free(data);
    free(got);
}

/* A synchronous send completes once drained, before its receive is posted: the one
 * corner of MPI semantics a checkpoint changes (crcp.h). */
static void test_synchronous_send_completes_when_drained(void **state)
{
    int value = 77, got = 0;
    crmpi_request_t *send;

    (void)state;
    assert_int_equal(
        crmpi_pml_isend(&value, 1, MPI_INT, 0, 6, CRMPI_PML_SEND_SYNCHRONOUS, pml_comm, &send), 0);
    crmpi_pml_cr_quiesce_begin();
    drain_self();
    assert_true(send->complete);
    crmpi_pml_cr_quiesce_end();
    wait_finish(send);
    assert_int_equal(crmpi_pml_recv(&got, 1, MPI_INT, 0, 6, pml_comm, NULL), 0);
    assert_int_equal(got, 77);
}

/* A message taken by a matched probe before the checkpoint is pulled and still received
 * through its MPI_Message. */
static void test_matched_probe_pulled(void **state)
{
    char *data = pattern(BIG, 2), *got = calloc(1, BIG);
    struct crmpi_message_s *message = NULL;
    crmpi_request_t *send, *recv;
    MPI_Status status;
    int flag = 0;

    (void)state;
    assert_int_equal(
        crmpi_pml_isend(data, BIG, MPI_BYTE, 0, 7, CRMPI_PML_SEND_STANDARD, pml_comm, &send), 0);
    while (!flag)
        assert_int_equal(crmpi_pml_improbe(0, 7, pml_comm, &flag, &message, &status), 0);
    crmpi_pml_cr_quiesce_begin();
    drain_self();
    assert_true(send->complete);
    crmpi_pml_cr_quiesce_end();
    wait_finish(send);
    assert_int_equal(crmpi_pml_imrecv(got, BIG, MPI_BYTE, message, &recv), 0);
    status = wait_finish(recv);
    assert_int_equal(status._nbytes, BIG);
    assert_memory_equal(got, data, BIG);
    free(data);
    free(got);
}

/* A receive posted while its message is being pulled (as a non-blocking collective's next
 * step is, progressed by the C/R thread during the drain) gets the whole message once the
 * pull has it. It used to take the pulled buffer at once, with most of its bytes not there
 * yet, and free it under the pull, which went on writing into freed memory. */
static void test_receive_while_pulled(void **state)
{
    char *data = pattern(BIG, 3), *got = calloc(1, BIG);
    crmpi_request_t *send, *recv;
    MPI_Status status;

    (void)state;
    assert_int_equal(
        crmpi_pml_isend(data, BIG, MPI_BYTE, 0, 8, CRMPI_PML_SEND_STANDARD, pml_comm, &send), 0);
    crmpi_progress();
    crmpi_pml_cr_quiesce_begin(); /* the pull's ACK is sent; its fragments are to come */
    assert_false(send->complete);
    assert_int_equal(crmpi_pml_irecv(got, BIG, MPI_BYTE, 0, 8, pml_comm, &recv), 0);
    assert_false(recv->complete);
    drain_self();
    assert_true(send->complete);
    assert_true(recv->complete);
    crmpi_pml_cr_quiesce_end();
    wait_finish(send);
    status = wait_finish(recv);
    assert_int_equal(status._nbytes, BIG);
    assert_memory_equal(got, data, BIG);
    free(data);
    free(got);
}

/* A communicator freed while one of its messages is being pulled: the pull ends into its
 * own buffer (1 MiB: a mapping of its own, so a write after its free would fault), then
 * the message goes. */
static void test_comm_freed_while_pulled(void **state)
{
    char *data = pattern(BIG, 4);
    crmpi_pml_comm_t *pcomm = comm_add(9, MPI_COMM_NULL);
    crmpi_request_t *send;

    (void)state;
    assert_int_equal(
        crmpi_pml_isend(data, BIG, MPI_BYTE, 0, 9, CRMPI_PML_SEND_STANDARD, pcomm, &send), 0);
    crmpi_progress();
    crmpi_pml_cr_quiesce_begin();
    assert_false(send->complete);
    crmpi_pml_del_comm(pcomm);
    drain_self();
    crmpi_pml_cr_quiesce_end();
    wait_finish(send);
    free(data);
}

/* Sends posted while quiescing take no sequence number and move nothing; afterwards they
 * go, after every message sent before, so order is kept. A receive posted before the
 * checkpoint keeps its place. */
static void test_sends_held_in_order(void **state)
{
    char *big = pattern(BIG, 3), *got_big = calloc(1, BIG);
    int before = 1, during[3] = {2, 3, 4}, got[4] = {0};
    crmpi_request_t *send_before, *send_big, *held[3], *posted;
    uint32_t sent, arrived, sent_during, arrived_during;
    int flag = 1;

    (void)state;
    assert_int_equal(crmpi_pml_irecv(&got[0], 1, MPI_INT, 0, 8, pml_comm, &posted), 0);
    assert_int_equal(
        crmpi_pml_isend(&before, 1, MPI_INT, 0, 8, CRMPI_PML_SEND_STANDARD, pml_comm, &send_before),
        0);
    assert_int_equal(
        crmpi_pml_isend(big, BIG, MPI_BYTE, 0, 8, CRMPI_PML_SEND_STANDARD, pml_comm, &send_big), 0);
    crmpi_pml_cr_quiesce_begin();
    crmpi_pml_cr_bookmark(0, &sent, &arrived);
    for (int i = 0; i < 3; i++)
        assert_int_equal(crmpi_pml_isend(&during[i], 1, MPI_INT, 0, 8, CRMPI_PML_SEND_STANDARD,
                                         pml_comm, &held[i]),
                         0);
    drain_self();
    crmpi_pml_cr_bookmark(0, &sent_during, &arrived_during);
    assert_int_equal(sent_during, sent); /* the held sends are not numbered */
    for (int i = 0; i < 3; i++)
        assert_false(held[i]->complete);
    assert_true(posted->complete); /* matched as usual, before the drain ended */
    assert_int_equal(got[0], 1);
    assert_int_equal(crmpi_pml_iprobe(0, 9, pml_comm, &flag, NULL), 0);
    assert_false(flag);
    crmpi_pml_cr_quiesce_end();
    assert_int_equal(crmpi_pml_cr_stats()->held_sends, 3);

    wait_finish(posted);
    wait_finish(send_before);
    wait_finish(send_big);
    assert_int_equal(crmpi_pml_recv(got_big, BIG, MPI_BYTE, 0, 8, pml_comm, NULL), 0);
    assert_memory_equal(got_big, big, BIG);
    for (int i = 1; i < 4; i++)
        assert_int_equal(crmpi_pml_recv(&got[i], 1, MPI_INT, 0, 8, pml_comm, NULL), 0);
    for (int i = 0; i < 3; i++)
        wait_finish(held[i]);
    assert_int_equal(got[1], 2);
    assert_int_equal(got[2], 3);
    assert_int_equal(got[3], 4);
    free(big);
    free(got_big);
}

/* A rendezvous message for a communicator not created yet is pulled too, and received
 * once the communicator exists. The sender's communicator is deleted while its send is
 * still waiting for the receiver, as if only the sender had it: the send finishes all the
 * same. */
static void test_orphan_pulled(void **state)
{
    crmpi_pml_comm_t *sender = comm_add(11, MPI_COMM_NULL), *receiver;
    char *data = pattern(BIG, 4), *got = calloc(1, BIG);
    crmpi_request_t *send;

    (void)state;
    assert_int_equal(
        crmpi_pml_isend(data, BIG, MPI_BYTE, 0, 2, CRMPI_PML_SEND_STANDARD, sender, &send), 0);
    crmpi_pml_del_comm(sender);
    for (int i = 0; i < 10; i++)
        crmpi_progress();
    crmpi_pml_cr_quiesce_begin();
    drain_self();
    assert_true(send->complete);
    crmpi_pml_cr_quiesce_end();
    wait_finish(send);
    receiver = comm_add(11, MPI_COMM_NULL);
    assert_int_equal(crmpi_pml_recv(got, BIG, MPI_BYTE, 0, 2, receiver, NULL), 0);
    assert_memory_equal(got, data, BIG);
    crmpi_pml_del_comm(receiver);
    free(data);
    free(got);
}

/* After a restart every rank numbers from 0 again, and messages still flow. */
static void test_sequences_reset(void **state)
{
    uint32_t sent, arrived;
    int value = 5, got = 0;

    (void)state;
    crmpi_pml_cr_bookmark(0, &sent, &arrived);
    assert_true(sent > 0);
    crmpi_pml_cr_quiesce_begin();
    drain_self();
    assert_int_equal(crmpi_pml_cr_reset_sequences(), 0);
    crmpi_pml_cr_quiesce_end();
    crmpi_pml_cr_bookmark(0, &sent, &arrived);
    assert_int_equal(sent, 0);
    assert_int_equal(arrived, 0);
    assert_int_equal(crmpi_pml_send(&value, 1, MPI_INT, 0, 3, CRMPI_PML_SEND_STANDARD, pml_comm),
                     0);
    assert_int_equal(crmpi_pml_recv(&got, 1, MPI_INT, 0, 3, pml_comm, NULL), 0);
    assert_int_equal(got, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unexpected_rendezvous_pulled),
        cmocka_unit_test(test_synchronous_send_completes_when_drained),
        cmocka_unit_test(test_matched_probe_pulled),
        cmocka_unit_test(test_receive_while_pulled),
        cmocka_unit_test(test_comm_freed_while_pulled),
        cmocka_unit_test(test_sends_held_in_order),
        cmocka_unit_test(test_orphan_pulled),
        cmocka_unit_test(test_sequences_reset),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
