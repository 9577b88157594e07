/*
 * test_pml_place.c: the ob1 PML's FRAG placer (btl.h, "Placement"), driven in a singleton
 * (one rank, the self BTL) by playing a BTL that places: a contiguous receive gets its
 * payload straight into its buffer, every header field is checked against the request
 * first, a truncated receive discards the excess, a vector of long blocks is scattered into
 * its blocks, a type of short runs is declined, and a
 * checkpoint's drain is not quiet while a placement runs.
 *
 * Its own program: the rendezvous are announced with sequence numbers no real send of this
 * rank used, which leaves this rank's self channel out of step for any later test.
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

static MPI_Status wait_finish(crmpi_request_t *req)
{
    MPI_Status status;

    crmpi_pml_wait(req);
    crmpi_pml_request_finish(req, &status);
    return status;
}

/*
 * Placement (btl.h): a BTL that writes a FRAG's payload into the receive's own buffer asks
 * the PML's FRAG placer where it goes. A rendezvous is announced to a posted receive as a
 * peer would (a RNDV fragment through the PML's receive callback, with the next sequence
 * number the bookmark says), so the receive acknowledges it and waits for FRAGs; the test
 * then plays the BTL. The ACK goes to this rank, which has no such send and ignores it.
 */
static crmpi_request_t *place_announce(void *buf, size_t count, MPI_Datatype type, int tag,
                                       uint64_t msg_len)
{
    crmpi_request_t *req;
    uint32_t sent, arrived;
    pml_ob1_rndv_hdr_t rndv = {.msg_len = msg_len, .send_req = 0x1234500000001ull};

    assert_int_equal(crmpi_pml_irecv(buf, count, type, 0, tag, pml_comm, &req), 0);
    crmpi_pml_cr_bookmark(0, &sent, &arrived);
    rndv.match = (pml_ob1_match_hdr_t){.ctx = 5, .src = 0, .tag = tag, .seq = arrived};
    crmpi_btl_recv_table[PML_OB1_TAG_RNDV](NULL, 0, &rndv, sizeof(rndv));
    assert_false(req->complete);
    assert_int_not_equal(req->wire_id, 0); /* acknowledged: it names itself to the sender */
    return req;
}

/* Ask the placer about a FRAG of `nbytes` at `offset` for `req` from `peer`. */
static bool place_ask(crmpi_request_t *req, uint32_t peer, uint64_t offset, size_t nbytes,
                      crmpi_btl_place_t *place)
{
    pml_ob1_frag_hdr_t frag = {.recv_req = req->wire_id, .offset = offset};
    const crmpi_btl_placer_t *placer = &crmpi_btl_place_table[PML_OB1_TAG_FRAG];

    assert_int_equal(placer->hdr_len, sizeof(frag));
    return placer->place(NULL, peer, &frag, nbytes, place);
}

/* The BTL's side of an accepted placement: write the stream bytes [pos, pos + len). */
static void place_write(const crmpi_btl_place_t *place, size_t pos, int status)
{
    for (int i = 0; i < place->iovcnt; i++) {
        for (size_t b = 0; b < place->iov[i].iov_len; b++)
            ((uint8_t *)place->iov[i].iov_base)[b] = (uint8_t)(pos++ * 7);
    }
    crmpi_btl_place_table[PML_OB1_TAG_FRAG].placed(NULL, 0, place->cookie, status);
}

/* A contiguous receive: the payload goes straight into its buffer, in order; every field of
 * the header is checked against the request first (a FRAG of another offset or length, of
 * another peer, or one that comes while a placement runs, is declined, never placed); a
 * placement that failed leaves the receive waiting for the same bytes. */
static void test_place_contiguous(void **state)
{
    enum { LEN = 300000, HALF = LEN / 2 };
    uint8_t *buf = malloc(LEN);
    crmpi_btl_place_t place, other;
    crmpi_request_t *req;
    MPI_Status status;

    (void)state;
    memset(buf, 0, LEN);
    req = place_announce(buf, LEN, MPI_BYTE, 60, LEN);
    assert_false(place_ask(req, 0, 1, HALF, &place));    /* not where its data goes next */
    assert_false(place_ask(req, 0, 0, LEN + 1, &place)); /* longer than what is left */
    assert_false(place_ask(req, 1, 0, HALF, &place));    /* another rank's id */
    assert_true(place_ask(req, 0, 0, HALF, &place));
    assert_int_equal(place.iovcnt, 1);
    assert_ptr_equal(place.iov[0].iov_base, buf); /* the receive's own buffer */
    assert_int_equal(place.iov[0].iov_len, HALF);
    assert_int_equal(place.discard, 0);
    assert_false(place_ask(req, 0, 0, HALF, &other)); /* one placement at a time */
    place_write(&place, 0, CRMPI_ERR_UNREACH);        /* the connection died */
    assert_false(req->complete);
    assert_true(place_ask(req, 0, 0, HALF, &place)); /* the same bytes again */
    place_write(&place, 0, CRMPI_OK);
    assert_false(req->complete);
    assert_true(place_ask(req, 0, HALF, LEN - HALF, &place));
    assert_ptr_equal(place.iov[0].iov_base, buf + HALF);
    /* A checkpoint's drain waits while a BTL still writes into the buffer (pml_ob1_cr.c). */
    assert_false(crmpi_pml_cr_quiet());
    place_write(&place, HALF, CRMPI_OK);
    assert_true(req->complete);
    assert_true(crmpi_pml_cr_quiet());
    status = wait_finish(req);
    assert_int_equal(status.MPI_ERROR, MPI_SUCCESS);
    assert_int_equal(status._nbytes, LEN);
    for (size_t i = 0; i < LEN; i++)
        assert_int_equal(buf[i], (uint8_t)(i * 7));
    free(buf);
}

/* A truncated receive: the placement stores up to the buffer's end and discards the rest;
 * the receive ends with MPI_ERR_TRUNCATE and nothing past its buffer is written. */
static void test_place_truncated(void **state)
{
    enum { BUF = 100000, MSG = 250000, FRAG = 120000 };
    uint8_t *buf = malloc(BUF + 64);
    crmpi_btl_place_t place;
    crmpi_request_t *req;
    MPI_Status status;
    size_t pos = 0;

    (void)state;
    memset(buf, 0xee, BUF + 64);
    req = place_announce(buf, BUF, MPI_BYTE, 61, MSG);
    while (pos < MSG) {
        size_t len = MSG - pos < FRAG ? MSG - pos : FRAG;
        size_t stored = pos >= BUF ? 0 : (BUF - pos < len ? BUF - pos : len);

        assert_true(place_ask(req, 0, pos, len, &place));
        assert_int_equal(place.iovcnt, stored ? 1 : 0);
        assert_int_equal(place.discard, len - stored);
        place_write(&place, pos, CRMPI_OK);
        pos += len;
    }
    assert_true(req->complete);
    status = wait_finish(req);
    assert_int_equal(status.MPI_ERROR, MPI_ERR_TRUNCATE);
    assert_int_equal(status._nbytes, BUF);
    for (size_t i = 0; i < BUF; i++)
        assert_int_equal(buf[i], (uint8_t)(i * 7));
    for (size_t i = BUF; i < BUF + 64; i++)
        assert_int_equal(buf[i], 0xee);
    free(buf);
}

/* A non-contiguous receive whose runs are long (a vector of 64 KiB blocks) is placed too:
 * each FRAG's payload scatters into the pieces of the blocks it covers, and the gaps
 * between the blocks are never written. */
static void test_place_vector(void **state)
{
    enum { BLOCKS = 8, BLOCK_INTS = 16384, FRAG = 100000 };
    const size_t total = (size_t)BLOCKS * BLOCK_INTS * sizeof(int);
    int *buf = calloc(2 * BLOCKS * BLOCK_INTS, sizeof(int));
    crmpi_btl_place_t place;
    crmpi_request_t *req;
    MPI_Datatype vec;
    int scattered = 0;

    (void)state;
    crmpi_unlock(); /* MPI calls take the library lock themselves */
    assert_int_equal(MPI_Type_vector(BLOCKS, BLOCK_INTS, 2 * BLOCK_INTS, MPI_INT, &vec),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&vec), MPI_SUCCESS);
    crmpi_lock();
    req = place_announce(buf, 1, vec, 63, total);
    for (size_t pos = 0; pos < total; pos += FRAG) {
        size_t len = total - pos < FRAG ? total - pos : FRAG;
        size_t covered = 0;

        assert_true(place_ask(req, 0, pos, len, &place));
        assert_int_equal(place.discard, 0);
        for (int i = 0; i < place.iovcnt; i++)
            covered += place.iov[i].iov_len;
        assert_int_equal(covered, len);
        scattered += place.iovcnt > 1;
        place_write(&place, pos, CRMPI_OK);
    }
    assert_true(scattered > 0);
    assert_true(req->complete);
    wait_finish(req);
    for (size_t b = 0; b < BLOCKS; b++) {
        const uint8_t *block = (const uint8_t *)&buf[2 * b * BLOCK_INTS];

        for (size_t i = 0; i < BLOCK_INTS * sizeof(int); i++)
            assert_int_equal(block[i], (uint8_t)((b * BLOCK_INTS * sizeof(int) + i) * 7));
        for (size_t i = 0; i < BLOCK_INTS; i++)
            assert_int_equal(buf[(2 * b + 1) * BLOCK_INTS + i], 0);
    }
    crmpi_unlock();
    MPI_Type_free(&vec);
    crmpi_lock();
    free(buf);
}

/* A non-contiguous receive with short runs is declined: its FRAGs come whole through the receive
 * callback and are unpacked, as without placement. */
static void test_place_noncontiguous_declined(void **state)
{
    enum { COUNT = 40000, FRAG = 70000 };
    MPI_Datatype vec;
    int *buf = calloc(2 * COUNT, sizeof(int));
    uint8_t *frag = malloc(sizeof(pml_ob1_frag_hdr_t) + FRAG);
    crmpi_btl_place_t place;
    crmpi_request_t *req;
    size_t total = COUNT * sizeof(int);

    (void)state;
    crmpi_unlock(); /* MPI calls take the library lock themselves */
    assert_int_equal(MPI_Type_vector(COUNT, 1, 2, MPI_INT, &vec), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&vec), MPI_SUCCESS);
    crmpi_lock();
    req = place_announce(buf, 1, vec, 62, total);
    for (size_t pos = 0; pos < total; pos += FRAG) {
        size_t len = total - pos < FRAG ? total - pos : FRAG;
        pml_ob1_frag_hdr_t hdr = {.recv_req = req->wire_id, .offset = pos};

        assert_false(place_ask(req, 0, pos, len, &place));
        memcpy(frag, &hdr, sizeof(hdr));
        for (size_t b = 0; b < len; b++)
            frag[sizeof(hdr) + b] = (uint8_t)((pos + b) * 7);
        crmpi_btl_recv_table[PML_OB1_TAG_FRAG](NULL, 0, frag, sizeof(hdr) + len);
    }
    assert_true(req->complete);
    wait_finish(req);
    for (size_t i = 0; i < COUNT; i++) {
        uint8_t *elem = (uint8_t *)&buf[2 * i];

        for (size_t b = 0; b < sizeof(int); b++)
            assert_int_equal(elem[b], (uint8_t)((i * sizeof(int) + b) * 7));
        assert_int_equal(buf[2 * i + 1], 0);
    }
    crmpi_unlock();
    MPI_Type_free(&vec);
    crmpi_lock();
    free(frag);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_place_contiguous),
        cmocka_unit_test(test_place_truncated),
        cmocka_unit_test(test_place_vector),
        cmocka_unit_test(test_place_noncontiguous_declined),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
