/*
 * typemap.c: building a derived datatype's typemap (runs, bounds, data span) from copies
 * of old types, and the life of a derived type (reference counts, free).
 *
 * Bounds follow MPI-3.1 sections 4.1.6 and 4.1.7. A type's entries are data or lb/ub
 * markers (MPI_Type_create_resized sets both; MPI-1's MPI_LB and MPI_UB one each). lb is
 * the lowest lb marker if there is one, else the lowest displacement of data; ub is the
 * highest ub marker if there is one, else the highest end of data plus epsilon, the padding
 * that rounds the extent up to the strictest alignment of the type's basic types (as a C
 * struct is padded). A copy of an old type contributes its lb and ub, each as a marker when
 * the old type's was one (a derived old type's ub includes its own padding, as Open MPI
 * computes it), so contiguous copies of a struct are laid out at its padded extent.
 */
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "datatype.h"

void crmpi_datatype_typemap_fail(crmpi_datatype_typemap_t *map, int status, const char *detail)
{
    if (map->status == CRMPI_OK) {
        map->status = status;
        map->error_detail = detail;
    }
}

void crmpi_datatype_typemap_init(crmpi_datatype_typemap_t *map)
{
    *map = (crmpi_datatype_typemap_t){.align = 1, .status = CRMPI_OK};
}

crmpi_datatype_args_t *crmpi_datatype_typemap_keep_args(crmpi_datatype_typemap_t *map,
                                                        int constructor, size_t num_ints,
                                                        size_t num_disps, size_t num_types)
{
    return crmpi_datatype_typemap_keep_args_counts(map, constructor, num_ints, num_disps, 0,
                                                   num_types);
}

crmpi_datatype_args_t *crmpi_datatype_typemap_keep_args_counts(crmpi_datatype_typemap_t *map,
                                                               int constructor, size_t num_ints,
                                                               size_t num_disps, size_t num_counts,
                                                               size_t num_types)
{
    crmpi_datatype_args_t *args;

    /* Displacements, counts and type pointers first: all are 8-byte aligned, the ints not. */
    args = malloc(sizeof(*args) + num_disps * sizeof(ptrdiff_t) + num_counts * sizeof(int64_t) +
                  num_types * sizeof(struct crmpi_datatype_s *) + num_ints * sizeof(int));
    if (args == NULL) {
        crmpi_datatype_typemap_fail(map, CRMPI_ERR_OUT_OF_RESOURCE,
                                    "out of memory for the record of the new type's arguments");
        return NULL;
    }
    args->constructor = constructor;
    args->num_ints = num_ints;
    args->num_disps = num_disps;
    args->num_counts = num_counts;
    args->num_types = num_types;
    args->disps = (ptrdiff_t *)(args + 1);
    args->counts = (int64_t *)(args->disps + num_disps);
    args->types = (struct crmpi_datatype_s **)(args->counts + num_counts);
    args->ints = (int *)(args->types + num_types);
    map->args = args;
    return args;
}

ptrdiff_t crmpi_datatype_typemap_mul(crmpi_datatype_typemap_t *map, ptrdiff_t a, ptrdiff_t b)
{
    ptrdiff_t product;

    if (__builtin_mul_overflow(a, b, &product)) {
        crmpi_datatype_typemap_fail(
            map, CRMPI_ERR_BAD_PARAM,
            "a displacement or extent of the new type overflows the address range");
        return 0;
    }
    return product;
}

ptrdiff_t crmpi_datatype_typemap_add(crmpi_datatype_typemap_t *map, ptrdiff_t a, ptrdiff_t b)
{
    ptrdiff_t sum;

    if (__builtin_add_overflow(a, b, &sum)) {
        crmpi_datatype_typemap_fail(
            map, CRMPI_ERR_BAD_PARAM,
            "a displacement or extent of the new type overflows the address range");
        return 0;
    }
    return sum;
}

/* Room for `more` runs; growth doubles, so appending n runs costs O(n). */
static bool datatype_typemap_reserve(crmpi_datatype_typemap_t *map, size_t more)
{
    size_t needed;
    size_t capacity;
    size_t bytes;
    crmpi_dt_run_t *runs;

    if (more <= map->capacity - map->num_runs) {
        return true;
    }
    if (__builtin_add_overflow(map->num_runs, more, &needed)) {
        goto err_too_many;
    }
    capacity = map->capacity > 0 ? map->capacity : 8;
    while (capacity < needed) {
        capacity = capacity > SIZE_MAX / 2 ? needed : capacity * 2;
    }
    if (__builtin_mul_overflow(capacity, sizeof(crmpi_dt_run_t), &bytes)) {
        goto err_too_many;
    }
    runs = realloc(map->runs, bytes);
    if (runs == NULL) {
        crmpi_datatype_typemap_fail(
            map, CRMPI_ERR_OUT_OF_RESOURCE,
            "out of memory for the typemap of the new type (crmpi stores one "
            "run of contiguous bytes per block of the type)");
        return false;
    }
    map->runs = runs;
    map->capacity = capacity;
    return true;

err_too_many:
    crmpi_datatype_typemap_fail(map, CRMPI_ERR_BAD_PARAM,
                                "the new type has more blocks than this machine can address");
    return false;
}

/* Add one run (room reserved), merged into the previous one when it continues it in memory
 * with the same basic type (size and kind): merging keeps typemap order, count_basic exact,
 * and each run one basic type. */
static inline void datatype_typemap_push(crmpi_datatype_typemap_t *map, ptrdiff_t disp, size_t len,
                                         uint32_t basic_size, uint16_t basic_kind)
{
    if (map->num_runs > 0) {
        crmpi_dt_run_t *last = &map->runs[map->num_runs - 1];

        if (last->basic_size == basic_size && last->basic_kind == basic_kind &&
            last->disp + (ptrdiff_t)last->len == disp) {
            last->len += len;
            return;
        }
    }
    map->runs[map->num_runs++] = (crmpi_dt_run_t){
        .disp = disp, .len = len, .basic_size = basic_size, .basic_kind = basic_kind};
}

/* Fold the bounds of copies of `old` at displacements spanning [low_disp, high_disp]. */
static void datatype_typemap_note_bounds(crmpi_datatype_typemap_t *map, ptrdiff_t low_disp,
                                         ptrdiff_t high_disp, const struct crmpi_datatype_s *old)
{
    ptrdiff_t old_ub = crmpi_datatype_typemap_add(map, old->lb, old->extent);
    /* Each copy's lb and ub grow with its displacement, whatever the sign of the extent
     * (resized may make it negative): the lowest lb and the highest ub are at the ends. */
    ptrdiff_t lb = crmpi_datatype_typemap_add(map, low_disp, old->lb);
    ptrdiff_t ub = crmpi_datatype_typemap_add(map, high_disp, old_ub);

    if (map->status != CRMPI_OK) {
        return;
    }
    /* Each bound is a marker where the old type's was; otherwise it is the data's, and a
     * type without data has none (MPI_LB contributes no ub, MPI_UB no lb). */
    if (old->lb_marker) {
        if (!map->has_lb_marker || lb < map->marker_lb) {
            map->marker_lb = lb;
        }
        map->has_lb_marker = true;
    } else if (old->size > 0) {
        if (!map->has_natural_lb || lb < map->natural_lb) {
            map->natural_lb = lb;
        }
        map->has_natural_lb = true;
    }
    if (old->ub_marker) {
        if (!map->has_ub_marker || ub > map->marker_ub) {
            map->marker_ub = ub;
        }
        map->has_ub_marker = true;
    } else if (old->size > 0) {
        if (!map->has_natural_ub || ub > map->natural_ub) {
            map->natural_ub = ub;
        }
        map->has_natural_ub = true;
    }
}

/* Fold the data span, size and basic count of `ncopies` copies into the map. */
static void datatype_typemap_note_data(crmpi_datatype_typemap_t *map, ptrdiff_t low_disp,
                                       ptrdiff_t high_disp, size_t ncopies,
                                       const struct crmpi_datatype_s *old)
{
    ptrdiff_t true_lb = crmpi_datatype_typemap_add(map, low_disp, old->true_lb);
    ptrdiff_t true_ub = crmpi_datatype_typemap_add(
        map, crmpi_datatype_typemap_add(map, high_disp, old->true_lb), old->true_extent);
    size_t bytes;
    size_t basics;

    if (__builtin_mul_overflow(ncopies, old->size, &bytes) ||
        __builtin_add_overflow(map->size, bytes, &bytes) || bytes > (size_t)PTRDIFF_MAX ||
        __builtin_mul_overflow(ncopies, old->basic_count, &basics) ||
        __builtin_add_overflow(map->basic_count, basics, &basics)) {
        crmpi_datatype_typemap_fail(map, CRMPI_ERR_BAD_PARAM,
                                    "the size of the new type overflows the address range");
        return;
    }
    if (map->status != CRMPI_OK) {
        return;
    }
    map->size = bytes;
    map->basic_count = basics;
    if (!map->has_data || true_lb < map->true_lb) {
        map->true_lb = true_lb;
    }
    if (!map->has_data || true_ub > map->true_ub) {
        map->true_ub = true_ub;
    }
    map->has_data = true;
    if (old->align > map->align) {
        map->align = old->align;
    }
}

void crmpi_datatype_typemap_append(crmpi_datatype_typemap_t *map, ptrdiff_t disp, size_t ncopies,
                                   ptrdiff_t stride, const struct crmpi_datatype_s *old)
{
    ptrdiff_t last_disp;
    ptrdiff_t low_disp;
    ptrdiff_t high_disp;

    /* An empty typemap (no data, no markers) has no entries to copy, so it moves no bound:
     * a zero-length block is not there at all (MPI-3.1 section 4.1). */
    if (map->status != CRMPI_OK || ncopies == 0 ||
        (old->size == 0 && !old->lb_marker && !old->ub_marker)) {
        return;
    }
    if (ncopies - 1 > (size_t)PTRDIFF_MAX) {
        crmpi_datatype_typemap_fail(map, CRMPI_ERR_BAD_PARAM, "the new type has too many blocks");
        return;
    }
    last_disp = crmpi_datatype_typemap_add(
        map, disp, crmpi_datatype_typemap_mul(map, (ptrdiff_t)(ncopies - 1), stride));
    low_disp = stride < 0 ? last_disp : disp;
    high_disp = stride < 0 ? disp : last_disp;
    datatype_typemap_note_bounds(map, low_disp, high_disp, old);
    if (old->size == 0) {
        return;
    }
    datatype_typemap_note_data(map, low_disp, high_disp, ncopies, old);
    if (map->status != CRMPI_OK) {
        return;
    }

    /* Copies of one run that abut (a contiguous block of a dense type) are one run: O(1)
     * whatever the count, which keeps MPI_Type_contiguous(1 << 30, MPI_BYTE) instant. */
    if (old->num_runs == 1 && stride == (ptrdiff_t)old->runs[0].len) {
        if (datatype_typemap_reserve(map, 1)) {
            datatype_typemap_push(map, disp + old->runs[0].disp, old->runs[0].len * ncopies,
                                  old->runs[0].basic_size, old->runs[0].basic_kind);
        }
        return;
    }
    size_t more;

    if (__builtin_mul_overflow(ncopies, old->num_runs, &more)) {
        crmpi_datatype_typemap_fail(map, CRMPI_ERR_BAD_PARAM,
                                    "the new type has more blocks than this machine can address");
        return;
    }
    if (!datatype_typemap_reserve(map, more)) {
        return;
    }
    /* No overflow below: every copy's data lies inside the span checked above. */
    ptrdiff_t copy_disp = disp;

    for (size_t copy = 0; copy < ncopies; copy++, copy_disp += stride) {
        for (size_t r = 0; r < old->num_runs; r++) {
            const crmpi_dt_run_t *run = &old->runs[r];

            datatype_typemap_push(map, copy_disp + run->disp, run->len, run->basic_size,
                                  run->basic_kind);
        }
    }
}

void crmpi_datatype_typemap_set_bounds(crmpi_datatype_typemap_t *map, ptrdiff_t lb,
                                       ptrdiff_t extent)
{
    ptrdiff_t ub = crmpi_datatype_typemap_add(map, lb, extent);

    if (map->status != CRMPI_OK) {
        return;
    }
    map->has_lb_marker = true;
    map->has_ub_marker = true;
    map->marker_lb = lb;
    map->marker_ub = ub;
}

/* lb and extent of the finished typemap (MPI-3.1 sections 4.1.6 and 4.1.7). */
static void datatype_typemap_bounds(crmpi_datatype_typemap_t *map, ptrdiff_t *lb_out,
                                    ptrdiff_t *extent_out)
{
    ptrdiff_t lb = 0;
    ptrdiff_t ub = 0;
    ptrdiff_t extent = 0;

    if (map->has_lb_marker) {
        lb = map->marker_lb;
    } else if (map->has_natural_lb) {
        lb = map->natural_lb;
    }
    if (map->has_ub_marker) {
        ub = map->marker_ub;
    } else if (map->has_natural_ub) {
        ub = map->natural_ub;
    } else {
        /* Neither data nor a ub marker (only MPI_LB markers): the type ends where it begins. */
        ub = lb;
    }
    if (__builtin_sub_overflow(ub, lb, &extent)) {
        goto err_overflow;
    }
    if (!map->has_ub_marker && map->has_natural_ub) {
        /* epsilon: round the extent up to the strictest alignment, so that an array of
         * this type keeps every member aligned, as the C compiler pads a struct. */
        ptrdiff_t rest = extent % (ptrdiff_t)map->align;

        if (rest < 0) {
            rest += (ptrdiff_t)map->align;
        }
        if (rest != 0 && __builtin_add_overflow(extent, (ptrdiff_t)map->align - rest, &extent)) {
            goto err_overflow;
        }
    }
    *lb_out = lb;
    *extent_out = extent;
    return;

err_overflow:
    crmpi_datatype_typemap_fail(map, CRMPI_ERR_BAD_PARAM,
                                "the extent of the new type overflows the address range");
}

/* The length all runs share, or 0 when they differ (or there are none). */
static size_t datatype_runs_uniform_len(const crmpi_dt_run_t *runs, size_t num_runs)
{
    if (num_runs == 0) {
        return 0;
    }
    for (size_t r = 1; r < num_runs; r++) {
        if (runs[r].len != runs[0].len) {
            return 0;
        }
    }
    return runs[0].len;
}

/* Whether runs of one length (run_len != 0) are also evenly spaced, and by how much: then
 * the convertor computes each run's place instead of reading it (a vector packs at memory
 * speed, without streaming its run list through the cache). */
static bool datatype_runs_regular(const crmpi_dt_run_t *runs, size_t num_runs, size_t run_len,
                                  ptrdiff_t *stride_out)
{
    ptrdiff_t stride = num_runs > 1 ? runs[1].disp - runs[0].disp : 0;

    if (run_len == 0) {
        return false;
    }
    for (size_t r = 2; r < num_runs; r++) {
        if (runs[r].disp - runs[r - 1].disp != stride) {
            return false;
        }
    }
    *stride_out = stride;
    return true;
}

/* Stream offset of each run in an element, so set_position can bisect instead of walk. */
static size_t *datatype_index_runs(const crmpi_dt_run_t *runs, size_t num_runs)
{
    size_t *starts = malloc(num_runs * sizeof(*starts));
    size_t offset = 0;

    if (starts == NULL) {
        return NULL;
    }
    for (size_t r = 0; r < num_runs; r++) {
        starts[r] = offset;
        offset += runs[r].len;
    }
    return starts;
}

/*
 * Whether `count` elements are `count * size` bytes in a row from true_lb, so one memcpy
 * moves them: no gap between elements (size == extent) and each run starting where the
 * one before it ended (they differ in basic size, or they would have been merged). A type
 * without data is trivially so: its stream is empty.
 */
static bool datatype_runs_dense(const crmpi_dt_run_t *runs, size_t num_runs, size_t size,
                                ptrdiff_t extent)
{
    if (size == 0) {
        return true;
    }
    if ((ptrdiff_t)size != extent) {
        return false;
    }
    for (size_t r = 1; r < num_runs; r++) {
        if (runs[r].disp != runs[r - 1].disp + (ptrdiff_t)runs[r - 1].len) {
            return false;
        }
    }
    return true;
}

int crmpi_datatype_typemap_finish(crmpi_datatype_typemap_t *map, struct crmpi_datatype_s **type_out)
{
    struct crmpi_datatype_s *type;
    size_t *run_starts = NULL;
    ptrdiff_t lb = 0;
    ptrdiff_t extent = 0;

    datatype_typemap_bounds(map, &lb, &extent);
    if (map->status != CRMPI_OK) {
        goto err_free_map;
    }
    if (map->num_runs == 0) {
        free(map->runs);
        map->runs = NULL;
    } else if (map->capacity > map->num_runs) {
        /* Shrinking cannot really fail; if it does, the larger block is as good. */
        crmpi_dt_run_t *runs = realloc(map->runs, map->num_runs * sizeof(*runs));

        if (runs != NULL) {
            map->runs = runs;
        }
    }
    /* set_position finds a run by division when all have one length (every vector and
     * subarray), by bisection of an index when there are many, by a walk otherwise. */
    size_t run_len = datatype_runs_uniform_len(map->runs, map->num_runs);

    if (run_len == 0 && map->num_runs > CRMPI_DATATYPE_INDEX_MIN_RUNS) {
        run_starts = datatype_index_runs(map->runs, map->num_runs);
        if (run_starts == NULL) {
            crmpi_datatype_typemap_fail(map, CRMPI_ERR_OUT_OF_RESOURCE,
                                        "out of memory for the index of the new type's runs");
            goto err_free_map;
        }
    }
    type = calloc(1, sizeof(*type));
    if (type == NULL) {
        crmpi_datatype_typemap_fail(map, CRMPI_ERR_OUT_OF_RESOURCE,
                                    "out of memory for the new type");
        goto err_free_run_starts;
    }
    type->size = map->size;
    type->lb = lb;
    type->extent = extent;
    type->true_lb = map->has_data ? map->true_lb : 0;
    type->true_extent = map->has_data ? map->true_ub - map->true_lb : 0;
    type->refcount = 1;
    type->runs = map->runs;
    type->num_runs = map->num_runs;
    type->basic_count = map->basic_count;
    type->contiguous = datatype_runs_dense(map->runs, map->num_runs, map->size, extent);
    type->run_len = run_len;
    type->runs_regular =
        datatype_runs_regular(map->runs, map->num_runs, run_len, &type->run_stride);
    type->run_starts = run_starts;
    type->align = map->align;
    type->lb_marker = map->has_lb_marker;
    type->ub_marker = map->has_ub_marker;
    type->args = map->args;
    /* The runs need nothing of the old types; the maker may still hand them out. */
    for (size_t t = 0; map->args != NULL && t < map->args->num_types; t++) {
        crmpi_datatype_retain(map->args->types[t]);
    }
    *type_out = type;
    return CRMPI_OK;

err_free_run_starts:
    free(run_starts);
err_free_map:
    free(map->runs);
    free(map->args);
    map->runs = NULL;
    map->args = NULL;
    return map->status;
}

void crmpi_datatype_retain(struct crmpi_datatype_s *type)
{
    /* Predefined objects are static and shared: never counted, never freed. */
    if (!type->predefined) {
        type->refcount++;
    }
}

/* Free a derived type and drop the references its args record held. */
static void datatype_destroy(struct crmpi_datatype_s *type)
{
    crmpi_datatype_args_t *args = type->args;

    if (args != NULL) {
        for (size_t t = 0; t < args->num_types; t++) {
            crmpi_datatype_release(args->types[t]);
        }
        free(args);
    }
    free(type->run_starts);
    free(type->runs);
    free(type);
}

void crmpi_datatype_release(struct crmpi_datatype_s *type)
{
    if (type->predefined) {
        return;
    }
    if (--type->refcount == 0) {
        datatype_destroy(type);
    }
}
