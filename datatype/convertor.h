/*
 * convertor.h: the datatype engine's typemap and the convertor, a cursor that packs a
 * (buffer, count, datatype) triple into a byte stream, or unpacks a stream into one, a
 * piece at a time (DESIGN section 3).
 *
 *      MPI calls (Type_*, Pack, Unpack)      PML (eager, rendezvous fragments)
 *                        \                     /
 *                      convertor  <------  BTL send (packs straight into its buffer)
 *                        |
 *                      typemap: the type's data as runs of contiguous bytes
 *
 * A datatype's data is described once, at construction, as an ordered list of runs
 * (`crmpi_dt_run_t`): byte displacement from the element's address, length, and the size of
 * the basic type the run is made of. Adjacent runs of the same basic size are merged, so a
 * contiguous type is one run and the pack of a contiguous buffer is one memcpy. The byte
 * stream of (buf, count, type) is the concatenation, for element e = 0..count-1, of the runs
 * of element e at buf + e * extent, in typemap order (MPI-3.1 section 4.1). crmpi never
 * converts representation: every rank of a job runs on the same architecture, so the
 * stream is the native bytes ("MPI_PACKED" data is this stream too).
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

#include "mpi.h"

/* One run of contiguous bytes inside one element of a datatype. */
typedef struct crmpi_dt_run {
    MPI_Aint disp;       /* bytes from the element's address to the run's first byte */
    size_t len;          /* bytes in the run (a multiple of basic_size) */
    uint32_t basic_size; /* size of the basic type the run is made of (MPI_Get_elements) */
} crmpi_dt_run_t;

/*
 * A datatype: predefined or derived. Handles (MPI_Datatype) point to this struct. The
 * fields below the line are the engine's; the MPI calls of datatype/ fill them.
 */
struct crmpi_datatype_s {
    char name[MPI_MAX_OBJECT_NAME]; /* MPI_Type_get_name; "MPI_INT" for the predefined */
    size_t size;                    /* bytes of data in one element (MPI_Type_size) */
    MPI_Aint lb;                    /* lower bound (MPI_Type_get_extent) */
    MPI_Aint extent;                /* distance between consecutive elements (ub - lb) */
    MPI_Aint true_lb;               /* lowest byte of data (MPI_Type_get_true_extent) */
    MPI_Aint true_extent;           /* span from the lowest to the highest byte of data */
    bool predefined;                /* a named type: never freed, always committed */
    bool committed;                 /* MPI_Type_commit was called; usable for communication */
    int refcount;                   /* handle + derived types and requests using it */
    int combiner;                   /* MPI_COMBINER_*, for MPI_Type_get_envelope */
    /* ---- engine ---- */
    crmpi_dt_run_t *runs; /* the typemap of one element as runs, in typemap order */
    size_t num_runs;      /* entries in runs; 0 for a type with no data */
    size_t basic_count;   /* basic elements in one element (MPI_Get_elements) */
    bool contiguous;      /* count elements at buf + true_lb are `count * size` bytes in a row */
    void *constructor;    /* datatype/'s record of how it was built (envelope, contents) */
    size_t run_len;       /* length of every run when all are equal (vectors), else 0 */
    bool runs_regular;    /* equal runs, evenly spaced: run r at runs[0].disp + r * run_stride */
    MPI_Aint run_stride;  /* that spacing when runs_regular (0 for one run; may be < 0) */
    size_t *run_starts;   /* stream offset of each run in an element; NULL if few or equal */
    uint32_t align;       /* strictest alignment of its basic types (MPI-3.1 section 4.1.6) */
    bool explicit_bounds; /* lb/ub are markers of MPI_Type_create_resized (section 4.1.7) */
};

/**
 * Take a reference on a datatype, so that it outlives the handle (a pending request whose
 * type the application frees, MPI-3.1 section 4.1.9). Predefined types are not counted.
 * Called with the library lock held.
 */
void crmpi_datatype_retain(struct crmpi_datatype_s *type);
/** Drop a reference; the last one frees a derived type. Lock held. */
void crmpi_datatype_release(struct crmpi_datatype_s *type);

/* A cursor over the byte stream of (buf, count, type). */
typedef struct crmpi_convertor {
    char *buf;                           /* the user buffer (as given; MPI_BOTTOM is 0) */
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

/**
 * Basic elements in the first `nbytes` of the stream of `type` (MPI_Get_elements): whole
 * elements contribute basic_count each, a partial one the basic elements its bytes cover.
 * @return the count, or -1 (MPI_UNDEFINED's role) when nbytes ends inside a basic element.
 */
MPI_Count crmpi_datatype_count_basic(const struct crmpi_datatype_s *type, size_t nbytes);

#endif /* CRMPI_CONVERTOR_H */
