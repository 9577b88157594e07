/*
 * convertor.c: the general case of the convertor (convertor.h), for types whose data is
 * not one contiguous span: walk the runs of each element from the cursor, copy each run
 * (or the part of it that fits) with one memcpy, and leave the cursor where the copy
 * stopped, inside a run if need be, so that the next piece continues there.
 *
 * The cursor is kept normalized: run_offset < runs[run].len, and after the last run of an
 * element it moves to run 0 of the next one; at the end of the stream elem == count.
 * Both walks below (regular runs, any runs) keep it so, and either may continue the other.
 */
#include "crmpi_status.h"
#include "convertor.h"

/* One run's copy. Runs of one basic element (a double of a strided vector, an int of an
 * indexed type) are the common small case: fixed-size copies compile to a load and a store,
 * where a memcpy call would cost more than the data. */
static inline __attribute__((always_inline)) void convertor_copy_bytes(void *dst, const void *src,
                                                                       size_t len)
{
    switch (len) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, len); break;
    }
}

/* `n` whole runs of `len` bytes, `stride` apart in memory, to or from the stream. */
static inline __attribute__((always_inline)) void
convertor_copy_strided(char *stream, char *mem, size_t n, size_t len, ptrdiff_t stride, bool pack)
{
    for (size_t i = 0; i < n; i++, stream += len, mem += stride) {
        if (pack) {
            memcpy(stream, mem, len);
        } else {
            memcpy(mem, stream, len);
        }
    }
}

/*
 * The walk of a type whose runs are evenly spaced and of one length (vectors, 2-d
 * subarrays, one-run types): each run's place is computed, so the loop over whole runs
 * reads nothing but the data. Same contract and cursor as convertor_copy below.
 */
static inline __attribute__((always_inline)) size_t
convertor_copy_regular(crmpi_convertor_t *conv, char *stream, size_t max_bytes, bool pack)
{
    const struct crmpi_datatype_s *type = conv->type;
    const size_t len = type->run_len;
    const ptrdiff_t stride = type->run_stride;
    size_t left = conv->total - conv->position;
    size_t todo = max_bytes < left ? max_bytes : left;
    size_t done = 0;
    size_t elem = conv->elem;
    size_t run = conv->run;
    size_t run_offset = conv->run_offset;
    char *elem_base = conv->buf + (ptrdiff_t)elem * type->extent + type->runs[0].disp;

    while (done < todo) {
        char *mem = elem_base + (ptrdiff_t)run * stride + run_offset;
        size_t room = todo - done;

        if (run_offset != 0 || room < len) {
            /* Part of one run: the rest of the run the last call stopped in, or the first
             * bytes of one this call has no room to finish. */
            size_t chunk = len - run_offset < room ? len - run_offset : room;

            if (pack) {
                memcpy(stream + done, mem, chunk);
            } else {
                memcpy(mem, stream + done, chunk);
            }
            done += chunk;
            run_offset += chunk;
            if (run_offset < len) {
                break;
            }
            run_offset = 0;
            run++;
        } else {
            size_t n = type->num_runs - run < room / len ? type->num_runs - run : room / len;

            /* Fixed lengths make each copy a load and a store; the loop is then as fast
             * as the memory. */
            switch (len) {
            case 4: convertor_copy_strided(stream + done, mem, n, 4, stride, pack); break;
            case 8: convertor_copy_strided(stream + done, mem, n, 8, stride, pack); break;
            case 16: convertor_copy_strided(stream + done, mem, n, 16, stride, pack); break;
            case 32: convertor_copy_strided(stream + done, mem, n, 32, stride, pack); break;
            default: convertor_copy_strided(stream + done, mem, n, len, stride, pack); break;
            }
            done += n * len;
            run += n;
        }
        if (run == type->num_runs) {
            run = 0;
            elem++;
            elem_base += type->extent;
        }
    }
    conv->position += done;
    conv->elem = elem;
    conv->run = run;
    conv->run_offset = run_offset;
    return done;
}

/* The walk of any type: each run's place and length read from the run list. Same
 * contract and cursor as convertor_copy below. */
static inline __attribute__((always_inline)) size_t
convertor_copy_listed(crmpi_convertor_t *conv, char *stream, size_t max_bytes, bool pack)
{
    const struct crmpi_datatype_s *type = conv->type;
    const crmpi_dt_run_t *runs = type->runs;
    size_t left = conv->total - conv->position;
    size_t todo = max_bytes < left ? max_bytes : left;
    size_t done = 0;
    size_t elem = conv->elem;
    size_t run = conv->run;
    size_t run_offset = conv->run_offset;
    char *elem_base = conv->buf + (ptrdiff_t)elem * type->extent;

    while (done < todo) {
        const crmpi_dt_run_t *current = &runs[run];
        char *mem = elem_base + current->disp + run_offset;
        size_t chunk = current->len - run_offset;

        if (chunk > todo - done) {
            /* The piece ends inside this run: copy what fits and stay in the run. */
            chunk = todo - done;
            if (pack) {
                memcpy(stream + done, mem, chunk);
            } else {
                memcpy(mem, stream + done, chunk);
            }
            run_offset += chunk;
            done += chunk;
            break;
        }
        if (pack) {
            convertor_copy_bytes(stream + done, mem, chunk);
        } else {
            convertor_copy_bytes(mem, stream + done, chunk);
        }
        done += chunk;
        run_offset = 0;
        if (++run == type->num_runs) {
            run = 0;
            elem++;
            elem_base += type->extent;
        }
    }
    conv->position += done;
    conv->elem = elem;
    conv->run = run;
    conv->run_offset = run_offset;
    return done;
}

/*
 * Move min(max_bytes, total - position) bytes between the stream and the user buffer from
 * the cursor on: to the stream when `pack`, from it otherwise. Inlined twice, with `pack`
 * a constant, so the loops carry no direction test.
 */
static inline __attribute__((always_inline)) size_t
convertor_copy(crmpi_convertor_t *conv, char *stream, size_t max_bytes, bool pack)
{
    if (conv->type->runs_regular) {
        return convertor_copy_regular(conv, stream, max_bytes, pack);
    }
    return convertor_copy_listed(conv, stream, max_bytes, pack);
}

void crmpi_convertor_init(crmpi_convertor_t *conv, const void *buf, size_t count,
                          const struct crmpi_datatype_s *type)
{
    /* The buffer is written through only by unpack, whose callers pass a writable one. */
    *conv = (crmpi_convertor_t){
        .buf = (char *)(uintptr_t)buf,
        .type = type,
        .count = count,
        .total = count * type->size,
    };
}

/* The run holding byte `offset` (< type->size) of an element, and the offset inside it. */
static void convertor_find_run(const struct crmpi_datatype_s *type, size_t offset, size_t *run_out,
                               size_t *run_offset_out)
{
    size_t run = 0;

    if (type->run_len != 0) {
        run = offset / type->run_len;
        offset %= type->run_len;
    } else if (type->run_starts != NULL) {
        /* Bisect for the last run starting at or before offset. */
        size_t low = 0;
        size_t high = type->num_runs - 1;

        while (low < high) {
            size_t mid = low + (high - low + 1) / 2;

            if (type->run_starts[mid] <= offset) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        run = low;
        offset -= type->run_starts[run];
    } else {
        while (offset >= type->runs[run].len) {
            offset -= type->runs[run].len;
            run++;
        }
    }
    *run_out = run;
    *run_offset_out = offset;
}

int crmpi_convertor_set_position(crmpi_convertor_t *conv, size_t position)
{
    const struct crmpi_datatype_s *type = conv->type;
    size_t within;

    if (position > conv->total) {
        return CRMPI_ERR_BAD_PARAM;
    }
    conv->position = position;
    conv->run = 0;
    conv->run_offset = 0;
    /* A type without data has an empty stream: position is 0 and so is everything else. */
    if (type->size == 0) {
        conv->elem = 0;
        return CRMPI_OK;
    }
    conv->elem = position / type->size;
    within = position % type->size;
    if (within != 0) {
        convertor_find_run(type, within, &conv->run, &conv->run_offset);
    }
    return CRMPI_OK;
}

size_t crmpi_convertor_pack_runs(crmpi_convertor_t *conv, void *dst, size_t max_bytes)
{
    return convertor_copy(conv, dst, max_bytes, true);
}

size_t crmpi_convertor_unpack_runs(crmpi_convertor_t *conv, const void *src, size_t nbytes)
{
    /* The stream is only read: convertor_copy's `stream` is const in spirit when unpacking. */
    return convertor_copy(conv, (char *)(uintptr_t)src, nbytes, false);
}
