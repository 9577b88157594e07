/*
 * datatype.h: the datatype engine's contract. A datatype is the layout of one element in
 * memory, stored as runs of contiguous bytes; the convertor (convertor.h) moves data of
 * any type between memory and a byte stream.
 *
 *     mpi/datatype/ (MPI_Type_*, MPI_Pack...)     pml/, coll/ (messages, reductions)
 *        builds types, answers MPI's questions      retain types, pack and unpack
 *                      \                             /          btl-adapters/ (pack
 *                       datatype engine: datatype.h, convertor.h  <--  into their buffers)
 *                                      |
 *                       runtime/ (status codes); nothing above it
 *
 * The engine knows no MPI: displacements and extents are ptrdiff_t (MPI_Aint is ptrdiff_t,
 * mpi.h), sizes and counts size_t, errors CRMPI_ statuses (crmpi_status.h). mpi.h names
 * `struct crmpi_datatype_s` as the object behind MPI_Datatype; the MPI layer maps the
 * statuses to MPI error classes and raises them.
 *
 * A type's data is described once, at construction, as an ordered list of runs
 * (`crmpi_dt_run_t`): byte displacement from the element's address, length, and the size of
 * the basic type the run is made of. The byte stream of (buf, count, type) is the
 * concatenation, for element e = 0..count-1, of the runs of element e at buf + e * extent,
 * in typemap order (MPI-3.1 section 4.1). Every rank of a job runs on one architecture, so
 * the stream is the native bytes and nothing is converted.
 *
 * Lifecycle of a derived type:
 *   crmpi_datatype_typemap_init(&map)             an empty typemap
 *   [crmpi_datatype_typemap_keep_args(&map, ...)] the constructor's arguments, for the maker
 *   crmpi_datatype_typemap_append(&map, ...)      copies of old types, any number of times
 *   [crmpi_datatype_typemap_set_bounds(&map, ...)] explicit lb and extent (resized)
 *   crmpi_datatype_typemap_finish(&map, &type)    the type, holding one reference
 *   crmpi_datatype_retain / crmpi_datatype_release ... the last release frees it.
 * Predefined types are static objects (CRMPI_DATATYPE_STATIC_BASIC, ..._PAIR), never
 * counted, never freed.
 *
 * Threading: the engine has no lock. Building a type, the reference counts and the fields
 * the maker writes (name, committed) are serialized by the caller (libmpi's library lock);
 * a finished type's layout is never written again, so convertors on it may run anywhere.
 */
#ifndef CRMPI_DATATYPE_H
#define CRMPI_DATATYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * An array of counts or displacements as an MPI call's caller passed it: int elements from
 * the MPI-3.1 calls, MPI_Count (long long) ones from the MPI-4.0 large-count ("_c") calls,
 * MPI_Aint (ptrdiff_t) ones where either form takes addresses. It is read where it lies,
 * never converted into a copy: the collectives read the application's arrays through it
 * for as long as MPI keeps them valid (a non-blocking or persistent collective's whole
 * life), and the datatype constructors serve the int and "_c" forms with one body.
 */
typedef enum {
    CRMPI_COUNT_ARRAY_INT,   /* const int[] */
    CRMPI_COUNT_ARRAY_COUNT, /* const MPI_Count[] */
    CRMPI_COUNT_ARRAY_AINT,  /* const MPI_Aint[] */
} crmpi_count_array_width_t;

typedef struct crmpi_count_array {
    const void *base;                /* the array; NULL when the caller gave none */
    crmpi_count_array_width_t width; /* its element type */
} crmpi_count_array_t;

/* No array (the call's count is one number). */
#define CRMPI_COUNT_ARRAY_NONE ((crmpi_count_array_t){NULL, CRMPI_COUNT_ARRAY_INT})

static inline crmpi_count_array_t crmpi_count_array_int(const int *base)
{
    return (crmpi_count_array_t){base, CRMPI_COUNT_ARRAY_INT};
}

static inline crmpi_count_array_t crmpi_count_array_count(const long long *base)
{
    return (crmpi_count_array_t){base, CRMPI_COUNT_ARRAY_COUNT};
}

static inline crmpi_count_array_t crmpi_count_array_aint(const ptrdiff_t *base)
{
    return (crmpi_count_array_t){base, CRMPI_COUNT_ARRAY_AINT};
}

/* Element i of a (which must have an array). */
static inline long long crmpi_count_array_at(crmpi_count_array_t a, size_t i)
{
    switch (a.width) {
    case CRMPI_COUNT_ARRAY_INT: return ((const int *)a.base)[i];
    case CRMPI_COUNT_ARRAY_COUNT: return ((const long long *)a.base)[i];
    default: return ((const ptrdiff_t *)a.base)[i];
    }
}

/* Element i of a, or `absent` when there is no array (the non-v collectives). */
static inline long long crmpi_count_array_or(crmpi_count_array_t a, size_t i, long long absent)
{
    return a.base ? crmpi_count_array_at(a, i) : absent;
}

/* Bytes of a type's name, with its NUL (MPI_MAX_OBJECT_NAME; the MPI layer checks). */
#define CRMPI_DATATYPE_NAME_MAX 64

/* Types with more runs than this get a run_starts index, for set_position's bisection. */
#define CRMPI_DATATYPE_INDEX_MIN_RUNS 16

/*
 * One run of contiguous bytes inside one element of a datatype. Its basic elements are all
 * of one basic type: `basic_kind` is the maker's code for what that type's bytes are (the
 * MPI layer converts them to another representation with it, MPI_Pack_external); the
 * engine only keeps runs of different kinds apart. 0 is "unspecified".
 */
typedef struct crmpi_dt_run {
    ptrdiff_t disp;      /* bytes from the element's address to the run's first byte */
    size_t len;          /* bytes in the run (a multiple of basic_size) */
    uint32_t basic_size; /* size of the basic type the run is made of (count_basic) */
    uint16_t basic_kind; /* the maker's code of that basic type; runs merge only within one */
} crmpi_dt_run_t;

/*
 * The arguments of the constructor that made a type, kept for the type's maker (the MPI
 * layer answers MPI_Type_get_envelope and MPI_Type_get_contents from them). The engine
 * stores them and frees them with the type; of their content it reads only `types`, on
 * each of which the type holds a reference, so the maker can hand them out after the
 * application has freed its own handles. One allocation, the arrays after the struct.
 */
typedef struct crmpi_datatype_args {
    int constructor;                 /* the maker's code for the constructor; not read here */
    size_t num_ints;                 /* entries in ints */
    size_t num_disps;                /* entries in disps */
    size_t num_counts;               /* entries in counts (0 unless the maker asked for some) */
    size_t num_types;                /* entries in types */
    int *ints;                       /* integer arguments, as given; not read here */
    ptrdiff_t *disps;                /* byte displacements, strides, bounds; not read here */
    int64_t *counts;                 /* counts too large for ints (the maker's "large
                                        counts"); not read here */
    struct crmpi_datatype_s **types; /* the old types, in argument order; each referenced */
} crmpi_datatype_args_t;

/*
 * A datatype, predefined or derived (mpi.h: MPI_Datatype points to one). The first block
 * is the engine's: the layout, set when the type is made and never changed. The second is
 * the maker's: the engine sets it up (empty name, not committed) and never reads it.
 */
struct crmpi_datatype_s {
    size_t size;           /* bytes of data in one element */
    ptrdiff_t lb;          /* lower bound (MPI-3.1 sections 4.1.6, 4.1.7) */
    ptrdiff_t extent;      /* distance between consecutive elements (ub - lb); may be < 0 */
    ptrdiff_t true_lb;     /* lowest byte of data */
    ptrdiff_t true_extent; /* span from the lowest to the highest byte of data */
    bool predefined;       /* a static object: never counted, never freed */
    int refcount;          /* references: handles, derived types' args, pending requests */
    crmpi_dt_run_t *runs;  /* the typemap of one element as runs, in typemap order */
    size_t num_runs;       /* entries in runs; 0 for a type with no data */
    size_t basic_count;    /* basic elements in one element */
    bool contiguous;       /* count elements at buf + true_lb are `count * size` bytes in a row */
    size_t run_len;        /* length of every run when all are equal (vectors), else 0 */
    bool runs_regular;     /* equal runs, evenly spaced: run r at runs[0].disp + r * run_stride */
    ptrdiff_t run_stride;  /* that spacing when runs_regular (0 for one run; may be < 0) */
    size_t *run_starts;    /* stream offset of each run in an element; NULL if few or equal */
    uint32_t align;        /* strictest alignment of its basic types (MPI-3.1 section 4.1.6) */
    bool lb_marker;        /* lb is a marker (set_bounds, MPI_LB), not the data's */
    bool ub_marker;        /* ub is a marker (set_bounds, MPI_UB), not the data's */
    /* ---- the maker's, not read by the engine ---- */
    char name[CRMPI_DATATYPE_NAME_MAX]; /* a name for people (MPI_Type_get_name) */
    bool committed;                     /* usable for communication (MPI_Type_commit) */
    crmpi_datatype_args_t *args;        /* keep_args' record; NULL for predefined types */
    struct crmpi_type_attr_s *attrs;    /* the maker's attributes (MPI_Type_set_attr); the
                                           maker empties the list before the last release */
};

/*
 * A type being built: runs in typemap order and the bounds seen so far. Errors are sticky:
 * after the first failure (memory, or a displacement that overflows ptrdiff_t) every
 * further call does nothing, and finish returns that failure.
 */
typedef struct crmpi_datatype_typemap {
    crmpi_dt_run_t *runs;        /* runs so far, typemap order, adjacent merged */
    size_t num_runs;             /* entries used in runs */
    size_t capacity;             /* entries allocated in runs */
    size_t size;                 /* bytes of data so far */
    size_t basic_count;          /* basic elements so far */
    bool has_data;               /* some copy had data: true_lb/true_ub are set */
    ptrdiff_t true_lb;           /* lowest byte of data */
    ptrdiff_t true_ub;           /* one past the highest byte of data */
    bool has_natural_lb;         /* a copy with data and without an lb marker was added */
    ptrdiff_t natural_lb;        /* min over those copies of their lb */
    bool has_natural_ub;         /* a copy with data and without a ub marker was added */
    ptrdiff_t natural_ub;        /* max over those copies of their ub */
    bool has_lb_marker;          /* a copy had an lb marker, or set_bounds was called */
    ptrdiff_t marker_lb;         /* min over the lb markers */
    bool has_ub_marker;          /* a copy had a ub marker, or set_bounds was called */
    ptrdiff_t marker_ub;         /* max over the ub markers */
    uint32_t align;              /* strictest alignment of the basic types seen */
    crmpi_datatype_args_t *args; /* goes to the new type; freed on failure; may be NULL */
    int status;                  /* CRMPI_OK, or the first failure */
    const char *error_detail;    /* what failed, for the user; a static string */
} crmpi_datatype_typemap_t;

/** Start an empty typemap. Allocates nothing: a map never finished needs no cleanup. */
void crmpi_datatype_typemap_init(crmpi_datatype_typemap_t *map);

/**
 * Have the new type keep its constructor's arguments (call right after init). The caller
 * fills the arrays; every entry of `types` must be set before finish.
 * @return the record (arrays of the lengths asked), or NULL when memory ran out: the map
 *         is failed then and holds nothing.
 */
crmpi_datatype_args_t *crmpi_datatype_typemap_keep_args(crmpi_datatype_typemap_t *map,
                                                        int constructor, size_t num_ints,
                                                        size_t num_disps, size_t num_types);
/** As crmpi_datatype_typemap_keep_args, with room for `num_counts` 64-bit counts too. */
crmpi_datatype_args_t *crmpi_datatype_typemap_keep_args_counts(crmpi_datatype_typemap_t *map,
                                                               int constructor, size_t num_ints,
                                                               size_t num_disps, size_t num_counts,
                                                               size_t num_types);

/**
 * Append `ncopies` copies of `old` to the typemap, copy i at byte displacement
 * `disp + i * stride`: its runs in order, its bounds, its data span (MPI-3.1 section 4.1).
 * A copy of a type with an empty typemap adds nothing, not even bounds. The new type
 * needs nothing of `old` afterwards.
 */
void crmpi_datatype_typemap_append(crmpi_datatype_typemap_t *map, ptrdiff_t disp, size_t ncopies,
                                   ptrdiff_t stride, const struct crmpi_datatype_s *old);

/** `a * b`, or 0 with the map failed when it overflows ptrdiff_t. */
ptrdiff_t crmpi_datatype_typemap_mul(crmpi_datatype_typemap_t *map, ptrdiff_t a, ptrdiff_t b);
/** `a + b`, or 0 with the map failed when it overflows ptrdiff_t. */
ptrdiff_t crmpi_datatype_typemap_add(crmpi_datatype_typemap_t *map, ptrdiff_t a, ptrdiff_t b);

/** Fail the map with `status` unless it failed already; `detail` must be a static string. */
void crmpi_datatype_typemap_fail(crmpi_datatype_typemap_t *map, int status, const char *detail);

/** Give the type explicit bounds (an lb and a ub marker), whatever its copies had
 *  (resized, subarray). */
void crmpi_datatype_typemap_set_bounds(crmpi_datatype_typemap_t *map, ptrdiff_t lb,
                                       ptrdiff_t extent);

/**
 * Make the type: one reference (the caller's), not committed, unnamed, holding the args
 * record and a reference on each of its types. On failure everything the map holds is
 * freed and map->error_detail says why.
 * @return CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE, or CRMPI_ERR_BAD_PARAM (sizes or
 *         displacements overflow)
 */
int crmpi_datatype_typemap_finish(crmpi_datatype_typemap_t *map,
                                  struct crmpi_datatype_s **type_out);

/**
 * Take a reference on a type, so that it outlives its handle (a pending request whose type
 * the application frees, MPI-3.1 section 4.1.9). Predefined types are not counted.
 */
void crmpi_datatype_retain(struct crmpi_datatype_s *type);
/** Drop a reference; the last one frees a derived type and drops its args' references. */
void crmpi_datatype_release(struct crmpi_datatype_s *type);

/**
 * Basic elements in the first `nbytes` of the stream of `type` (MPI_Get_elements): whole
 * elements contribute basic_count each, a partial one the basic elements its bytes cover.
 * @return the count, or -1 when nbytes ends inside a basic element.
 */
int64_t crmpi_datatype_count_basic(const struct crmpi_datatype_s *type, size_t nbytes);

/**
 * Bytes of the stream of `type` that hold its first `nbasic` (>= 0) basic elements, the
 * inverse of count_basic (MPI_Status_set_elements): every whole element is `size` bytes;
 * in the last, partial one, the bytes whose basic elements count to the rest.
 * @return the bytes, or -1 when they exceed INT64_MAX.
 */
int64_t crmpi_datatype_basic_bytes(const struct crmpi_datatype_s *type, int64_t nbasic);

/*
 * Static initializers of predefined types (objects never counted nor freed). A basic type
 * is one C type: one run of one basic element, no gaps, extent equal to size.
 *
 *   static crmpi_dt_run_t int_runs[1] = {CRMPI_DATATYPE_BASIC_RUN(int, MY_KIND_INT)};
 *   struct crmpi_datatype_s my_int = CRMPI_DATATYPE_STATIC_BASIC("int", int_runs, int);
 */
#define CRMPI_DATATYPE_BASIC_RUN(c_type, kind)                                                     \
    {                                                                                              \
        .disp = 0, .len = sizeof(c_type), .basic_size = sizeof(c_type), .basic_kind = (kind)       \
    }

#define CRMPI_DATATYPE_STATIC_BASIC(type_name, run_array, c_type)                                  \
    {                                                                                              \
        .size = sizeof(c_type), .lb = 0, .extent = sizeof(c_type), .true_lb = 0,                   \
        .true_extent = sizeof(c_type), .predefined = true, .refcount = 1, .runs = run_array,       \
        .num_runs = 1, .basic_count = 1, .contiguous = true, .run_len = sizeof(c_type),            \
        .runs_regular = true, .align = _Alignof(c_type), .name = type_name, .committed = true,     \
    }

/*
 * A pair: the C struct `pair_type` of a `first_type` member at offset 0 and a
 * `second_type` member `second` (the value-index pairs of MPI-3.1 section 5.9.4), of basic
 * kinds `first_kind` and `second_kind`. Its data are the two members, its extent the
 * struct's, padding included. The members are one run when they touch and have one basic
 * size and kind, as a derived type's adjacent runs are merged; the pair is dense, hence
 * contiguous, when they touch and fill the struct.
 *
 *   struct float_int { float value; int index; };
 *   static crmpi_dt_run_t fi_runs[2] = CRMPI_DATATYPE_PAIR_RUNS(struct float_int, float, K_FLT,
 *                                                               index, int, K_INT);
 *   struct crmpi_datatype_s fi = CRMPI_DATATYPE_STATIC_PAIR("float_int", fi_runs,
 *                                                           struct float_int, float, K_FLT,
 *                                                           index, int, K_INT);
 */
#define CRMPI_DATATYPE_PAIR_TOUCH(pair_type, first_type, second)                                   \
    (offsetof(pair_type, second) == sizeof(first_type))
#define CRMPI_DATATYPE_PAIR_MERGED(pair_type, first_type, first_kind, second, second_type,         \
                                   second_kind)                                                    \
    (CRMPI_DATATYPE_PAIR_TOUCH(pair_type, first_type, second) &&                                   \
     sizeof(first_type) == sizeof(second_type) && (first_kind) == (second_kind))

/* The first run's length: the first member alone, or both when they merge. */
#define CRMPI_DATATYPE_PAIR_FIRST_LEN(pair_type, first_type, first_kind, second, second_type,      \
                                      second_kind)                                                 \
    (CRMPI_DATATYPE_PAIR_MERGED(pair_type, first_type, first_kind, second, second_type,            \
                                second_kind)                                                       \
         ? sizeof(first_type) + sizeof(second_type)                                                \
         : sizeof(first_type))

/* Laid out by hand: clang-format indents the second run as if it continued the first. */
/* clang-format off */
#define CRMPI_DATATYPE_PAIR_RUNS(pair_type, first_type, first_kind, second, second_type,         \
                                 second_kind)                                                      \
    {                                                                                              \
        {.disp = 0,                                                                                \
         .len = CRMPI_DATATYPE_PAIR_FIRST_LEN(pair_type, first_type, first_kind, second,           \
                                              second_type, second_kind),                           \
         .basic_size = sizeof(first_type),                                                         \
         .basic_kind = (first_kind)},                                                              \
        {.disp = offsetof(pair_type, second),                                                      \
         .len = sizeof(second_type),                                                               \
         .basic_size = sizeof(second_type),                                                        \
         .basic_kind = (second_kind)},                                                             \
    }
/* clang-format on */

#define CRMPI_DATATYPE_STATIC_PAIR(type_name, run_array, pair_type, first_type, first_kind,        \
                                   second, second_type, second_kind)                               \
    {                                                                                              \
        .size = sizeof(first_type) + sizeof(second_type), .lb = 0, .extent = sizeof(pair_type),    \
        .true_lb = 0, .true_extent = offsetof(pair_type, second) + sizeof(second_type),            \
        .predefined = true, .refcount = 1, .runs = run_array,                                      \
        .num_runs = CRMPI_DATATYPE_PAIR_MERGED(pair_type, first_type, first_kind, second,          \
                                               second_type, second_kind)                           \
                        ? 1                                                                        \
                        : 2,                                                                       \
        .basic_count = 2,                                                                          \
        .contiguous = CRMPI_DATATYPE_PAIR_TOUCH(pair_type, first_type, second) &&                  \
                      sizeof(first_type) + sizeof(second_type) == sizeof(pair_type),               \
        .run_len = CRMPI_DATATYPE_PAIR_MERGED(pair_type, first_type, first_kind, second,           \
                                              second_type, second_kind)                            \
                       ? sizeof(first_type) + sizeof(second_type)                                  \
                       : 0,                                                                        \
        .runs_regular = CRMPI_DATATYPE_PAIR_MERGED(pair_type, first_type, first_kind, second,      \
                                                   second_type, second_kind),                      \
        .align = _Alignof(pair_type), .name = type_name, .committed = true,                        \
    }

/*
 * A marker of MPI-1 (MPI_LB, MPI_UB): no data, size and extent 0, and an lb or a ub marker
 * at displacement 0. A copy of it in a type sets that bound (MPI-3.1 section 4.1.6).
 */
#define CRMPI_DATATYPE_STATIC_MARKER(type_name, is_lb)                                             \
    {                                                                                              \
        .predefined = true, .refcount = 1, .align = 1, .contiguous = true, .lb_marker = (is_lb),   \
        .ub_marker = !(is_lb), .name = type_name, .committed = true,                               \
    }

#endif /* CRMPI_DATATYPE_H */
