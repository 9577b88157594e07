/*
 * misc.c: the rest a typical program calls, between ranks: buffers from MPI_Alloc_mem
 * carry messages, a datatype rebuilt from MPI_Type_get_envelope/get_contents (recursively,
 * as a tool decodes one) receives what the original type sent, MPI_Aint_add/diff give the
 * displacements of a struct, MPI_Pcontrol and MPI_T answer, and, where the implementation
 * has MPI-IO (its mpi.h defines MPI_FILE_NULL), a file is written and read back.
 *
 * Usage: misc DIR [--crmpi]. DIR is a directory for MPI-IO's file. --crmpi adds the
 * answers that are crmpi's own choices: MPI_T with 0 variables, MPI_Free_mem of a foreign pointer
 * raising MPI_ERR_BASE. Without it the program also runs on Open MPI, which validates the rest of
 * its checks. test/integration/test_misc.py runs it; the harness is test/comm/comm_common.h.
 */
#include <stdint.h>
#include <unistd.h>

#include "../comm/comm_common.h"

#define TAG_STRUCT   11
#define TAG_SUBARRAY 12
#define ROWS         6
#define COLS         8

/* One record of the struct type; gaps (pad, skipped) must stay untouched by receives. */
typedef struct record {
    char tag;
    int pair[2];
    double values[3]; /* values[0] and values[2] travel, values[1] does not */
    long id;
} record_t;

/* Free a type MPI_Type_get_contents returned: derived ones only. */
static void free_returned(MPI_Datatype type)
{
    int ni, na, nd, combiner;

    MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED) {
        MPI_Type_free(&type);
    }
}

/* A new type equal to `type`, rebuilt from its contents, derived inner types too. */
static MPI_Datatype rebuild(MPI_Datatype type)
{
    int ni, na, nd, combiner;
    MPI_Datatype result = MPI_DATATYPE_NULL;

    MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED) {
        return type;
    }
    int *ints = calloc((size_t)ni + 1, sizeof(*ints));
    MPI_Aint *addrs = calloc((size_t)na + 1, sizeof(*addrs));
    MPI_Datatype *inner = calloc((size_t)nd + 1, sizeof(*inner));

    MPI_Type_get_contents(type, ni, na, nd, ints, addrs, inner);
    for (int t = 0; t < nd; t++) {
        MPI_Datatype returned = inner[t];

        inner[t] = rebuild(returned);
        free_returned(returned);
    }
    switch (combiner) {
    case MPI_COMBINER_DUP: MPI_Type_dup(inner[0], &result); break;
    case MPI_COMBINER_CONTIGUOUS: MPI_Type_contiguous(ints[0], inner[0], &result); break;
    case MPI_COMBINER_VECTOR: MPI_Type_vector(ints[0], ints[1], ints[2], inner[0], &result); break;
    case MPI_COMBINER_HVECTOR:
        MPI_Type_create_hvector(ints[0], ints[1], addrs[0], inner[0], &result);
        break;
    case MPI_COMBINER_INDEXED:
        MPI_Type_indexed(ints[0], &ints[1], &ints[1 + ints[0]], inner[0], &result);
        break;
    case MPI_COMBINER_HINDEXED:
        MPI_Type_create_hindexed(ints[0], &ints[1], addrs, inner[0], &result);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        MPI_Type_create_indexed_block(ints[0], ints[1], &ints[2], inner[0], &result);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        MPI_Type_create_hindexed_block(ints[0], ints[1], addrs, inner[0], &result);
        break;
    case MPI_COMBINER_STRUCT:
        MPI_Type_create_struct(ints[0], &ints[1], addrs, inner, &result);
        break;
    case MPI_COMBINER_SUBARRAY:
        MPI_Type_create_subarray(ints[0], &ints[1], &ints[1 + ints[0]], &ints[1 + 2 * ints[0]],
                                 ints[1 + 3 * ints[0]], inner[0], &result);
        break;
    case MPI_COMBINER_RESIZED:
        MPI_Type_create_resized(inner[0], addrs[0], addrs[1], &result);
        break;
    default: CHECK(0, "combiner %d has no rebuild here", combiner);
    }
    for (int t = 0; t < nd; t++) {
        free_returned(inner[t]);
    }
    free(inner);
    free(addrs);
    free(ints);
    return result;
}

/* The struct type of record_t, its displacements from MPI_Get_address and MPI_Aint_diff,
 * resized to sizeof(record_t), then duplicated: four combiners deep. */
static MPI_Datatype make_record_type(void)
{
    record_t sample;
    MPI_Aint base, addrs[4];
    MPI_Datatype two_values, fields, resized, dup;
    int blocklengths[4] = {1, 2, 1, 1};

    MPI_Get_address(&sample, &base);
    MPI_Get_address(&sample.tag, &addrs[0]);
    MPI_Get_address(&sample.pair, &addrs[1]);
    MPI_Get_address(&sample.values, &addrs[2]);
    MPI_Get_address(&sample.id, &addrs[3]);
    for (int i = 0; i < 4; i++) {
        addrs[i] = MPI_Aint_diff(addrs[i], base);
    }
    CHECK(addrs[3] == (MPI_Aint)offsetof(record_t, id), "Aint_diff gives %ld for id, not %zu",
          (long)addrs[3], offsetof(record_t, id));
    CHECK(MPI_Aint_add(base, addrs[2]) == (MPI_Aint)(uintptr_t)&sample.values,
          "Aint_add does not give the address of values");
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &two_values);
    MPI_Datatype types[4] = {MPI_CHAR, MPI_INT, two_values, MPI_LONG};
    MPI_Type_create_struct(4, blocklengths, addrs, types, &fields);
    MPI_Type_create_resized(fields, 0, (MPI_Aint)sizeof(record_t), &resized);
    MPI_Type_dup(resized, &dup);
    MPI_Type_free(&two_values);
    MPI_Type_free(&fields);
    MPI_Type_free(&resized);
    return dup;
}

static void fill_record(record_t *r, int rank, int i)
{
    r->tag = (char)('a' + (rank + i) % 26);
    r->pair[0] = rank * 1000 + i;
    r->pair[1] = -(rank * 1000 + i);
    r->values[0] = rank + i / 8.0;
    r->values[1] = -1.0;
    r->values[2] = rank * 2.5 + i;
    r->id = 100000L * rank + i;
}

/* Records from Alloc_mem buffers, sent with the original type, received with the rebuilt
 * one, around a ring. */
static void check_struct_ring(void)
{
    enum { COUNT = 5 };
    MPI_Datatype original = make_record_type(), rebuilt = rebuild(original);
    record_t *out = NULL, *in = NULL;
    int next = (comm_rank + 1) % comm_size, prev = (comm_rank + comm_size - 1) % comm_size;
    MPI_Aint lb, extent;

    comm_begin("struct ring");
    MPI_Type_commit(&original);
    MPI_Type_commit(&rebuilt);
    MPI_Type_get_extent(rebuilt, &lb, &extent);
    CHECK(lb == 0 && extent == (MPI_Aint)sizeof(record_t), "rebuilt type has lb %ld extent %ld",
          (long)lb, (long)extent);
    CHECK(MPI_Alloc_mem(COUNT * sizeof(record_t), MPI_INFO_NULL, &out) == MPI_SUCCESS, "Alloc_mem");
    CHECK(MPI_Alloc_mem(COUNT * sizeof(record_t), MPI_INFO_NULL, &in) == MPI_SUCCESS, "Alloc_mem");
    if (out == NULL || in == NULL) {
        return;
    }
    memset(in, 0x7f, COUNT * sizeof(record_t));
    for (int i = 0; i < COUNT; i++) {
        fill_record(&out[i], comm_rank, i);
    }
    MPI_Sendrecv(out, COUNT, original, next, TAG_STRUCT, in, COUNT, rebuilt, prev, TAG_STRUCT,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < COUNT; i++) {
        record_t want;
        double untouched;

        fill_record(&want, prev, i);
        memset(&untouched, 0x7f, sizeof(untouched));
        CHECK(in[i].tag == want.tag && in[i].pair[0] == want.pair[0] &&
                  in[i].pair[1] == want.pair[1] && in[i].values[0] == want.values[0] &&
                  in[i].values[2] == want.values[2] && in[i].id == want.id,
              "record %d from rank %d differs", i, prev);
        CHECK(memcmp(&in[i].values[1], &untouched, sizeof(double)) == 0,
              "record %d: values[1] is not part of the type but was written", i);
    }
    CHECK(MPI_Free_mem(out) == MPI_SUCCESS, "Free_mem");
    CHECK(MPI_Free_mem(in) == MPI_SUCCESS, "Free_mem");
    MPI_Type_free(&original);
    MPI_Type_free(&rebuilt);
}

/* A block of a matrix sent with a rebuilt subarray type, received contiguous. */
static void check_subarray(void)
{
    int sizes[2] = {ROWS, COLS}, subsizes[2] = {3, 4}, starts[2] = {2, 3};
    int matrix[ROWS][COLS], block[3 * 4];
    MPI_Datatype original, rebuilt;
    int next = (comm_rank + 1) % comm_size, prev = (comm_rank + comm_size - 1) % comm_size;

    comm_begin("subarray");
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &original);
    rebuilt = rebuild(original);
    MPI_Type_free(&original);
    MPI_Type_commit(&rebuilt);
    for (int r = 0; r < ROWS; r++) {
        for (int c = 0; c < COLS; c++) {
            matrix[r][c] = comm_rank * 100 + r * COLS + c;
        }
    }
    MPI_Sendrecv(matrix, 1, rebuilt, next, TAG_SUBARRAY, block, 12, MPI_INT, prev, TAG_SUBARRAY,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 12; i++) {
        int want = prev * 100 + (2 + i / 4) * COLS + 3 + i % 4;

        CHECK(block[i] == want, "block[%d] is %d, want %d", i, block[i], want);
    }
    MPI_Type_free(&rebuilt);
}

static void check_tools(int crmpi)
{
    int provided = -1, num = -1;

    comm_begin("MPI_T and Pcontrol");
    CHECK(MPI_Pcontrol(1) == MPI_SUCCESS, "Pcontrol(1)");
    CHECK(MPI_Pcontrol(0) == MPI_SUCCESS, "Pcontrol(0)");
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T_init_thread");
    CHECK(MPI_T_cvar_get_num(&num) == MPI_SUCCESS && num >= 0, "cvar_get_num gives %d", num);
    if (crmpi) {
        CHECK(num == 0, "crmpi has %d control variables", num);
    }
    num = -1;
    CHECK(MPI_T_pvar_get_num(&num) == MPI_SUCCESS && num >= 0, "pvar_get_num gives %d", num);
    if (crmpi) {
        CHECK(num == 0, "crmpi has %d performance variables", num);
    }
    CHECK(MPI_T_finalize() == MPI_SUCCESS, "MPI_T_finalize");
}

#ifdef MPI_FILE_NULL
/* Only an implementation with MPI-IO declares it: write, read back, clean up. */
static void check_file(const char *dir)
{
    char path[512];
    MPI_File fh = MPI_FILE_NULL;
    int rc;

    comm_begin("MPI_File_open");
    snprintf(path, sizeof(path), "%s/misc-io.dat", dir);
    /* No error handler is set: files default to MPI_ERRORS_RETURN, so the job goes on. */
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "File_open gave %d", rc);
    if (rc == MPI_SUCCESS) {
        int value = comm_rank + 7, back = -1;

        CHECK(MPI_File_write_at_all(fh, (MPI_Offset)comm_rank * (MPI_Offset)sizeof(int), &value, 1,
                                    MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "write_at_all");
        CHECK(MPI_File_read_at_all(fh, (MPI_Offset)comm_rank * (MPI_Offset)sizeof(int), &back, 1,
                                   MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
                  back == value,
              "read back %d, wrote %d", back, value);
        MPI_File_close(&fh);
        comm_barrier();
        if (comm_rank == 0) {
            MPI_File_delete(path, MPI_INFO_NULL);
        }
    }
}

static int file_handler_calls, file_handler_code;

static void file_handler(MPI_File *fh, int *errcode, ...)
{
    file_handler_calls++;
    file_handler_code = *errcode;
}

/* Error handlers on files (MPI-3.1 section 8.3.3): MPI_ERRORS_RETURN by default, a user
 * handler called with the error, MPI_File_call_errhandler. */
static void check_file_errhandler(const char *dir)
{
    char path[512];
    MPI_File fh = MPI_FILE_NULL;
    MPI_Errhandler handler, got;
    int rc, class = -1, buf = 0;

    comm_begin("file error handlers");
    CHECK(MPI_File_get_errhandler(MPI_FILE_NULL, &got) == MPI_SUCCESS && got == MPI_ERRORS_RETURN,
          "the default file error handler is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&got);
    snprintf(path, sizeof(path), "%s/misc-absent-%d.dat", dir, comm_rank);
    rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_Error_class(rc, &class);
    CHECK(rc != MPI_SUCCESS && class == MPI_ERR_NO_SUCH_FILE,
          "opening an absent file gave %d (class %d)", rc, class);

    snprintf(path, sizeof(path), "%s/misc-errh-%d.dat", dir, comm_rank);
    rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "File_open gave %d", rc);
    if (rc != MPI_SUCCESS)
        return;
    CHECK(MPI_File_create_errhandler(file_handler, &handler) == MPI_SUCCESS,
          "File_create_errhandler");
    CHECK(MPI_File_set_errhandler(fh, handler) == MPI_SUCCESS, "File_set_errhandler");
    CHECK(MPI_File_get_errhandler(fh, &got) == MPI_SUCCESS && got == handler,
          "File_get_errhandler does not give the handler set");
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&handler);
    /* Reading a write-only file is an error: the handler sees it, the call returns it. */
    rc = MPI_File_read(fh, &buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &class);
    CHECK(rc != MPI_SUCCESS && file_handler_calls == 1 && file_handler_code == rc,
          "read of a write-only file: rc %d, handler called %d times with %d", rc,
          file_handler_calls, file_handler_code);
    CHECK(MPI_File_call_errhandler(fh, MPI_ERR_OTHER) == MPI_SUCCESS && file_handler_calls == 2 &&
              file_handler_code == MPI_ERR_OTHER,
          "File_call_errhandler: handler called %d times with %d", file_handler_calls,
          file_handler_code);
    MPI_File_close(&fh);
    MPI_File_delete(path, MPI_INFO_NULL);
}
#endif

/* crmpi's answer to a pointer MPI_Alloc_mem did not return: MPI_ERR_BASE, nothing freed. */
static void check_free_foreign(void)
{
    char *foreign = malloc(64);

    comm_begin("Free_mem of a foreign pointer");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Free_mem(foreign) == MPI_ERR_BASE, "Free_mem of malloc's pointer accepted");
    memset(foreign, 3, 64);
    free(foreign);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    int crmpi = argc > 2 && strcmp(argv[2], "--crmpi") == 0;
    const char *dir = argc > 1 ? argv[1] : ".";

    comm_init(&argc, &argv, "misc");
    check_struct_ring();
    check_subarray();
    check_tools(crmpi);
#ifdef MPI_FILE_NULL
    check_file(dir);
    check_file_errhandler(dir);
#endif
    if (crmpi) {
        check_free_foreign();
    }
    return comm_finish();
}
