/*
 * place_check.c: the placement check shared by the BTL unit tests (place_check.h).
 */
#include "config.h"

#include "place_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convertor.h"
#include "crmpi_status.h"
#include "fake_rte.h"
#include "datatype.h"

#define PLACE_CHECK(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

typedef crmpi_btl_test_place_hdr_t place_hdr_t;

/* Rank 1's destination, and what arrived where. */
static uint8_t *place_dest;
static size_t place_dest_len;
static uint32_t place_next_seq;   /* next seq expected, placed or delivered */
static uint32_t place_placed;     /* placements that completed with CRMPI_OK */
static uint32_t place_delivered;  /* fragments the recv callback got */
static uint32_t place_failed;     /* placements that ended with an error */
static bool place_pending;        /* a placement is running */
static place_hdr_t place_current; /* the header of the running placement */

static uint8_t place_byte(uint64_t pos)
{
    return (uint8_t)(pos * 13 + 5 + (pos >> 11));
}

static bool place_fn(crmpi_btl_module_t *module, uint32_t peer_rank, const void *hdr,
                     size_t payload_len, crmpi_btl_place_t *place_out)
{
    place_hdr_t h;

    memcpy(&h, hdr, sizeof(h));
    PLACE_CHECK(h.magic == CRMPI_BTL_TEST_PLACE_MAGIC && h.seq == place_next_seq,
                "placer got seq %u, expected %u", h.seq, place_next_seq);
    PLACE_CHECK(payload_len >= CRMPI_BTL_PLACE_MIN, "placer asked for %zu bytes", payload_len);
    PLACE_CHECK(!place_pending, "%s", "placer called while a placement runs");
    PLACE_CHECK(h.offset + payload_len <= place_dest_len, "%s", "fragment past the destination");
    if (h.kind == CRMPI_BTL_TEST_PLACE_DECLINE)
        return false;
    place_out->iovcnt = 0;
    place_out->discard = 0;
    if (h.kind == CRMPI_BTL_TEST_PLACE_WHOLE) {
        place_out->iov[place_out->iovcnt++] =
            (struct iovec){.iov_base = place_dest + h.offset, .iov_len = payload_len};
    } else if (h.kind == CRMPI_BTL_TEST_PLACE_SCATTER) {
        size_t a = payload_len / 3;
        size_t b = payload_len / 3 + 1;

        place_out->iov[place_out->iovcnt++] =
            (struct iovec){.iov_base = place_dest + h.offset, .iov_len = a};
        place_out->iov[place_out->iovcnt++] =
            (struct iovec){.iov_base = place_dest + h.offset + a, .iov_len = b};
        place_out->iov[place_out->iovcnt++] = (struct iovec){
            .iov_base = place_dest + h.offset + a + b, .iov_len = payload_len - a - b};
    } else {
        place_out->iov[place_out->iovcnt++] =
            (struct iovec){.iov_base = place_dest + h.offset, .iov_len = payload_len / 2};
        place_out->discard = payload_len - payload_len / 2;
    }
    place_out->cookie = &place_current;
    place_current = h;
    place_pending = true;
    return true;
}

static void placed_fn(crmpi_btl_module_t *module, uint32_t peer_rank, void *cookie, int status)
{
    PLACE_CHECK(place_pending && cookie == &place_current, "%s", "placed() without a placement");
    place_pending = false;
    if (status != CRMPI_OK) {
        place_failed++;
        return;
    }
    place_placed++;
    place_next_seq++;
}

static void place_on_recv(crmpi_btl_module_t *module, uint32_t peer_rank, const void *data,
                          size_t len)
{
    place_hdr_t h;

    PLACE_CHECK(len >= sizeof(h), "fragment of %zu bytes", len);
    memcpy(&h, data, sizeof(h));
    PLACE_CHECK(h.magic == CRMPI_BTL_TEST_PLACE_MAGIC && h.seq == place_next_seq,
                "recv got seq %u, expected %u", h.seq, place_next_seq);
    PLACE_CHECK(h.offset + len - sizeof(h) <= place_dest_len, "%s",
                "fragment past the destination");
    memcpy(place_dest + h.offset, (const char *)data + sizeof(h), len - sizeof(h));
    place_delivered++;
    place_next_seq++;
}

/* The stream has fragments too small to be placed among the others (crmpi_btl_test_place_send). */
static bool place_with_small;

/* Is fragment `seq` one too small to be placed? Every fourth, in a stream with them. */
static bool place_frag_small(uint32_t seq)
{
    return place_with_small && seq % 4 == 3;
}

/* The payload length and kind of fragment `seq` (0 is the primer). */
static size_t place_frag_len(uint32_t seq, size_t max_payload, uint32_t *kind_out)
{
    static const size_t lens[] = {CRMPI_BTL_PLACE_MIN, 100000, 0, CRMPI_BTL_PLACE_MIN + 1, 77777};
    size_t len;

    *kind_out = seq == 0 ? CRMPI_BTL_TEST_PLACE_DECLINE : 1 + seq % 3;
    /* The primer is longer than an eager message (a stream module then reads each next
     * header alone). */
    if (seq == 0)
        return max_payload;
    if (place_frag_small(seq))
        return 100 + seq;
    len = lens[seq % 5] ? lens[seq % 5] : max_payload;
    return len < max_payload ? len : max_payload;
}

/* Bytes of the whole stream. */
static size_t place_total(size_t max_payload)
{
    size_t total = 0;
    uint32_t kind;

    for (uint32_t seq = 0; seq <= CRMPI_BTL_TEST_PLACE_FRAGS; seq++)
        total += place_frag_len(seq, max_payload, &kind);
    return total;
}

void crmpi_btl_test_place_register(void)
{
    PLACE_CHECK(crmpi_btl_register_recv(CRMPI_BTL_TEST_PLACE_TAG, place_on_recv) == CRMPI_OK, "%s",
                "register recv");
    PLACE_CHECK(crmpi_btl_register_place(CRMPI_BTL_TEST_PLACE_TAG, sizeof(place_hdr_t), place_fn,
                                         placed_fn) == CRMPI_OK,
                "%s", "register place");
}

void crmpi_btl_test_place_send(crmpi_btl_module_t *module, crmpi_btl_endpoint_t *ep,
                               bool with_small)
{
    const size_t max_payload = module->max_send_size - sizeof(place_hdr_t);
    uint8_t *src;
    size_t offset = 0;

    place_with_small = with_small;
    src = malloc(place_total(max_payload));

    PLACE_CHECK(src != NULL, "%s", "malloc");
    for (size_t i = 0; i < place_total(max_payload); i++)
        src[i] = place_byte(i);
    for (uint32_t seq = 0; seq <= CRMPI_BTL_TEST_PLACE_FRAGS; seq++) {
        uint32_t kind;
        size_t len = place_frag_len(seq, max_payload, &kind);
        place_hdr_t h = {
            .magic = CRMPI_BTL_TEST_PLACE_MAGIC, .seq = seq, .offset = offset, .kind = kind};
        crmpi_convertor_t conv;
        int rc;

        crmpi_convertor_init(&conv, src + offset, len, &crmpi_btl_test_byte_type);
        while ((rc = module->send(module, ep, CRMPI_BTL_TEST_PLACE_TAG, &h, sizeof(h), &conv,
                                  len)) == CRMPI_ERR_RESOURCE_BUSY)
            module->progress(module);
        PLACE_CHECK(rc == CRMPI_OK, "send: %s", crmpi_strerror(rc));
        offset += len;
    }
    free(src);
}

void crmpi_btl_test_place_begin(size_t len)
{
    place_dest_len = len;
    place_dest = malloc(len);
    PLACE_CHECK(place_dest != NULL, "%s", "malloc");
    /* What a discarded tail would have overwritten must stay as it was. */
    memset(place_dest, 0xee, len);
}

void crmpi_btl_test_place_end(crmpi_btl_test_place_result_t *result_out)
{
    free(place_dest);
    place_dest = NULL;
    *result_out = (crmpi_btl_test_place_result_t){.placed = place_placed,
                                                  .delivered = place_delivered,
                                                  .failed = place_failed,
                                                  .pending = place_pending};
}

void crmpi_btl_test_place_receive(crmpi_btl_module_t *module, bool with_small, bool placing)
{
    crmpi_btl_test_place_result_t result;
    const size_t max_payload = module->max_send_size - sizeof(place_hdr_t);
    uint32_t expect_placed = 0;

    place_with_small = with_small;
    crmpi_btl_test_place_begin(place_total(max_payload));
    while (place_next_seq <= CRMPI_BTL_TEST_PLACE_FRAGS && !place_failed)
        module->progress(module);
    PLACE_CHECK(place_failed == 0 && !place_pending, "%u placements failed", place_failed);
    for (size_t off = 0, seq = 0; seq <= CRMPI_BTL_TEST_PLACE_FRAGS; seq++) {
        uint32_t kind;
        size_t len = place_frag_len((uint32_t)seq, max_payload, &kind);
        bool placed = placing && seq > 0 && !place_frag_small((uint32_t)seq);
        size_t stored = placed && kind == CRMPI_BTL_TEST_PLACE_TRUNC ? len / 2 : len;

        expect_placed += placed;

        for (size_t i = 0; i < len; i++) {
            uint8_t want = i < stored ? place_byte(off + i) : 0xee;

            PLACE_CHECK(place_dest[off + i] == want, "fragment %zu byte %zu: %#x, want %#x", seq, i,
                        place_dest[off + i], want);
        }
        off += len;
    }
    PLACE_CHECK(place_placed == expect_placed &&
                    place_delivered == CRMPI_BTL_TEST_PLACE_FRAGS + 1 - expect_placed,
                "%u placed, %u delivered whole: expected %u placed", place_placed, place_delivered,
                expect_placed);
    crmpi_btl_test_place_end(&result);
}
