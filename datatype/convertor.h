/*
 * convertor.h: the datatype engine's convertor, a cursor that packs a (buffer, count,
 * datatype) triple into its byte stream, or unpacks a stream into one, a piece at a time.
 * The datatype and its stream are described in datatype.h.
 *
 *      mpi/datatype/ (Pack, Unpack)      PML (eager, rendezvous fragments)
 *                        \                     /
 *                      convertor  <------  BTL send (packs straight into its buffer)
 *                        |
 *                      typemap: the type's data as runs of contiguous bytes (datatype.h)
 *
 * Lifecycle: crmpi_convertor_init -> pack/unpack (any number of times, any piece sizes,
 * each continuing where the last stopped) -> nothing to free (a convertor owns no memory;
 * the buffer and the datatype must outlive it).
 *
 * Threading: a convertor is used by one thread at a time (the library lock's holder).
 */
#ifndef CRMPI_CONVERTOR_H
#define CRMPI_CONVERTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "datatype.h"

/* A cursor over the byte stream of (buf, count, type). */
typedef struct crmpi_convertor {
    char *buf;                           /* the user buffer, as given (NULL is address 0) */
    const struct crmpi_datatype_s *type; /* its datatype; must outlive the convertor */
    size_t count;                        /* elements of `type` at buf */
    size_t total;                        /* bytes in the stream: count * type->size */
    size_t position;                     /* bytes of the stream done so far */
    size_t elem;                         /* element the cursor is in */
    size_t run;                          /* run of that element */
    size_t run_offset;                   /* bytes of that run already done */
} crmpi_convertor_t;

/** Start a cursor at stream position 0. `buf` is const for sends; unpack writes through it. */
void crmpi_convertor_init(crmpi_convertor_t *conv, const void *buf, size_t count,
                          const struct crmpi_datatype_s *type);

/**
 * Move the cursor to stream position `position` (<= total), forwards or backwards.
 * @return CRMPI_OK, or CRMPI_ERR_BAD_PARAM when position > total.
 */
int crmpi_convertor_set_position(crmpi_convertor_t *conv, size_t position);

/** The general case of crmpi_convertor_pack; call that one. */
size_t crmpi_convertor_pack_runs(crmpi_convertor_t *conv, void *dst, size_t max_bytes);
/** The general case of crmpi_convertor_unpack; call that one. */
size_t crmpi_convertor_unpack_runs(crmpi_convertor_t *conv, const void *src, size_t nbytes);

/**
 * Copy the next min(max_bytes, total - position) bytes of the stream to dst and advance.
 * @return the bytes copied.
 */
static inline size_t crmpi_convertor_pack(crmpi_convertor_t *conv, void *dst, size_t max_bytes)
{
    if (conv->type->contiguous) {
        size_t left = conv->total - conv->position;
        size_t n = max_bytes < left ? max_bytes : left;

        memcpy(dst, conv->buf + conv->type->true_lb + conv->position, n);
        conv->position += n;
        return n;
    }
    return crmpi_convertor_pack_runs(conv, dst, max_bytes);
}

/**
 * Store the next min(nbytes, total - position) bytes of the stream from src into the
 * buffer and advance. Bytes past the end are not stored (the caller detects truncation
 * by comparing with `total`).
 * @return the bytes stored.
 */
static inline size_t crmpi_convertor_unpack(crmpi_convertor_t *conv, const void *src, size_t nbytes)
{
    if (conv->type->contiguous) {
        size_t left = conv->total - conv->position;
        size_t n = nbytes < left ? nbytes : left;

        memcpy(conv->buf + conv->type->true_lb + conv->position, src, n);
        conv->position += n;
        return n;
    }
    return crmpi_convertor_unpack_runs(conv, src, nbytes);
}

/**
 * Where the stream lives in memory when it is one contiguous span (contiguous type), so a
 * transport can read or write it in place; NULL otherwise.
 */
static inline void *crmpi_convertor_contiguous_ptr(const crmpi_convertor_t *conv)
{
    return conv->type->contiguous ? conv->buf + conv->type->true_lb : NULL;
}

#endif /* CRMPI_CONVERTOR_H */
