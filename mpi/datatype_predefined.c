/*
 * datatype_predefined.c: the predefined datatypes of MPI-3.1 section 3.2.2 (C types,
 * fixed-size integers, MPI_Aint/MPI_Offset/MPI_Count, complex types, MPI_BYTE,
 * MPI_PACKED) and the value-index pairs of section 5.9.4.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "mpi_internal.h"

/*
 * A type that is one C type: no gaps, extent equal to size, one run of one basic element.
 * The run is a static array: predefined types are never freed.
 */
#define DATATYPE_BASIC(object, mpi_name, c_type)                                                   \
    static crmpi_dt_run_t object##_runs[1] = {                                                     \
        {.disp = 0, .len = sizeof(c_type), .basic_size = sizeof(c_type)},                          \
    };                                                                                             \
    struct crmpi_predefined_datatype_s object = {.dt = {                                           \
                                                     .name = mpi_name,                             \
                                                     .size = sizeof(c_type),                       \
                                                     .lb = 0,                                      \
                                                     .extent = sizeof(c_type),                     \
                                                     .true_lb = 0,                                 \
                                                     .true_extent = sizeof(c_type),                \
                                                     .predefined = true,                           \
                                                     .committed = true,                            \
                                                     .refcount = 1,                                \
                                                     .combiner = MPI_COMBINER_NAMED,               \
                                                     .runs = object##_runs,                        \
                                                     .num_runs = 1,                                \
                                                     .run_len = sizeof(c_type),                    \
                                                     .runs_regular = true,                         \
                                                     .basic_count = 1,                             \
                                                     .contiguous = true,                           \
                                                     .align = _Alignof(c_type),                    \
                                                 }}

/*
 * A value-index pair laid out as struct { value_type value; int index; }: its data are the
 * two members, its extent includes the padding a C array of such structs has. The members
 * are one run when they abut and have one basic size (MPI_2INT, MPI_FLOAT_INT), as a
 * derived type's adjacent runs are merged; the pair is then dense, hence contiguous.
 */
#define DATATYPE_PAIR_MERGED(pair_type, value_type)                                                \
    (offsetof(pair_type, index) == sizeof(value_type) && sizeof(value_type) == sizeof(int))

#define DATATYPE_PAIR(object, mpi_name, value_type)                                                \
    struct datatype_pair_##object {                                                                \
        value_type value;                                                                          \
        int index;                                                                                 \
    };                                                                                             \
    static crmpi_dt_run_t object##_runs[2] = {                                                     \
        {                                                                                          \
            .disp = 0,                                                                             \
            .len = DATATYPE_PAIR_MERGED(struct datatype_pair_##object, value_type)                 \
                       ? sizeof(value_type) + sizeof(int)                                          \
                       : sizeof(value_type),                                                       \
            .basic_size = sizeof(value_type),                                                      \
        },                                                                                         \
        {                                                                                          \
            .disp = offsetof(struct datatype_pair_##object, index),                                \
            .len = sizeof(int),                                                                    \
            .basic_size = sizeof(int),                                                             \
        },                                                                                         \
    };                                                                                             \
    struct crmpi_predefined_datatype_s object = {                                                  \
        .dt = {                                                                                    \
            .name = mpi_name,                                                                      \
            .size = sizeof(value_type) + sizeof(int),                                              \
            .lb = 0,                                                                               \
            .extent = sizeof(struct datatype_pair_##object),                                       \
            .true_lb = 0,                                                                          \
            .true_extent = offsetof(struct datatype_pair_##object, index) + sizeof(int),           \
            .predefined = true,                                                                    \
            .committed = true,                                                                     \
            .refcount = 1,                                                                         \
            .combiner = MPI_COMBINER_NAMED,                                                        \
            .runs = object##_runs,                                                                 \
            .num_runs = DATATYPE_PAIR_MERGED(struct datatype_pair_##object, value_type) ? 1 : 2,   \
            .run_len = DATATYPE_PAIR_MERGED(struct datatype_pair_##object, value_type)             \
                           ? sizeof(value_type) + sizeof(int)                                      \
                           : 0,                                                                    \
            .runs_regular = DATATYPE_PAIR_MERGED(struct datatype_pair_##object, value_type),       \
            .basic_count = 2,                                                                      \
            .contiguous =                                                                          \
                DATATYPE_PAIR_MERGED(struct datatype_pair_##object, value_type) &&                 \
                sizeof(value_type) + sizeof(int) == sizeof(struct datatype_pair_##object),         \
            .align = _Alignof(struct datatype_pair_##object),                                      \
        }}

DATATYPE_BASIC(crmpi_mpi_char, "MPI_CHAR", char);
DATATYPE_BASIC(crmpi_mpi_signed_char, "MPI_SIGNED_CHAR", signed char);
DATATYPE_BASIC(crmpi_mpi_unsigned_char, "MPI_UNSIGNED_CHAR", unsigned char);
DATATYPE_BASIC(crmpi_mpi_byte, "MPI_BYTE", unsigned char);
DATATYPE_BASIC(crmpi_mpi_wchar, "MPI_WCHAR", wchar_t);
DATATYPE_BASIC(crmpi_mpi_short, "MPI_SHORT", short);
DATATYPE_BASIC(crmpi_mpi_unsigned_short, "MPI_UNSIGNED_SHORT", unsigned short);
DATATYPE_BASIC(crmpi_mpi_int, "MPI_INT", int);
DATATYPE_BASIC(crmpi_mpi_unsigned, "MPI_UNSIGNED", unsigned);
DATATYPE_BASIC(crmpi_mpi_long, "MPI_LONG", long);
DATATYPE_BASIC(crmpi_mpi_unsigned_long, "MPI_UNSIGNED_LONG", unsigned long);
DATATYPE_BASIC(crmpi_mpi_long_long_int, "MPI_LONG_LONG_INT", long long);
DATATYPE_BASIC(crmpi_mpi_unsigned_long_long, "MPI_UNSIGNED_LONG_LONG", unsigned long long);
DATATYPE_BASIC(crmpi_mpi_float, "MPI_FLOAT", float);
DATATYPE_BASIC(crmpi_mpi_double, "MPI_DOUBLE", double);
DATATYPE_BASIC(crmpi_mpi_long_double, "MPI_LONG_DOUBLE", long double);
DATATYPE_BASIC(crmpi_mpi_c_bool, "MPI_C_BOOL", _Bool);
DATATYPE_BASIC(crmpi_mpi_int8_t, "MPI_INT8_T", int8_t);
DATATYPE_BASIC(crmpi_mpi_int16_t, "MPI_INT16_T", int16_t);
DATATYPE_BASIC(crmpi_mpi_int32_t, "MPI_INT32_T", int32_t);
DATATYPE_BASIC(crmpi_mpi_int64_t, "MPI_INT64_T", int64_t);
DATATYPE_BASIC(crmpi_mpi_uint8_t, "MPI_UINT8_T", uint8_t);
DATATYPE_BASIC(crmpi_mpi_uint16_t, "MPI_UINT16_T", uint16_t);
DATATYPE_BASIC(crmpi_mpi_uint32_t, "MPI_UINT32_T", uint32_t);
DATATYPE_BASIC(crmpi_mpi_uint64_t, "MPI_UINT64_T", uint64_t);
DATATYPE_BASIC(crmpi_mpi_aint, "MPI_AINT", MPI_Aint);
DATATYPE_BASIC(crmpi_mpi_offset, "MPI_OFFSET", MPI_Offset);
DATATYPE_BASIC(crmpi_mpi_count, "MPI_COUNT", MPI_Count);
DATATYPE_BASIC(crmpi_mpi_c_float_complex, "MPI_C_FLOAT_COMPLEX", float _Complex);
DATATYPE_BASIC(crmpi_mpi_c_double_complex, "MPI_C_DOUBLE_COMPLEX", double _Complex);
DATATYPE_BASIC(crmpi_mpi_c_long_double_complex, "MPI_C_LONG_DOUBLE_COMPLEX", long double _Complex);
/* The C++ types have the C types' layout on every ABI crmpi builds for (Itanium C++ ABI). */
DATATYPE_BASIC(crmpi_mpi_cxx_bool, "MPI_CXX_BOOL", _Bool);
DATATYPE_BASIC(crmpi_mpi_cxx_float_complex, "MPI_CXX_FLOAT_COMPLEX", float _Complex);
DATATYPE_BASIC(crmpi_mpi_cxx_double_complex, "MPI_CXX_DOUBLE_COMPLEX", double _Complex);
DATATYPE_BASIC(crmpi_mpi_cxx_long_double_complex, "MPI_CXX_LONG_DOUBLE_COMPLEX",
               long double _Complex);
/* Packed data is counted in bytes (MPI_Pack_size, MPI_Get_count on MPI_PACKED). */
DATATYPE_BASIC(crmpi_mpi_packed, "MPI_PACKED", unsigned char);

DATATYPE_PAIR(crmpi_mpi_float_int, "MPI_FLOAT_INT", float);
DATATYPE_PAIR(crmpi_mpi_double_int, "MPI_DOUBLE_INT", double);
DATATYPE_PAIR(crmpi_mpi_long_int, "MPI_LONG_INT", long);
DATATYPE_PAIR(crmpi_mpi_2int, "MPI_2INT", int);
DATATYPE_PAIR(crmpi_mpi_short_int, "MPI_SHORT_INT", short);
DATATYPE_PAIR(crmpi_mpi_long_double_int, "MPI_LONG_DOUBLE_INT", long double);
