/*
 * test_misc.c: the rest a typical program calls, in a singleton: MPI_Alloc_mem and
 * MPI_Free_mem (including pointers that did not come from MPI_Alloc_mem), MPI_Aint_add
 * and MPI_Aint_diff, MPI_Pcontrol, MPI_Status_set_elements_x and the _x type queries,
 * MPI_Type_get_envelope and MPI_Type_get_contents for every combiner crmpi's constructors
 * produce, and MPI_T (initialised, with no variables).
 *
 * The envelope/contents test rebuilds each type from what get_contents returns, recursing
 * into derived inner types the way a tool decodes a type, and compares the two typemaps:
 * size, bounds, true bounds, and the bytes MPI_Pack takes from a patterned buffer.
 *
 * MPI is initialised once (group setup) and finalised at the end (group teardown); the
 * MPI_T tests run first, before MPI_Init, since MPI_T must work there too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mpi_internal.h"
#include "test_capture.h"

/* Memory for packing: displacements are relative to the middle, so negative ones fit. */
#define MEMORY_BYTES 65536
#define ORIGIN       (MEMORY_BYTES / 2)

static unsigned char source_memory[MEMORY_BYTES];
static unsigned char packed_original[MEMORY_BYTES];
static unsigned char packed_rebuilt[MEMORY_BYTES];

static int setup(void **state)
{
    (void)state;
    /* A singleton, judged only on the parameters a test sets. */
    unsetenv("CRMPI_CTL_FD");
    setenv("CRMPI_PARAM_FILE", "", 1);
    test_env_clear_mca();
    for (size_t i = 0; i < MEMORY_BYTES; i++) {
        source_memory[i] = (unsigned char)(i * 7 + (i >> 8) * 13 + 1);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    capture_abandon();
    return 0;
}

/* MPI_T before MPI_Init: uninitialised answers, then init, zero variables, nesting. */
static void test_tool_before_init(void **state)
{
    int provided = -1, num = -1, initialized = 1;

    (void)state;
    assert_int_equal(MPI_Initialized(&initialized), MPI_SUCCESS);
    assert_int_equal(initialized, 0);
    assert_int_equal(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    assert_int_equal(MPI_T_cvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    assert_int_equal(MPI_T_pvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    assert_int_equal(MPI_T_category_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    assert_int_equal(num, -1);
    assert_int_equal(MPI_T_init_thread(MPI_THREAD_MULTIPLE + 1, &provided), MPI_T_ERR_INVALID);
    assert_int_equal(MPI_T_init_thread(MPI_THREAD_SINGLE, NULL), MPI_T_ERR_INVALID);

    assert_int_equal(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided), MPI_SUCCESS);
    assert_int_equal(provided, MPI_THREAD_FUNNELED);
    /* A second initialisation nests: two finalizes are needed. */
    assert_int_equal(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
    assert_int_equal(provided, MPI_THREAD_MULTIPLE);
    assert_int_equal(MPI_T_cvar_get_num(&num), MPI_SUCCESS);
    assert_int_equal(num, 0);
    num = -1;
    assert_int_equal(MPI_T_pvar_get_num(&num), MPI_SUCCESS);
    assert_int_equal(num, 0);
    num = -1;
    assert_int_equal(MPI_T_category_get_num(&num), MPI_SUCCESS);
    assert_int_equal(num, 0);
    assert_int_equal(MPI_T_cvar_get_num(NULL), MPI_T_ERR_INVALID);
    assert_int_equal(MPI_T_finalize(), MPI_SUCCESS);
    assert_int_equal(MPI_T_pvar_get_num(&num), MPI_SUCCESS);
    assert_int_equal(MPI_T_finalize(), MPI_SUCCESS);
    assert_int_equal(MPI_T_pvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    assert_int_equal(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);

    /* Arithmetic and Pcontrol need no MPI_Init either. */
    assert_int_equal(MPI_Aint_add(100, -30), 70);
    assert_int_equal(MPI_Pcontrol(1), MPI_SUCCESS);
}

static void test_init(void **state)
{
    int provided = -1;

    (void)state;
    assert_int_equal(MPI_Init(NULL, NULL), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    /* MPI_T inside MPI_Init .. MPI_Finalize, and its own count is independent. */
    assert_int_equal(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    assert_int_equal(provided, MPI_THREAD_SINGLE);
    assert_int_equal(MPI_T_finalize(), MPI_SUCCESS);
}

static void test_alloc_mem(void **state)
{
    enum { MANY = 3000 };
    MPI_Info info;
    char *small = NULL, *empty = NULL, *hinted = NULL;
    void **many = calloc(MANY, sizeof(*many));
    int errclass;

    (void)state;
    assert_non_null(many);
    assert_int_equal(MPI_Alloc_mem(100, MPI_INFO_NULL, &small), MPI_SUCCESS);
    assert_non_null(small);
    assert_int_equal((uintptr_t)small % 64, 0);
    memset(small, 0x5a, 100);
    /* Size 0 gives a pointer MPI_Free_mem takes back; an info object's keys are ignored. */
    assert_int_equal(MPI_Alloc_mem(0, MPI_INFO_NULL, &empty), MPI_SUCCESS);
    assert_non_null(empty);
    assert_int_equal(MPI_Info_create(&info), MPI_SUCCESS);
    assert_int_equal(MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096"), MPI_SUCCESS);
    assert_int_equal(MPI_Alloc_mem(4096, info, &hinted), MPI_SUCCESS);
    assert_int_equal(MPI_Info_free(&info), MPI_SUCCESS);
    assert_true(small != empty && small != hinted && empty != hinted);

    /* Many: the table grows, and frees in an odd order leave every other one findable. */
    for (int i = 0; i < MANY; i++) {
        assert_int_equal(MPI_Alloc_mem((MPI_Aint)(i % 97) + 1, MPI_INFO_NULL, &many[i]),
                         MPI_SUCCESS);
        memset(many[i], i & 0xff, (size_t)(i % 97) + 1);
    }
    for (int i = 0; i < MANY; i += 3) {
        assert_int_equal(MPI_Free_mem(many[i]), MPI_SUCCESS);
    }
    for (int i = 0; i < MANY; i++) {
        if (i % 3 != 0) {
            assert_int_equal(((unsigned char *)many[i])[0], i & 0xff);
            assert_int_equal(MPI_Free_mem(many[i]), MPI_SUCCESS);
        }
    }
    /* Each pointer goes once: a second free is an invalid base, and frees nothing. */
    assert_int_equal(MPI_Free_mem(many[1]), MPI_ERR_BASE);
    free(many);

    /* A pointer of malloc's: refused with MPI_ERR_BASE, left alone (free() still works). */
    char *foreign = malloc(32);
    assert_non_null(foreign);
    assert_int_equal(MPI_Free_mem(foreign), MPI_ERR_BASE);
    assert_int_equal(MPI_Error_class(MPI_ERR_BASE, &errclass), MPI_SUCCESS);
    assert_int_equal(errclass, MPI_ERR_BASE);
    memset(foreign, 1, 32);
    free(foreign);
    /* An address inside an allocation is not its base either. */
    assert_int_equal(MPI_Free_mem(small + 1), MPI_ERR_BASE);
    assert_int_equal(MPI_Free_mem(NULL), MPI_SUCCESS);

    assert_int_equal(MPI_Alloc_mem(-1, MPI_INFO_NULL, &small), MPI_ERR_ARG);
    assert_int_equal(MPI_Alloc_mem(16, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    char *huge = NULL;
    assert_int_equal(MPI_Alloc_mem(PTRDIFF_MAX, MPI_INFO_NULL, &huge), MPI_ERR_NO_MEM);
    assert_null(huge);

    assert_int_equal(small[99], 0x5a);
    assert_int_equal(MPI_Free_mem(small), MPI_SUCCESS);
    assert_int_equal(MPI_Free_mem(empty), MPI_SUCCESS);
    assert_int_equal(MPI_Free_mem(hinted), MPI_SUCCESS);
}

static void test_aint_pcontrol(void **state)
{
    double values[8] = {0};
    MPI_Aint first, fifth, sum;

    (void)state;
    assert_int_equal(MPI_Get_address(&values[0], &first), MPI_SUCCESS);
    assert_int_equal(MPI_Get_address(&values[5], &fifth), MPI_SUCCESS);
    sum = MPI_Aint_add(first, 5 * (MPI_Aint)sizeof(double));
    assert_int_equal(sum, fifth);
    assert_int_equal(MPI_Aint_diff(fifth, first), 5 * (MPI_Aint)sizeof(double));
    assert_int_equal(MPI_Aint_diff(first, fifth), -5 * (MPI_Aint)sizeof(double));
    assert_int_equal(MPI_Aint_add(fifth, -5 * (MPI_Aint)sizeof(double)), first);
    /* Wraps as addresses do instead of being undefined. */
    assert_int_equal(MPI_Aint_add(PTRDIFF_MAX, 1), PTRDIFF_MIN);
    assert_int_equal(MPI_Aint_diff(PTRDIFF_MIN, 1), PTRDIFF_MAX);

    assert_int_equal(MPI_Pcontrol(0), MPI_SUCCESS);
    assert_int_equal(MPI_Pcontrol(2, "phase", 3.5), MPI_SUCCESS);
    assert_int_equal(MPI_Pcontrol(-7), MPI_SUCCESS);
}

static void test_status_and_x_queries(void **state)
{
    MPI_Status status;
    MPI_Count elements, size, lb, extent;
    MPI_Datatype pair, resized;
    int count;
    int blocklengths[2] = {1, 1};
    MPI_Aint displs[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};

    (void)state;
    memset(&status, 0, sizeof(status));
    assert_int_equal(MPI_Status_set_elements_x(&status, MPI_INT, 5), MPI_SUCCESS);
    assert_int_equal(MPI_Get_elements_x(&status, MPI_INT, &elements), MPI_SUCCESS);
    assert_int_equal(elements, 5);
    assert_int_equal(MPI_Get_count(&status, MPI_INT, &count), MPI_SUCCESS);
    assert_int_equal(count, 5);
    /* Beyond an int: only the _x calls can say it. */
    assert_int_equal(MPI_Status_set_elements_x(&status, MPI_BYTE, (MPI_Count)3 << 32), MPI_SUCCESS);
    assert_int_equal(MPI_Get_elements_x(&status, MPI_BYTE, &elements), MPI_SUCCESS);
    assert_int_equal(elements, (MPI_Count)3 << 32);

    /* A partial element of a struct mixing sizes: 3 basic elements = 1 pair + 1 double. */
    assert_int_equal(MPI_Type_create_struct(2, blocklengths, displs, types, &pair), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&pair), MPI_SUCCESS);
    assert_int_equal(MPI_Status_set_elements_x(&status, pair, 3), MPI_SUCCESS);
    assert_int_equal(MPI_Get_elements_x(&status, pair, &elements), MPI_SUCCESS);
    assert_int_equal(elements, 3);
    assert_int_equal(MPI_Get_count(&status, pair, &count), MPI_SUCCESS);
    assert_int_equal(count, MPI_UNDEFINED);

    assert_int_equal(MPI_Status_set_elements_x(&status, MPI_INT, -1), MPI_ERR_COUNT);
    assert_int_equal(MPI_Status_set_elements_x(&status, MPI_DOUBLE, (MPI_Count)1 << 61),
                     MPI_ERR_COUNT);
    assert_int_equal(MPI_Status_set_elements_x(NULL, MPI_INT, 1), MPI_ERR_ARG);
    assert_int_equal(MPI_Status_set_elements_x(&status, MPI_DATATYPE_NULL, 1), MPI_ERR_TYPE);

    /* The _x queries agree with the MPI_Aint ones. */
    assert_int_equal(MPI_Type_create_resized(pair, -8, 32, &resized), MPI_SUCCESS);
    assert_int_equal(MPI_Type_size_x(resized, &size), MPI_SUCCESS);
    assert_int_equal(size, sizeof(double) + sizeof(int));
    assert_int_equal(MPI_Type_get_extent_x(resized, &lb, &extent), MPI_SUCCESS);
    assert_int_equal(lb, -8);
    assert_int_equal(extent, 32);
    assert_int_equal(MPI_Type_get_true_extent_x(resized, &lb, &extent), MPI_SUCCESS);
    assert_int_equal(lb, 0);
    assert_int_equal(extent, 12);
    assert_int_equal(MPI_Type_free(&resized), MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&pair), MPI_SUCCESS);
}

/*
 * Envelope and contents
 */

/* The envelope of a type, checked for consistency on the way. */
typedef struct envelope {
    int num_integers, num_addresses, num_datatypes, combiner;
} envelope_t;

static envelope_t get_envelope(MPI_Datatype type)
{
    envelope_t env;

    assert_int_equal(MPI_Type_get_envelope(type, &env.num_integers, &env.num_addresses,
                                           &env.num_datatypes, &env.combiner),
                     MPI_SUCCESS);
    return env;
}

/* Free a type get_contents returned: derived ones only (predefined ones are themselves). */
static void free_returned(MPI_Datatype type)
{
    if (get_envelope(type).combiner != MPI_COMBINER_NAMED) {
        assert_int_equal(MPI_Type_free(&type), MPI_SUCCESS);
    }
}

/*
 * Build a new type equal to `type` from its envelope and contents, rebuilding derived inner
 * types too. A named type is returned as itself. The caller frees a derived result.
 */
static MPI_Datatype rebuild(MPI_Datatype type)
{
    envelope_t env = get_envelope(type);
    MPI_Datatype result = MPI_DATATYPE_NULL;

    if (env.combiner == MPI_COMBINER_NAMED) {
        return type;
    }
    /* One spare entry each, and never 0-sized allocations. */
    int *ints = calloc((size_t)env.num_integers + 1, sizeof(*ints));
    MPI_Aint *addrs = calloc((size_t)env.num_addresses + 1, sizeof(*addrs));
    MPI_Datatype *inner = calloc((size_t)env.num_datatypes + 1, sizeof(*inner));
    MPI_Datatype *rebuilt = calloc((size_t)env.num_datatypes + 1, sizeof(*rebuilt));

    assert_true(ints && addrs && inner && rebuilt);
    assert_int_equal(MPI_Type_get_contents(type, env.num_integers + 1, env.num_addresses + 1,
                                           env.num_datatypes + 1, ints, addrs, inner),
                     MPI_SUCCESS);
    for (int t = 0; t < env.num_datatypes; t++) {
        rebuilt[t] = rebuild(inner[t]);
        free_returned(inner[t]);
    }
    switch (env.combiner) {
    case MPI_COMBINER_DUP: assert_int_equal(MPI_Type_dup(rebuilt[0], &result), MPI_SUCCESS); break;
    case MPI_COMBINER_CONTIGUOUS:
        assert_int_equal(MPI_Type_contiguous(ints[0], rebuilt[0], &result), MPI_SUCCESS);
        break;
    case MPI_COMBINER_VECTOR:
        assert_int_equal(MPI_Type_vector(ints[0], ints[1], ints[2], rebuilt[0], &result),
                         MPI_SUCCESS);
        break;
    case MPI_COMBINER_HVECTOR:
        assert_int_equal(MPI_Type_create_hvector(ints[0], ints[1], addrs[0], rebuilt[0], &result),
                         MPI_SUCCESS);
        break;
    case MPI_COMBINER_INDEXED:
        assert_int_equal(
            MPI_Type_indexed(ints[0], &ints[1], &ints[1 + ints[0]], rebuilt[0], &result),
            MPI_SUCCESS);
        break;
    case MPI_COMBINER_HINDEXED:
        assert_int_equal(MPI_Type_create_hindexed(ints[0], &ints[1], addrs, rebuilt[0], &result),
                         MPI_SUCCESS);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        assert_int_equal(
            MPI_Type_create_indexed_block(ints[0], ints[1], &ints[2], rebuilt[0], &result),
            MPI_SUCCESS);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        assert_int_equal(
            MPI_Type_create_hindexed_block(ints[0], ints[1], addrs, rebuilt[0], &result),
            MPI_SUCCESS);
        break;
    case MPI_COMBINER_STRUCT:
        assert_int_equal(MPI_Type_create_struct(ints[0], &ints[1], addrs, rebuilt, &result),
                         MPI_SUCCESS);
        break;
    case MPI_COMBINER_SUBARRAY: {
        int ndims = ints[0];

        assert_int_equal(MPI_Type_create_subarray(ndims, &ints[1], &ints[1 + ndims],
                                                  &ints[1 + 2 * ndims], ints[1 + 3 * ndims],
                                                  rebuilt[0], &result),
                         MPI_SUCCESS);
        break;
    }
    case MPI_COMBINER_RESIZED:
        assert_int_equal(MPI_Type_create_resized(rebuilt[0], addrs[0], addrs[1], &result),
                         MPI_SUCCESS);
        break;
    default: fail_msg("combiner %d is not one crmpi's constructors produce", env.combiner);
    }
    for (int t = 0; t < env.num_datatypes; t++) {
        free_returned(rebuilt[t]);
    }
    free(rebuilt);
    free(inner);
    free(addrs);
    free(ints);
    return result;
}

/* The bytes of `count` elements of `type` at the middle of source_memory, packed. */
static int pack_from_source(MPI_Datatype type, int count, unsigned char *out)
{
    int position = 0;

    assert_int_equal(
        MPI_Pack(source_memory + ORIGIN, count, type, out, MEMORY_BYTES, &position, MPI_COMM_WORLD),
        MPI_SUCCESS);
    return position;
}

/*
 * `type` (which it frees) has the combiner and envelope lengths given; its rebuild from
 * get_contents has the same size, bounds and packed bytes.
 */
static void check_round_trip(MPI_Datatype type, int combiner, int num_integers, int num_addresses,
                             int num_datatypes)
{
    envelope_t env = get_envelope(type);
    MPI_Datatype copy;
    MPI_Count size, copy_size;
    MPI_Aint lb, extent, copy_lb, copy_extent;

    assert_int_equal(env.combiner, combiner);
    assert_int_equal(env.num_integers, num_integers);
    assert_int_equal(env.num_addresses, num_addresses);
    assert_int_equal(env.num_datatypes, num_datatypes);

    copy = rebuild(type);
    assert_int_equal(get_envelope(copy).combiner, combiner);
    assert_int_equal(MPI_Type_commit(&type), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&copy), MPI_SUCCESS);
    assert_int_equal(MPI_Type_size_x(type, &size), MPI_SUCCESS);
    assert_int_equal(MPI_Type_size_x(copy, &copy_size), MPI_SUCCESS);
    assert_int_equal(size, copy_size);
    assert_int_equal(MPI_Type_get_extent(type, &lb, &extent), MPI_SUCCESS);
    assert_int_equal(MPI_Type_get_extent(copy, &copy_lb, &copy_extent), MPI_SUCCESS);
    assert_int_equal(lb, copy_lb);
    assert_int_equal(extent, copy_extent);
    assert_int_equal(MPI_Type_get_true_extent(type, &lb, &extent), MPI_SUCCESS);
    assert_int_equal(MPI_Type_get_true_extent(copy, &copy_lb, &copy_extent), MPI_SUCCESS);
    assert_int_equal(lb, copy_lb);
    assert_int_equal(extent, copy_extent);
    /* Two elements, so that the extent (where the second one starts) is compared too. */
    int count = size > 0 ? 2 : 1;
    memset(packed_original, 0, sizeof(packed_original));
    memset(packed_rebuilt, 0xff, sizeof(packed_rebuilt));
    int packed_bytes = pack_from_source(type, count, packed_original);
    assert_int_equal(packed_bytes, count * size);
    assert_int_equal(pack_from_source(copy, count, packed_rebuilt), packed_bytes);
    assert_memory_equal(packed_original, packed_rebuilt, (size_t)packed_bytes);
    assert_int_equal(MPI_Type_free(&copy), MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&type), MPI_SUCCESS);
}

static void test_envelope_named(void **state)
{
    MPI_Datatype named[] = {MPI_INT,  MPI_DOUBLE,          MPI_CHAR,
                            MPI_BYTE, MPI_PACKED,          MPI_DOUBLE_INT,
                            MPI_2INT, MPI_LONG_DOUBLE_INT, MPI_C_DOUBLE_COMPLEX,
                            MPI_AINT};
    int ints[4];
    MPI_Aint addrs[4];
    MPI_Datatype types[4];

    (void)state;
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
        envelope_t env = get_envelope(named[i]);

        assert_int_equal(env.combiner, MPI_COMBINER_NAMED);
        assert_int_equal(env.num_integers, 0);
        assert_int_equal(env.num_addresses, 0);
        assert_int_equal(env.num_datatypes, 0);
        /* get_contents of a named type is erroneous. */
        assert_int_equal(MPI_Type_get_contents(named[i], 4, 4, 4, ints, addrs, types), MPI_ERR_ARG);
    }
    int n;
    assert_int_equal(MPI_Type_get_envelope(MPI_DATATYPE_NULL, &n, &n, &n, &n), MPI_ERR_TYPE);
    assert_int_equal(MPI_Type_get_envelope(MPI_INT, &n, NULL, &n, &n), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_get_contents(MPI_DATATYPE_NULL, 4, 4, 4, ints, addrs, types),
                     MPI_ERR_TYPE);
}

static void test_contents_every_combiner(void **state)
{
    MPI_Datatype type, inner, vector, pair;

    (void)state;
    /* dup: of a named type and of a derived one */
    assert_int_equal(MPI_Type_dup(MPI_INT, &type), MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_DUP, 0, 0, 1);
    assert_int_equal(MPI_Type_vector(2, 1, 3, MPI_SHORT, &inner), MPI_SUCCESS);
    assert_int_equal(MPI_Type_dup(inner, &type), MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&inner), MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_DUP, 0, 0, 1);

    /* contiguous, including count 0 */
    assert_int_equal(MPI_Type_contiguous(3, MPI_DOUBLE, &type), MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
    assert_int_equal(MPI_Type_contiguous(0, MPI_INT, &type), MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_CONTIGUOUS, 1, 0, 1);

    /* vector: positive and negative stride */
    assert_int_equal(MPI_Type_vector(3, 2, 4, MPI_INT, &type), MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_VECTOR, 3, 0, 1);
    assert_int_equal(MPI_Type_vector(3, 1, -2, MPI_SHORT, &type), MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_VECTOR, 3, 0, 1);

    /* hvector of a derived type */
    assert_int_equal(MPI_Type_contiguous(2, MPI_INT, &inner), MPI_SUCCESS);
    assert_int_equal(MPI_Type_create_hvector(2, 3, 40, inner, &type), MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&inner), MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_HVECTOR, 2, 1, 1);

    /* indexed, hindexed (a negative displacement), indexed_block, hindexed_block */
    int blocklengths[3] = {1, 2, 3};
    int displs[3] = {0, 5, 9};
    assert_int_equal(MPI_Type_indexed(3, blocklengths, displs, MPI_INT, &type), MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_INDEXED, 7, 0, 1);
    MPI_Aint hdispls[3] = {16, -8, 40};
    assert_int_equal(MPI_Type_create_hindexed(3, blocklengths, hdispls, MPI_DOUBLE, &type),
                     MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_HINDEXED, 4, 3, 1);
    int block_displs[3] = {4, 0, 8};
    assert_int_equal(MPI_Type_create_indexed_block(3, 2, block_displs, MPI_FLOAT, &type),
                     MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_INDEXED_BLOCK, 5, 0, 1);

    /* struct of a char, two ints and a derived vector; then hindexed_block of it */
    assert_int_equal(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &vector), MPI_SUCCESS);
    int struct_blocks[3] = {1, 2, 1};
    MPI_Aint struct_displs[3] = {0, 4, 16};
    MPI_Datatype struct_types[3] = {MPI_CHAR, MPI_INT, vector};
    assert_int_equal(MPI_Type_create_struct(3, struct_blocks, struct_displs, struct_types, &pair),
                     MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&vector), MPI_SUCCESS);
    MPI_Aint hblock_displs[2] = {0, 96};
    assert_int_equal(MPI_Type_create_hindexed_block(2, 1, hblock_displs, pair, &type), MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_HINDEXED_BLOCK, 2, 2, 1);
    check_round_trip(pair, MPI_COMBINER_STRUCT, 4, 3, 3);

    /* subarray: 3-D in C order, 2-D in Fortran order */
    int sizes[3] = {4, 5, 6}, subsizes[3] = {2, 3, 2}, starts[3] = {1, 2, 3};
    assert_int_equal(
        MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &type),
        MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_SUBARRAY, 11, 0, 1);
    assert_int_equal(
        MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE, &type),
        MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_SUBARRAY, 8, 0, 1);

    /* resized: of a named type, and of a resized struct (markers over markers) */
    assert_int_equal(MPI_Type_create_resized(MPI_INT, -4, 16, &type), MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_RESIZED, 0, 2, 1);
    assert_int_equal(MPI_Type_create_resized(MPI_INT, 0, 12, &inner), MPI_SUCCESS);
    assert_int_equal(MPI_Type_create_resized(inner, 4, 24, &type), MPI_SUCCESS);
    assert_int_equal(MPI_Type_free(&inner), MPI_SUCCESS);
    check_round_trip(type, MPI_COMBINER_RESIZED, 0, 2, 1);
}

/* The values get_contents returns are the constructor's arguments, in the table's order. */
static void test_contents_values(void **state)
{
    int ints[16];
    MPI_Aint addrs[8];
    MPI_Datatype types[4], type, vector;

    (void)state;
    int sizes[2] = {7, 9}, subsizes[2] = {3, 4}, starts[2] = {2, 5};
    assert_int_equal(
        MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_LONG, &type),
        MPI_SUCCESS);
    assert_int_equal(MPI_Type_get_contents(type, 16, 8, 4, ints, addrs, types), MPI_SUCCESS);
    int expected_subarray[8] = {2, 7, 9, 3, 4, 2, 5, MPI_ORDER_FORTRAN};
    assert_memory_equal(ints, expected_subarray, sizeof(expected_subarray));
    assert_ptr_equal(types[0], MPI_LONG);
    assert_int_equal(MPI_Type_free(&type), MPI_SUCCESS);

    int blocklengths[2] = {3, 1};
    MPI_Aint displs[2] = {-24, 1000};
    assert_int_equal(MPI_Type_vector(2, 2, 5, MPI_INT, &vector), MPI_SUCCESS);
    MPI_Datatype members[2] = {vector, MPI_FLOAT};
    assert_int_equal(MPI_Type_create_struct(2, blocklengths, displs, members, &type), MPI_SUCCESS);

    /* The vector's handle is the caller's; the struct holds one reference of its own. */
    int refs_before = vector->refcount;
    assert_int_equal(MPI_Type_get_contents(type, 3, 2, 2, ints, addrs, types), MPI_SUCCESS);
    assert_int_equal(ints[0], 2);
    assert_int_equal(ints[1], 3);
    assert_int_equal(ints[2], 1);
    assert_int_equal(addrs[0], -24);
    assert_int_equal(addrs[1], 1000);
    assert_ptr_equal(types[0], vector);
    assert_ptr_equal(types[1], MPI_FLOAT);
    /* A new reference to the derived one (MPI-3.1 section 4.1.13), none to the named. */
    assert_int_equal(vector->refcount, refs_before + 1);
    /* The caller's own handle and the struct both outlive the one returned. */
    assert_int_equal(MPI_Type_free(&vector), MPI_SUCCESS);
    assert_int_equal(get_envelope(types[0]).combiner, MPI_COMBINER_VECTOR);
    assert_int_equal(MPI_Type_free(&types[0]), MPI_SUCCESS);
    /* Only the struct's reference is left, and get_contents still hands out the vector. */
    assert_int_equal(MPI_Type_get_contents(type, 3, 2, 2, ints, addrs, types), MPI_SUCCESS);
    assert_int_equal(types[0]->refcount, 2);
    int vints[3];
    MPI_Aint vaddr;
    MPI_Datatype vtype;
    assert_int_equal(MPI_Type_get_contents(types[0], 3, 0, 1, vints, &vaddr, &vtype), MPI_SUCCESS);
    assert_int_equal(vints[0], 2);
    assert_int_equal(vints[1], 2);
    assert_int_equal(vints[2], 5);
    assert_ptr_equal(vtype, MPI_INT);
    assert_int_equal(MPI_Type_free(&types[0]), MPI_SUCCESS);

    /* Arrays too small for the envelope, or missing: an error. */
    assert_int_equal(MPI_Type_get_contents(type, 2, 2, 2, ints, addrs, types), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_get_contents(type, 3, 1, 2, ints, addrs, types), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_get_contents(type, 3, 2, 1, ints, addrs, types), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_get_contents(type, 3, 2, 2, NULL, addrs, types), MPI_ERR_ARG);
    assert_int_equal(MPI_Type_free(&type), MPI_SUCCESS);
}

static void test_finalize(void **state)
{
    (void)state;
    assert_int_equal(MPI_Finalize(), MPI_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_tool_before_init, teardown),
        cmocka_unit_test_teardown(test_init, teardown),
        cmocka_unit_test_teardown(test_alloc_mem, teardown),
        cmocka_unit_test_teardown(test_aint_pcontrol, teardown),
        cmocka_unit_test_teardown(test_status_and_x_queries, teardown),
        cmocka_unit_test_teardown(test_envelope_named, teardown),
        cmocka_unit_test_teardown(test_contents_every_combiner, teardown),
        cmocka_unit_test_teardown(test_contents_values, teardown),
        cmocka_unit_test_teardown(test_finalize, teardown),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
