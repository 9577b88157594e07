/*
 * coll_op.c: the reduction kernels of the predefined operations on every type MPI-3.1
 * section 5.9.2 defines them on, and the calls of user operations (coll.h).
 *
 *   MAX, MIN          C integer, floating point, multi-language (MPI_AINT, _OFFSET, _COUNT)
 *   SUM, PROD         those and complex
 *   LAND, LOR, LXOR   C integer, logical
 *   BAND, BOR, BXOR   C integer, byte, multi-language
 *   MAXLOC, MINLOC    the value-index pairs (section 5.9.4), the lower index on ties
 * and the Fortran types of the same classes (Fortran integer: arithmetic and bitwise;
 * MPI_LOGICAL: logical; MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION: MINLOC/MAXLOC).
 * Beyond the standard, as MPICH and Open MPI do, so that programs written against them run
 * unchanged: the logical ops on the multi-language types, and MPI_CHAR (in no class of
 * section 5.9.2) as the C integer type char.
 *
 * A kernel computes inout[i] = in[i] op inout[i] over an array of C values.
 */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "crmpi_status.h"
#include "progress.h"

typedef void (*op_kernel_fn_t)(const void *in, void *inout, size_t count);

/* Columns of the kernel table: the predefined reductions, by their kind (coll.h). User
 * ops, MPI_REPLACE and MPI_NO_OP have no kernel. */
enum {
    OP_MAX = CRMPI_COLL_OP_MAX,
    OP_MIN = CRMPI_COLL_OP_MIN,
    OP_SUM = CRMPI_COLL_OP_SUM,
    OP_PROD = CRMPI_COLL_OP_PROD,
    OP_LAND = CRMPI_COLL_OP_LAND,
    OP_LOR = CRMPI_COLL_OP_LOR,
    OP_LXOR = CRMPI_COLL_OP_LXOR,
    OP_BAND = CRMPI_COLL_OP_BAND,
    OP_BOR = CRMPI_COLL_OP_BOR,
    OP_BXOR = CRMPI_COLL_OP_BXOR,
    OP_MAXLOC = CRMPI_COLL_OP_MAXLOC,
    OP_MINLOC = CRMPI_COLL_OP_MINLOC,
    OP_NUM = CRMPI_COLL_OP_COUNT
};

#define KERNEL(name, ctype, expr)                                                                  \
    static void name(const void *in_v, void *inout_v, size_t count)                                \
    {                                                                                              \
        const ctype *in = in_v;                                                                    \
        ctype *io = inout_v;                                                                       \
        for (size_t i = 0; i < count; i++) {                                                       \
            ctype a = in[i], b = io[i];                                                            \
            io[i] = (expr);                                                                        \
        }                                                                                          \
    }

/* The arithmetic ops of one C type. */
#define KERNELS_ARITH(tname, ctype)                                                                \
    KERNEL(k_max_##tname, ctype, a > b ? a : b)                                                    \
    KERNEL(k_min_##tname, ctype, a < b ? a : b)                                                    \
    KERNEL(k_sum_##tname, ctype, a + b)                                                            \
    KERNEL(k_prod_##tname, ctype, a *b)

/* The logical and bitwise ops of an integer type. */
#define KERNELS_BITS(tname, ctype)                                                                 \
    KERNEL(k_land_##tname, ctype, (ctype)(a && b))                                                 \
    KERNEL(k_lor_##tname, ctype, (ctype)(a || b))                                                  \
    KERNEL(k_lxor_##tname, ctype, (ctype)(!a != !b))                                               \
    KERNEL(k_band_##tname, ctype, a &b)                                                            \
    KERNEL(k_bor_##tname, ctype, a | b)                                                            \
    KERNEL(k_bxor_##tname, ctype, a ^ b)

#define KERNELS_INT(tname, ctype) KERNELS_ARITH(tname, ctype) KERNELS_BITS(tname, ctype)

KERNELS_INT(char, char)
KERNELS_INT(schar, signed char)
KERNELS_INT(uchar, unsigned char)
KERNELS_INT(short, short)
KERNELS_INT(ushort, unsigned short)
KERNELS_INT(int, int)
KERNELS_INT(uint, unsigned)
KERNELS_INT(long, long)
KERNELS_INT(ulong, unsigned long)
KERNELS_INT(llong, long long)
KERNELS_INT(ullong, unsigned long long)
KERNELS_INT(i8, int8_t)
KERNELS_INT(i16, int16_t)
KERNELS_INT(i32, int32_t)
KERNELS_INT(i64, int64_t)
KERNELS_INT(u8, uint8_t)
KERNELS_INT(u16, uint16_t)
KERNELS_INT(u32, uint32_t)
KERNELS_INT(u64, uint64_t)
KERNELS_INT(aint, MPI_Aint)
KERNELS_INT(offset, MPI_Offset)
KERNELS_INT(count, MPI_Count)
KERNELS_ARITH(float, float)
KERNELS_ARITH(double, double)
KERNELS_ARITH(ldouble, long double)
KERNEL(k_sum_cfloat, float _Complex, a + b)
KERNEL(k_prod_cfloat, float _Complex, a *b)
KERNEL(k_sum_cdouble, double _Complex, a + b)
KERNEL(k_prod_cdouble, double _Complex, a *b)
KERNEL(k_sum_cldouble, long double _Complex, a + b)
KERNEL(k_prod_cldouble, long double _Complex, a *b)
KERNEL(k_land_bool, _Bool, a &&b)
KERNEL(k_lor_bool, _Bool, a || b)
KERNEL(k_lxor_bool, _Bool, a != b)
KERNEL(k_band_byte, unsigned char, a &b)
KERNEL(k_bor_byte, unsigned char, a | b)
KERNEL(k_bxor_byte, unsigned char, a ^ b)

/*
 * MAXLOC and MINLOC: the better value wins; equal values keep the lower index. The members
 * are assigned one by one, never the whole struct: a pair's data ends before its padding
 * (MPI_DOUBLE_INT has 12 bytes of data in 16), and the last pair of a buffer may end with
 * its data (a temporary buffer of the collectives, or one the application sized by the
 * type's true extent).
 */
#define KERNELS_LOC(tname, vtype, itype)                                                           \
    typedef struct {                                                                               \
        vtype value;                                                                               \
        itype index;                                                                               \
    } pair_##tname##_t;                                                                            \
    static void k_maxloc_##tname(const void *in_v, void *inout_v, size_t count)                    \
    {                                                                                              \
        const pair_##tname##_t *in = in_v;                                                         \
        pair_##tname##_t *io = inout_v;                                                            \
        for (size_t i = 0; i < count; i++) {                                                       \
            if (in[i].value > io[i].value) {                                                       \
                io[i].value = in[i].value;                                                         \
                io[i].index = in[i].index;                                                         \
            } else if (in[i].value == io[i].value && in[i].index < io[i].index) {                  \
                io[i].index = in[i].index;                                                         \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void k_minloc_##tname(const void *in_v, void *inout_v, size_t count)                    \
    {                                                                                              \
        const pair_##tname##_t *in = in_v;                                                         \
        pair_##tname##_t *io = inout_v;                                                            \
        for (size_t i = 0; i < count; i++) {                                                       \
            if (in[i].value < io[i].value) {                                                       \
                io[i].value = in[i].value;                                                         \
                io[i].index = in[i].index;                                                         \
            } else if (in[i].value == io[i].value && in[i].index < io[i].index) {                  \
                io[i].index = in[i].index;                                                         \
            }                                                                                      \
        }                                                                                          \
    }

KERNELS_LOC(float, float, int)
KERNELS_LOC(double, double, int)
KERNELS_LOC(long, long, int)
KERNELS_LOC(int, int, int)
KERNELS_LOC(short, short, int)
KERNELS_LOC(ldouble, long double, int)
/* Fortran's pairs: the index has the value's type. */
KERNELS_LOC(real_real, float, float)
KERNELS_LOC(dp_dp, double, double)

/* One row per predefined type: its kernel for each op, NULL where the op is undefined. */
typedef struct op_type_row {
    MPI_Datatype type;             /* the predefined type */
    op_kernel_fn_t kernel[OP_NUM]; /* indexed by OP_* (an op's kind) */
} op_type_row_t;

#define ROW_INT(mpi_type, tname)                                                                   \
    {                                                                                              \
        mpi_type,                                                                                  \
        {                                                                                          \
            [OP_MAX] = k_max_##tname, [OP_MIN] = k_min_##tname, [OP_SUM] = k_sum_##tname,          \
            [OP_PROD] = k_prod_##tname, [OP_LAND] = k_land_##tname, [OP_LOR] = k_lor_##tname,      \
            [OP_LXOR] = k_lxor_##tname, [OP_BAND] = k_band_##tname, [OP_BOR] = k_bor_##tname,      \
            [OP_BXOR] = k_bxor_##tname,                                                            \
        }                                                                                          \
    }
/* Fortran integers: no logical ops (those are MPI_LOGICAL's). */
#define ROW_FORTRAN_INT(mpi_type, tname)                                                           \
    {                                                                                              \
        mpi_type,                                                                                  \
        {                                                                                          \
            [OP_MAX] = k_max_##tname, [OP_MIN] = k_min_##tname, [OP_SUM] = k_sum_##tname,          \
            [OP_PROD] = k_prod_##tname, [OP_BAND] = k_band_##tname, [OP_BOR] = k_bor_##tname,      \
            [OP_BXOR] = k_bxor_##tname,                                                            \
        }                                                                                          \
    }
#define ROW_FLOAT(mpi_type, tname)                                                                 \
    {                                                                                              \
        mpi_type,                                                                                  \
        {                                                                                          \
            [OP_MAX] = k_max_##tname, [OP_MIN] = k_min_##tname, [OP_SUM] = k_sum_##tname,          \
            [OP_PROD] = k_prod_##tname,                                                            \
        }                                                                                          \
    }
#define ROW_COMPLEX(mpi_type, tname)                                                               \
    {                                                                                              \
        mpi_type,                                                                                  \
        {                                                                                          \
            [OP_SUM] = k_sum_##tname, [OP_PROD] = k_prod_##tname                                   \
        }                                                                                          \
    }
#define ROW_BOOL(mpi_type)                                                                         \
    {                                                                                              \
        mpi_type,                                                                                  \
        {                                                                                          \
            [OP_LAND] = k_land_bool, [OP_LOR] = k_lor_bool, [OP_LXOR] = k_lxor_bool                \
        }                                                                                          \
    }
#define ROW_LOC(mpi_type, tname)                                                                   \
    {                                                                                              \
        mpi_type,                                                                                  \
        {                                                                                          \
            [OP_MAXLOC] = k_maxloc_##tname, [OP_MINLOC] = k_minloc_##tname                         \
        }                                                                                          \
    }

/* MPI_WCHAR and MPI_PACKED are in no class: no op is defined on them (MPI_CHAR neither,
 * but see the top of the file). */
static const op_type_row_t op_rows[] = {
    ROW_INT(MPI_CHAR, char),
    ROW_INT(MPI_SIGNED_CHAR, schar),
    ROW_INT(MPI_UNSIGNED_CHAR, uchar),
    ROW_INT(MPI_SHORT, short),
    ROW_INT(MPI_UNSIGNED_SHORT, ushort),
    ROW_INT(MPI_INT, int),
    ROW_INT(MPI_UNSIGNED, uint),
    ROW_INT(MPI_LONG, long),
    ROW_INT(MPI_UNSIGNED_LONG, ulong),
    ROW_INT(MPI_LONG_LONG_INT, llong),
    ROW_INT(MPI_UNSIGNED_LONG_LONG, ullong),
    ROW_INT(MPI_INT8_T, i8),
    ROW_INT(MPI_INT16_T, i16),
    ROW_INT(MPI_INT32_T, i32),
    ROW_INT(MPI_INT64_T, i64),
    ROW_INT(MPI_UINT8_T, u8),
    ROW_INT(MPI_UINT16_T, u16),
    ROW_INT(MPI_UINT32_T, u32),
    ROW_INT(MPI_UINT64_T, u64),
    ROW_INT(MPI_AINT, aint),
    ROW_INT(MPI_OFFSET, offset),
    ROW_INT(MPI_COUNT, count),
    ROW_FLOAT(MPI_FLOAT, float),
    ROW_FLOAT(MPI_DOUBLE, double),
    ROW_FLOAT(MPI_LONG_DOUBLE, ldouble),
    ROW_COMPLEX(MPI_C_FLOAT_COMPLEX, cfloat),
    ROW_COMPLEX(MPI_C_DOUBLE_COMPLEX, cdouble),
    ROW_COMPLEX(MPI_C_LONG_DOUBLE_COMPLEX, cldouble),
    ROW_COMPLEX(MPI_CXX_FLOAT_COMPLEX, cfloat),
    ROW_COMPLEX(MPI_CXX_DOUBLE_COMPLEX, cdouble),
    ROW_COMPLEX(MPI_CXX_LONG_DOUBLE_COMPLEX, cldouble),
    ROW_BOOL(MPI_C_BOOL),
    ROW_BOOL(MPI_CXX_BOOL),
    {MPI_BYTE, {[OP_BAND] = k_band_byte, [OP_BOR] = k_bor_byte, [OP_BXOR] = k_bxor_byte}},
    ROW_LOC(MPI_FLOAT_INT, float),
    ROW_LOC(MPI_DOUBLE_INT, double),
    ROW_LOC(MPI_LONG_INT, long),
    ROW_LOC(MPI_2INT, int),
    ROW_LOC(MPI_SHORT_INT, short),
    ROW_LOC(MPI_LONG_DOUBLE_INT, ldouble),
    /* Fortran: integers have no logical ops (those are for LOGICAL); MPI_LOGICAL has only
     * them. */
    ROW_FORTRAN_INT(MPI_INTEGER, i32),
    ROW_FORTRAN_INT(MPI_INTEGER1, i8),
    ROW_FORTRAN_INT(MPI_INTEGER2, i16),
    ROW_FORTRAN_INT(MPI_INTEGER4, i32),
    ROW_FORTRAN_INT(MPI_INTEGER8, i64),
    ROW_FLOAT(MPI_REAL, float),
    ROW_FLOAT(MPI_DOUBLE_PRECISION, double),
    ROW_FLOAT(MPI_REAL4, float),
    ROW_FLOAT(MPI_REAL8, double),
    ROW_COMPLEX(MPI_COMPLEX, cfloat),
    ROW_COMPLEX(MPI_DOUBLE_COMPLEX, cdouble),
    ROW_COMPLEX(MPI_COMPLEX8, cfloat),
    ROW_COMPLEX(MPI_COMPLEX16, cdouble),
    {MPI_LOGICAL, {[OP_LAND] = k_land_i32, [OP_LOR] = k_lor_i32, [OP_LXOR] = k_lxor_i32}},
    ROW_LOC(MPI_2INTEGER, int),
    ROW_LOC(MPI_2REAL, real_real),
    ROW_LOC(MPI_2DOUBLE_PRECISION, dp_dp),
};

/* The last lookup: applications reduce the same (op, type) again and again. Read and
 * written with the library lock held. */
static struct {
    crmpi_coll_op_kind_t kind;
    MPI_Datatype type;
    op_kernel_fn_t kernel;
} op_last;

static op_kernel_fn_t op_kernel(const crmpi_coll_op_t *op, MPI_Datatype type)
{
    if (op->kind == op_last.kind && type == op_last.type)
        return op_last.kernel;
    if (op->kind <= CRMPI_COLL_OP_USER || op->kind >= CRMPI_COLL_OP_COUNT)
        return NULL;
    for (size_t r = 0; r < sizeof(op_rows) / sizeof(op_rows[0]); r++) {
        if (op_rows[r].type == type) {
            op_last.kind = op->kind;
            op_last.type = type;
            op_last.kernel = op_rows[r].kernel[op->kind];
            return op_last.kernel;
        }
    }
    return NULL;
}

bool crmpi_coll_op_defined(const crmpi_coll_op_t *op, MPI_Datatype type)
{
    if (op->kind == CRMPI_COLL_OP_USER)
        return true;
    return op_kernel(op, type) != NULL;
}

int crmpi_coll_op_reduce(const crmpi_coll_op_t *op, const void *in, void *inout, size_t count,
                         MPI_Datatype type)
{
    if (count == 0)
        return CRMPI_OK;
    if (op->kind == CRMPI_COLL_OP_USER && op->user_fn_c != NULL) {
        MPI_Count len = (MPI_Count)count;
        MPI_Datatype dt = type;

        /* An MPI_Count length takes every count at once; unlocked as below. */
        crmpi_unlock();
        op->user_fn_c((void *)in, inout, &len, &dt);
        crmpi_lock();
        return CRMPI_OK;
    }
    if (op->kind == CRMPI_COLL_OP_USER) {
        /* The user function takes an int count: call it in pieces that fit. */
        while (count > 0) {
            int len = count > INT_MAX ? INT_MAX : (int)count;
            MPI_Datatype dt = type;

            /* Without the library lock: a user function may call MPI (MPI_Type_get_extent
             * on its datatype, typically), and every MPI call takes the lock. */
            crmpi_unlock();
            op->user_fn((void *)in, inout, &len, &dt);
            crmpi_lock();
            in = (const char *)in + (MPI_Aint)len * type->extent;
            inout = (char *)inout + (MPI_Aint)len * type->extent;
            count -= (size_t)len;
        }
        return CRMPI_OK;
    }
    op_kernel_fn_t kernel = op_kernel(op, type);
    if (!kernel)
        return CRMPI_ERR_NOT_SUPPORTED;
    kernel(in, inout, count);
    return CRMPI_OK;
}
