/*
 * test_crcp_bkmrk.c: the local half of the bookmark exchange and the drain (crcp.h), in a
 * singleton over the self BTL, where the rank is its own only peer. MPI_Init brings the
 * layers up; the messages go over a PML communicator of the test's own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "crcp.h"
#include "crmpi_status.h"
#include "pml.h"
#include "progress.h"

/* One rank, with a context id MPI_Init's communicators (0 and 1) do not take. */
static crmpi_pml_comm_t *pml_comm;

static int setup(void **state)
{
    static const uint32_t self_world_rank[1] = {0};
    crmpi_pml_comm_params_t params = {
        .context_id = 5,
        .rank = 0,
        .size = 1,
        .world_ranks = self_world_rank,
        .name = "test comm",
        .owner = MPI_COMM_NULL,
    };
    int provided;

    (void)state;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return -1;
    crmpi_lock();
    return crmpi_pml_add_comm(&params, &pml_comm) == CRMPI_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    crmpi_pml_del_comm(pml_comm);
    crmpi_unlock();
    return MPI_Finalize() == MPI_SUCCESS ? 0 : -1;
}

/* Nothing sent yet: no bookmark, and the drain of nothing ends at once. */
static void test_no_traffic(void **state)
{
    crmpi_snapc_bookmark_t *marks;
    size_t count;

    (void)state;
    assert_int_equal(crmpi_crcp_bookmarks(&marks, &count), CRMPI_OK);
    assert_int_equal(count, 0);
    assert_int_equal(crmpi_crcp_drain(marks, count, 1000, NULL, NULL), CRMPI_OK);
    crmpi_crcp_release();
    free(marks);
}

/* Eager and rendezvous messages in flight: the bookmark counts them, the drain ends with
 * the rendezvous sender complete, and every message is received afterwards, in order. */
static void test_drain_counts_and_completes(void **state)
{
    enum { BIG = 1 << 20 };
    char *big = malloc(BIG), *got_big = malloc(BIG);
    int small[2] = {10, 11}, got[2] = {0};
    crmpi_request_t *sends[3];
    crmpi_snapc_bookmark_t *marks;
    size_t count;

    (void)state;
    memset(big, 0x5a, BIG);
    crmpi_pml_isend(&small[0], 1, MPI_INT, 0, 1, CRMPI_PML_SEND_STANDARD, pml_comm, &sends[0]);
    crmpi_pml_isend(big, BIG, MPI_BYTE, 0, 1, CRMPI_PML_SEND_STANDARD, pml_comm, &sends[1]);
    crmpi_pml_isend(&small[1], 1, MPI_INT, 0, 1, CRMPI_PML_SEND_STANDARD, pml_comm, &sends[2]);
    assert_int_equal(crmpi_crcp_bookmarks(&marks, &count), CRMPI_OK);
    assert_int_equal(count, 1);
    assert_int_equal(marks[0].peer, 0);
    assert_int_equal(marks[0].count, 3);
    assert_int_equal(crmpi_crcp_drain(marks, count, 10000, NULL, NULL), CRMPI_OK);
    assert_true(sends[1]->complete);
    assert_int_equal(crmpi_crcp_last_stats()->peers_sent, 1);
    assert_int_equal(crmpi_crcp_last_stats()->peers_expected, 1);
    assert_true(crmpi_crcp_last_stats()->bytes_pulled > 0);
    crmpi_crcp_release();
    free(marks);

    for (int i = 0; i < 3; i++) {
        crmpi_pml_wait(sends[i]);
        crmpi_pml_request_finish(sends[i], NULL);
    }
    crmpi_pml_recv(&got[0], 1, MPI_INT, 0, 1, pml_comm, NULL);
    crmpi_pml_recv(got_big, BIG, MPI_BYTE, 0, 1, pml_comm, NULL);
    crmpi_pml_recv(&got[1], 1, MPI_INT, 0, 1, pml_comm, NULL);
    assert_int_equal(got[0], 10);
    assert_int_equal(got[1], 11);
    assert_memory_equal(got_big, big, BIG);
    free(big);
    free(got_big);
}

/* A peer claims a message that never comes: the drain gives up at its timeout. */
static void test_missing_message_times_out(void **state)
{
    crmpi_snapc_bookmark_t *marks;
    size_t count;

    (void)state;
    assert_int_equal(crmpi_crcp_bookmarks(&marks, &count), CRMPI_OK);
    assert_int_equal(count, 1);
    marks[0].count++;
    assert_int_equal(crmpi_crcp_drain(marks, count, 200, NULL, NULL), CRMPI_ERR_TIMEOUT);
    crmpi_crcp_release();
    free(marks);
}

static int interrupt_at_once(void *arg)
{
    (*(int *)arg)++;
    return 1;
}

/* The coordinator aborts the checkpoint while messages are still missing: the drain stops
 * at once, without waiting for its timeout. */
static void test_interrupted_drain(void **state)
{
    crmpi_snapc_bookmark_t *marks;
    size_t count;
    int asked = 0;

    (void)state;
    assert_int_equal(crmpi_crcp_bookmarks(&marks, &count), CRMPI_OK);
    marks[0].count++;
    assert_int_equal(crmpi_crcp_drain(marks, count, -1, interrupt_at_once, &asked),
                     CRMPI_ERR_CKPT_ABORTED);
    assert_int_equal(asked, 1);
    crmpi_crcp_release();
    free(marks);
}

/* More arrived than the peer says it sent: bookmarks from different cuts, refused. */
static void test_bookmarks_from_another_cut_refused(void **state)
{
    crmpi_snapc_bookmark_t *marks;
    size_t count;

    (void)state;
    assert_int_equal(crmpi_crcp_bookmarks(&marks, &count), CRMPI_OK);
    marks[0].count--;
    assert_int_equal(crmpi_crcp_drain(marks, count, 1000, NULL, NULL), CRMPI_ERR_PROTO);
    crmpi_crcp_release();
    free(marks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_traffic),
        cmocka_unit_test(test_drain_counts_and_completes),
        cmocka_unit_test(test_missing_message_times_out),
        cmocka_unit_test(test_interrupted_drain),
        cmocka_unit_test(test_bookmarks_from_another_cut_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
