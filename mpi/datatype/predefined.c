/*
 * predefined.c: the predefined datatypes of MPI-3.1 section 3.2.2 (C types, fixed-size
 * integers, MPI_Aint/MPI_Offset/MPI_Count, complex types, MPI_BYTE, MPI_PACKED) and the
 * value-index pairs of section 5.9.4, the Fortran types of section 3.2.2 with the sizes of
 * gfortran on this platform (crmpi has no Fortran bindings, but C programs and libraries
 * name these handles), and MPI-1's bound markers MPI_LB and MPI_UB: static engine types
 * (datatype.h) in blocks of a fixed size (mpi_internal.h), named as MPI names them. Each
 * basic run carries its kind (type_internal.h), what MPI_Pack_external converts by.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "type_internal.h"

/* A type that is one C type of basic kind `kind`. The run is a static array: predefined
 * types are never freed. */
#define DATATYPE_BASIC(object, mpi_name, c_type, kind)                                             \
    static crmpi_dt_run_t object##_runs[1] = {CRMPI_DATATYPE_BASIC_RUN(c_type, kind)};             \
    struct crmpi_predefined_datatype_s object = {                                                  \
        .dt = CRMPI_DATATYPE_STATIC_BASIC(mpi_name, object##_runs, c_type)}

/* A value-index pair, laid out as struct { value_type value; index_type index; } (section
 * 5.9.4; the index is an int in C, of the value's type in Fortran). */
#define DATATYPE_PAIR(object, mpi_name, value_type, value_kind, index_type, index_kind)            \
    struct datatype_pair_##object {                                                                \
        value_type value;                                                                          \
        index_type index;                                                                          \
    };                                                                                             \
    static crmpi_dt_run_t object##_runs[2] = CRMPI_DATATYPE_PAIR_RUNS(                             \
        struct datatype_pair_##object, value_type, value_kind, index, index_type, index_kind);     \
    struct crmpi_predefined_datatype_s object = {                                                  \
        .dt = CRMPI_DATATYPE_STATIC_PAIR(mpi_name, object##_runs, struct datatype_pair_##object,   \
                                         value_type, value_kind, index, index_type, index_kind)}

#define PLAIN        CRMPI_TYPE_KIND_PLAIN
#define COMPLEX      CRMPI_TYPE_KIND_COMPLEX
#define LDOUBLE      CRMPI_TYPE_KIND_LONG_DOUBLE
#define LDOUBLE_CPLX CRMPI_TYPE_KIND_LONG_DOUBLE_COMPLEX

DATATYPE_BASIC(crmpi_mpi_char, "MPI_CHAR", char, PLAIN);
DATATYPE_BASIC(crmpi_mpi_signed_char, "MPI_SIGNED_CHAR", signed char, PLAIN);
DATATYPE_BASIC(crmpi_mpi_unsigned_char, "MPI_UNSIGNED_CHAR", unsigned char, PLAIN);
DATATYPE_BASIC(crmpi_mpi_byte, "MPI_BYTE", unsigned char, PLAIN);
DATATYPE_BASIC(crmpi_mpi_wchar, "MPI_WCHAR", wchar_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_short, "MPI_SHORT", short, PLAIN);
DATATYPE_BASIC(crmpi_mpi_unsigned_short, "MPI_UNSIGNED_SHORT", unsigned short, PLAIN);
DATATYPE_BASIC(crmpi_mpi_int, "MPI_INT", int, PLAIN);
DATATYPE_BASIC(crmpi_mpi_unsigned, "MPI_UNSIGNED", unsigned, PLAIN);
DATATYPE_BASIC(crmpi_mpi_long, "MPI_LONG", long, CRMPI_TYPE_KIND_LONG);
DATATYPE_BASIC(crmpi_mpi_unsigned_long, "MPI_UNSIGNED_LONG", unsigned long, CRMPI_TYPE_KIND_ULONG);
DATATYPE_BASIC(crmpi_mpi_long_long_int, "MPI_LONG_LONG_INT", long long, PLAIN);
DATATYPE_BASIC(crmpi_mpi_unsigned_long_long, "MPI_UNSIGNED_LONG_LONG", unsigned long long, PLAIN);
DATATYPE_BASIC(crmpi_mpi_float, "MPI_FLOAT", float, PLAIN);
DATATYPE_BASIC(crmpi_mpi_double, "MPI_DOUBLE", double, PLAIN);
DATATYPE_BASIC(crmpi_mpi_long_double, "MPI_LONG_DOUBLE", long double, LDOUBLE);
DATATYPE_BASIC(crmpi_mpi_c_bool, "MPI_C_BOOL", _Bool, PLAIN);
DATATYPE_BASIC(crmpi_mpi_int8_t, "MPI_INT8_T", int8_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_int16_t, "MPI_INT16_T", int16_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_int32_t, "MPI_INT32_T", int32_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_int64_t, "MPI_INT64_T", int64_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_uint8_t, "MPI_UINT8_T", uint8_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_uint16_t, "MPI_UINT16_T", uint16_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_uint32_t, "MPI_UINT32_T", uint32_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_uint64_t, "MPI_UINT64_T", uint64_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_aint, "MPI_AINT", MPI_Aint, PLAIN);
DATATYPE_BASIC(crmpi_mpi_offset, "MPI_OFFSET", MPI_Offset, PLAIN);
DATATYPE_BASIC(crmpi_mpi_count, "MPI_COUNT", MPI_Count, PLAIN);
DATATYPE_BASIC(crmpi_mpi_c_float_complex, "MPI_C_FLOAT_COMPLEX", float _Complex, COMPLEX);
DATATYPE_BASIC(crmpi_mpi_c_double_complex, "MPI_C_DOUBLE_COMPLEX", double _Complex, COMPLEX);
DATATYPE_BASIC(crmpi_mpi_c_long_double_complex, "MPI_C_LONG_DOUBLE_COMPLEX", long double _Complex,
               LDOUBLE_CPLX);
/* The C++ types have the C types' layout on every ABI crmpi builds for (Itanium C++ ABI). */
DATATYPE_BASIC(crmpi_mpi_cxx_bool, "MPI_CXX_BOOL", _Bool, PLAIN);
DATATYPE_BASIC(crmpi_mpi_cxx_float_complex, "MPI_CXX_FLOAT_COMPLEX", float _Complex, COMPLEX);
DATATYPE_BASIC(crmpi_mpi_cxx_double_complex, "MPI_CXX_DOUBLE_COMPLEX", double _Complex, COMPLEX);
DATATYPE_BASIC(crmpi_mpi_cxx_long_double_complex, "MPI_CXX_LONG_DOUBLE_COMPLEX",
               long double _Complex, LDOUBLE_CPLX);
/* Packed data is counted in bytes (MPI_Pack_size, MPI_Get_count on MPI_PACKED). */
DATATYPE_BASIC(crmpi_mpi_packed, "MPI_PACKED", unsigned char, PLAIN);

DATATYPE_PAIR(crmpi_mpi_float_int, "MPI_FLOAT_INT", float, PLAIN, int, PLAIN);
DATATYPE_PAIR(crmpi_mpi_double_int, "MPI_DOUBLE_INT", double, PLAIN, int, PLAIN);
DATATYPE_PAIR(crmpi_mpi_long_int, "MPI_LONG_INT", long, CRMPI_TYPE_KIND_LONG, int, PLAIN);
DATATYPE_PAIR(crmpi_mpi_2int, "MPI_2INT", int, PLAIN, int, PLAIN);
DATATYPE_PAIR(crmpi_mpi_short_int, "MPI_SHORT_INT", short, PLAIN, int, PLAIN);
DATATYPE_PAIR(crmpi_mpi_long_double_int, "MPI_LONG_DOUBLE_INT", long double, LDOUBLE, int, PLAIN);

/* Fortran (gfortran's default kinds: INTEGER, REAL and LOGICAL of 4 bytes, DOUBLE PRECISION
 * of 8). The value-index pairs of Fortran have an index of the value's type. */
DATATYPE_BASIC(crmpi_mpi_integer, "MPI_INTEGER", int32_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_real, "MPI_REAL", float, PLAIN);
DATATYPE_BASIC(crmpi_mpi_double_precision, "MPI_DOUBLE_PRECISION", double, PLAIN);
DATATYPE_BASIC(crmpi_mpi_complex, "MPI_COMPLEX", float _Complex, COMPLEX);
DATATYPE_BASIC(crmpi_mpi_double_complex, "MPI_DOUBLE_COMPLEX", double _Complex, COMPLEX);
DATATYPE_BASIC(crmpi_mpi_logical, "MPI_LOGICAL", int32_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_character, "MPI_CHARACTER", char, PLAIN);
DATATYPE_BASIC(crmpi_mpi_integer1, "MPI_INTEGER1", int8_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_integer2, "MPI_INTEGER2", int16_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_integer4, "MPI_INTEGER4", int32_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_integer8, "MPI_INTEGER8", int64_t, PLAIN);
DATATYPE_BASIC(crmpi_mpi_real4, "MPI_REAL4", float, PLAIN);
DATATYPE_BASIC(crmpi_mpi_real8, "MPI_REAL8", double, PLAIN);
DATATYPE_BASIC(crmpi_mpi_complex8, "MPI_COMPLEX8", float _Complex, COMPLEX);
DATATYPE_BASIC(crmpi_mpi_complex16, "MPI_COMPLEX16", double _Complex, COMPLEX);
DATATYPE_PAIR(crmpi_mpi_2integer, "MPI_2INTEGER", int32_t, PLAIN, int32_t, PLAIN);
DATATYPE_PAIR(crmpi_mpi_2real, "MPI_2REAL", float, PLAIN, float, PLAIN);
DATATYPE_PAIR(crmpi_mpi_2double_precision, "MPI_2DOUBLE_PRECISION", double, PLAIN, double, PLAIN);

/* MPI-1's markers (removed in MPI-3.0; old programs still build types with them). */
struct crmpi_predefined_datatype_s crmpi_mpi_lb = {
    .dt = CRMPI_DATATYPE_STATIC_MARKER("MPI_LB", true)};
struct crmpi_predefined_datatype_s crmpi_mpi_ub = {
    .dt = CRMPI_DATATYPE_STATIC_MARKER("MPI_UB", false)};
