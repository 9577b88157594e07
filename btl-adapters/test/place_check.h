/*
 * place_check.h: the placement check (btl.h, "Placement") every BTL unit test whose module
 * places payloads runs: rank 0 sends a stream of large fragments of a tag with a placer,
 * rank 1's placer answers each in one of the ways the PML may (declined, one piece, three
 * pieces, a truncated receive that discards the tail), and every byte must end where the
 * placer said, exactly once, in order; a stream "with small" fragments has every fourth too
 * small to be placed, delivered whole in between.
 *
 * Usage, in each forked rank: crmpi_btl_test_place_register() before the module's init;
 * then rank 0 crmpi_btl_test_place_send() and rank 1 crmpi_btl_test_place_receive(). A
 * failed check prints why on stderr and exits the rank with 1.
 */
#ifndef CRMPI_BTL_TEST_PLACE_CHECK_H
#define CRMPI_BTL_TEST_PLACE_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "btl.h"

/* The tag with a placer (the tests' other fragments use other tags). */
#define CRMPI_BTL_TEST_PLACE_TAG 8
/* Fragments after the primer (fragment 0, always declined). */
#define CRMPI_BTL_TEST_PLACE_FRAGS 24

#define CRMPI_BTL_TEST_PLACE_MAGIC 0x91ace5edu

/* The header of every fragment of the tag: the offset says where its payload belongs. */
typedef struct crmpi_btl_test_place_hdr {
    uint32_t magic;  /* CRMPI_BTL_TEST_PLACE_MAGIC */
    uint32_t seq;    /* fragment number, from 0 (the primer) */
    uint64_t offset; /* stream offset of the payload's first byte */
    uint32_t kind;   /* CRMPI_BTL_TEST_PLACE_*: what rank 1's placer answers */
    uint32_t reserved;
} crmpi_btl_test_place_hdr_t;

enum {
    CRMPI_BTL_TEST_PLACE_DECLINE, /* the placer says no: the recv callback gets it whole */
    CRMPI_BTL_TEST_PLACE_WHOLE,   /* one iov over the destination */
    CRMPI_BTL_TEST_PLACE_SCATTER, /* three iov pieces, as for a strided type */
    CRMPI_BTL_TEST_PLACE_TRUNC,   /* the first half stored, the rest discarded */
};

/* What the receiving rank saw (crmpi_btl_test_place_end). */
typedef struct crmpi_btl_test_place_result {
    uint32_t placed;    /* placements that ended with CRMPI_OK */
    uint32_t delivered; /* fragments the recv callback got whole */
    uint32_t failed;    /* placements that ended with an error */
    bool pending;       /* a placement has not ended */
} crmpi_btl_test_place_result_t;

/** Register the tag's recv callback and placer (before the module's init). */
void crmpi_btl_test_place_register(void);

/** Rank 0: send the primer and the fragments to `ep` (progressing while the module is busy). */
void crmpi_btl_test_place_send(crmpi_btl_module_t *module, crmpi_btl_endpoint_t *ep,
                               bool with_small);

/**
 * Rank 1: progress until every fragment has arrived, placed or delivered; check that no
 * placement failed, that every large fragment after the primer was placed (`placing`) or
 * none was, and every byte of the destination (discarded tails: untouched).
 * @param with_small  as the sender's
 * @param placing     the module places towards this rank
 */
void crmpi_btl_test_place_receive(crmpi_btl_module_t *module, bool with_small, bool placing);

/** For checks of their own: a destination of `len` bytes for fragments from offset 0
 *  (crmpi_btl_test_place_end frees it). */
void crmpi_btl_test_place_begin(size_t len);
/** What arrived since crmpi_btl_test_place_begin; the destination is freed. */
void crmpi_btl_test_place_end(crmpi_btl_test_place_result_t *result_out);

#endif /* CRMPI_BTL_TEST_PLACE_CHECK_H */
