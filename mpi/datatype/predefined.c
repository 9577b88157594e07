/*
 * predefined.c: the predefined datatypes of MPI-3.1 section 3.2.2 (C types, fixed-size
 * integers, MPI_Aint/MPI_Offset/MPI_Count, complex types, MPI_BYTE, MPI_PACKED) and the
 * value-index pairs of section 5.9.4: static engine types (datatype.h) in blocks of a
 * fixed size (mpi_internal.h), named as MPI names them.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "type_internal.h"

/* A type that is one C type. The run is a static array: predefined types are never freed. */
#define DATATYPE_BASIC(object, mpi_name, c_type)                                                   \
    static crmpi_dt_run_t object##_runs[1] = {CRMPI_DATATYPE_BASIC_RUN(c_type)};                   \
    struct crmpi_predefined_datatype_s object = {                                                  \
        .dt = CRMPI_DATATYPE_STATIC_BASIC(mpi_name, object##_runs, c_type)}

/* A value-index pair, laid out as struct { value_type value; int index; } (section 5.9.4). */
#define DATATYPE_PAIR(object, mpi_name, value_type)                                                \
    struct datatype_pair_##object {                                                                \
        value_type value;                                                                          \
        int index;                                                                                 \
    };                                                                                             \
    static crmpi_dt_run_t object##_runs[2] =                                                       \
        CRMPI_DATATYPE_PAIR_RUNS(struct datatype_pair_##object, value_type, index, int);           \
    struct crmpi_predefined_datatype_s object = {                                                  \
        .dt = CRMPI_DATATYPE_STATIC_PAIR(mpi_name, object##_runs, struct datatype_pair_##object,   \
                                         value_type, index, int)}

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
