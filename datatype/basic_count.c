/*
 * basic_count.c: basic elements in a type's stream, both ways (datatype.h): how many a
 * prefix of the stream holds (MPI_Get_elements, MPI-3.1 section 4.1.11), and how many
 * bytes of the stream hold a given number (MPI_Status_set_elements, section 12.3).
 *
 * A run is made of basic elements of one size (basic_size), so a prefix of the stream
 * counts the whole elements before it and, in the partial element, the basic elements of
 * each run it covers; a prefix ending inside a basic element has no count.
 */
#include "datatype.h"

int64_t crmpi_datatype_count_basic(const struct crmpi_datatype_s *type, size_t nbytes)
{
    size_t whole;
    size_t rest;
    int64_t count;

    if (type->size == 0) {
        /* No data, no basic element; any byte at all cannot belong to this type. */
        return nbytes == 0 ? 0 : -1;
    }
    whole = nbytes / type->size;
    rest = nbytes % type->size;
    count = (int64_t)whole * (int64_t)type->basic_count;
    /* The partial element: its runs in typemap order, each covered in full or in part. */
    for (size_t run = 0; rest > 0; run++) {
        const crmpi_dt_run_t *current = &type->runs[run];
        size_t covered = rest < current->len ? rest : current->len;

        if (covered % current->basic_size != 0) {
            return -1;
        }
        count += (int64_t)(covered / current->basic_size);
        rest -= covered;
    }
    return count;
}

int64_t crmpi_datatype_basic_bytes(const struct crmpi_datatype_s *type, int64_t nbasic)
{
    /* A type built by hand without its basic count counts as one basic element. */
    int64_t per_element = type->basic_count ? (int64_t)type->basic_count : 1;
    int64_t size = (int64_t)type->size;
    int64_t partial = nbasic % per_element;
    int64_t nbytes;
    int64_t guess;

    if (size == 0) {
        return 0;
    }
    if (__builtin_mul_overflow(nbasic / per_element, size, &nbytes)) {
        return -1;
    }
    if (partial == 0) {
        return nbytes;
    }
    /* The partial element's bytes are fewer than size: past INT64_MAX - size, they might
     * overflow, and such a stream is no real message anyway. */
    if (nbytes > INT64_MAX - size) {
        return -1;
    }
    /* When every basic element of the type has one size, each is size / per_element
     * bytes. Otherwise (a pair of a double and an int, structs mixing sizes) the bytes are
     * found by counting prefixes of that one element: slow, but rare. */
    guess = nbytes + partial * (size / per_element);
    if (size % per_element == 0 && crmpi_datatype_count_basic(type, (size_t)guess) == nbasic) {
        return guess;
    }
    for (int64_t extra = 1; extra < size; extra++) {
        if (crmpi_datatype_count_basic(type, (size_t)(nbytes + extra)) == nbasic) {
            return nbytes + extra;
        }
    }
    return guess;
}
