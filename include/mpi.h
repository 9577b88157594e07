/*
 * mpi.h: crmpi's public MPI interface (MPI-3.1, C bindings).
 *
 * Handles follow Open MPI: each is a pointer to an opaque library object, a predefined
 * handle is the address of an exported object (MPI_COMM_WORLD is &crmpi_mpi_comm_world), and
 * the null handles are null pointers. Code compiled against this header therefore depends
 * only on the names of those objects, never on their layout.
 *
 * Every call has two names (MPI-3.1 section 14.2): PMPI_X is the implementation and MPI_X
 * a weak alias of it, so a profiling library can define MPI_X and call PMPI_X. Only the
 * calls the library implements are declared: a program that uses a missing one fails to
 * compile instead of failing to link.
 *
 * Constants that are handles (datatypes, ops, communicators, errhandlers) are addresses and
 * cannot appear in #if; every other constant is an integer usable by the preprocessor.
 */
#ifndef CRMPI_MPI_H
#define CRMPI_MPI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the MPI standard this header implements. */
#define MPI_VERSION    3
#define MPI_SUBVERSION 1

/*
 * Integer types
 */
typedef ptrdiff_t MPI_Aint;   /* an address or a displacement; as wide as a pointer */
typedef long long MPI_Offset; /* a file offset; 64 bits */
typedef long long MPI_Count;  /* a count that may exceed int; holds any MPI_Aint or MPI_Offset */
typedef int MPI_Fint;         /* a Fortran INTEGER, for the handle conversion functions */

/*
 * Handles: pointers to opaque library objects.
 */
typedef struct crmpi_comm_s *MPI_Comm;
typedef struct crmpi_group_s *MPI_Group;
typedef struct crmpi_datatype_s *MPI_Datatype;
typedef struct crmpi_op_s *MPI_Op;
typedef struct crmpi_errhandler_s *MPI_Errhandler;
typedef struct crmpi_info_s *MPI_Info;
typedef struct crmpi_request_s *MPI_Request;
typedef struct crmpi_message_s *MPI_Message;

#define MPI_COMM_NULL       ((MPI_Comm)0)
#define MPI_GROUP_NULL      ((MPI_Group)0)
#define MPI_DATATYPE_NULL   ((MPI_Datatype)0)
#define MPI_OP_NULL         ((MPI_Op)0)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0)
#define MPI_INFO_NULL       ((MPI_Info)0)
#define MPI_REQUEST_NULL    ((MPI_Request)0)
#define MPI_MESSAGE_NULL    ((MPI_Message)0)

/*
 * Status. Only MPI_SOURCE, MPI_TAG and MPI_ERROR are for applications; the other fields
 * belong to the library (MPI_Get_count, MPI_Test_cancelled) and may change.
 */
typedef struct crmpi_status_s {
    int MPI_SOURCE;    /* rank of the sender, in the receive's communicator */
    int MPI_TAG;       /* tag of the message received */
    int MPI_ERROR;     /* error code of this request; set only by multi-request calls */
    int _cancelled;    /* non-zero when the request was cancelled (MPI_Test_cancelled) */
    MPI_Count _nbytes; /* bytes received; MPI_Get_count divides by the type's size */
} MPI_Status;

#define MPI_STATUS_IGNORE   ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)

/*
 * Error classes (MPI-3.1 section 8.4, and the MPI_T_ERR_* return codes of the tool
 * interface, chapter 14). The values match Open MPI's, so numbers in logs mean the same.
 * Every class is also an error code; MPI_ERR_LASTCODE is not smaller than any of them.
 */
#define MPI_SUCCESS                   0
#define MPI_ERR_BUFFER                1
#define MPI_ERR_COUNT                 2
#define MPI_ERR_TYPE                  3
#define MPI_ERR_TAG                   4
#define MPI_ERR_COMM                  5
#define MPI_ERR_RANK                  6
#define MPI_ERR_REQUEST               7
#define MPI_ERR_ROOT                  8
#define MPI_ERR_GROUP                 9
#define MPI_ERR_OP                    10
#define MPI_ERR_TOPOLOGY              11
#define MPI_ERR_DIMS                  12
#define MPI_ERR_ARG                   13
#define MPI_ERR_UNKNOWN               14
#define MPI_ERR_TRUNCATE              15
#define MPI_ERR_OTHER                 16
#define MPI_ERR_INTERN                17
#define MPI_ERR_IN_STATUS             18
#define MPI_ERR_PENDING               19
#define MPI_ERR_ACCESS                20
#define MPI_ERR_AMODE                 21
#define MPI_ERR_ASSERT                22
#define MPI_ERR_BAD_FILE              23
#define MPI_ERR_BASE                  24
#define MPI_ERR_CONVERSION            25
#define MPI_ERR_DISP                  26
#define MPI_ERR_DUP_DATAREP           27
#define MPI_ERR_FILE_EXISTS           28
#define MPI_ERR_FILE_IN_USE           29
#define MPI_ERR_FILE                  30
#define MPI_ERR_INFO_KEY              31
#define MPI_ERR_INFO_NOKEY            32
#define MPI_ERR_INFO_VALUE            33
#define MPI_ERR_INFO                  34
#define MPI_ERR_IO                    35
#define MPI_ERR_KEYVAL                36
#define MPI_ERR_LOCKTYPE              37
#define MPI_ERR_NAME                  38
#define MPI_ERR_NO_MEM                39
#define MPI_ERR_NOT_SAME              40
#define MPI_ERR_NO_SPACE              41
#define MPI_ERR_NO_SUCH_FILE          42
#define MPI_ERR_PORT                  43
#define MPI_ERR_QUOTA                 44
#define MPI_ERR_READ_ONLY             45
#define MPI_ERR_RMA_CONFLICT          46
#define MPI_ERR_RMA_SYNC              47
#define MPI_ERR_SERVICE               48
#define MPI_ERR_SIZE                  49
#define MPI_ERR_SPAWN                 50
#define MPI_ERR_UNSUPPORTED_DATAREP   51
#define MPI_ERR_UNSUPPORTED_OPERATION 52
#define MPI_ERR_WIN                   53
#define MPI_T_ERR_MEMORY              54
#define MPI_T_ERR_NOT_INITIALIZED     55
#define MPI_T_ERR_CANNOT_INIT         56
#define MPI_T_ERR_INVALID_INDEX       57
#define MPI_T_ERR_INVALID_ITEM        58
#define MPI_T_ERR_INVALID_HANDLE      59
#define MPI_T_ERR_OUT_OF_HANDLES      60
#define MPI_T_ERR_OUT_OF_SESSIONS     61
#define MPI_T_ERR_INVALID_SESSION     62
#define MPI_T_ERR_CVAR_SET_NOT_NOW    63
#define MPI_T_ERR_CVAR_SET_NEVER      64
#define MPI_T_ERR_PVAR_NO_STARTSTOP   65
#define MPI_T_ERR_PVAR_NO_WRITE       66
#define MPI_T_ERR_PVAR_NO_ATOMIC      67
#define MPI_ERR_RMA_RANGE             68
#define MPI_ERR_RMA_ATTACH            69
#define MPI_ERR_RMA_FLAVOR            70
#define MPI_ERR_RMA_SHARED            71
#define MPI_T_ERR_INVALID             72
#define MPI_T_ERR_INVALID_NAME        73
#define MPI_ERR_LASTCODE              74

/*
 * Ranks, tags and other special values
 */
#define MPI_ANY_SOURCE     (-1)     /* receive from any rank */
#define MPI_ANY_TAG        (-1)     /* receive any tag */
#define MPI_PROC_NULL      (-2)     /* a rank that sends and receives nothing, at once */
#define MPI_ROOT           (-4)     /* the root's own group in an intercommunicator collective */
#define MPI_UNDEFINED      (-32766) /* "no value" (a split color, a rank not in a group, ...) */
#define MPI_KEYVAL_INVALID (-1)

#define MPI_BOTTOM        ((void *)0) /* address 0, for absolute displacements in datatypes */
#define MPI_IN_PLACE      ((void *)1) /* collective buffer argument: use the other buffer */
#define MPI_UNWEIGHTED    ((int *)2)  /* a distributed graph without edge weights */
#define MPI_WEIGHTS_EMPTY ((int *)3)  /* weights of a process with no edges */

/* Buffer sizes, each including the terminating NUL */
#define MPI_MAX_PROCESSOR_NAME         256
#define MPI_MAX_ERROR_STRING           256
#define MPI_MAX_OBJECT_NAME            64
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY               36
#define MPI_MAX_INFO_VAL               256

/* Bytes MPI_Bsend needs in the attached buffer beyond the message itself */
#define MPI_BSEND_OVERHEAD 128

/* Thread support levels (MPI-3.1 section 12.4.3), in increasing order */
#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3

/* Results of MPI_Comm_compare and MPI_Group_compare */
#define MPI_IDENT     0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR   2
#define MPI_UNEQUAL   3

/* Topology types (MPI_Topo_test); a communicator without one gives MPI_UNDEFINED */
#define MPI_CART       1
#define MPI_GRAPH      2
#define MPI_DIST_GRAPH 3

/* Split types of MPI_Comm_split_type */
#define MPI_COMM_TYPE_SHARED 0

/* Predefined attribute keys of MPI_COMM_WORLD (MPI-3.1 section 8.1.2) */
#define MPI_TAG_UB          0
#define MPI_HOST            1
#define MPI_IO              2
#define MPI_WTIME_IS_GLOBAL 3
#define MPI_APPNUM          4
#define MPI_LASTUSEDCODE    5
#define MPI_UNIVERSE_SIZE   6

/* Datatype constructors, as reported by MPI_Type_get_envelope */
#define MPI_COMBINER_NAMED            0
#define MPI_COMBINER_DUP              1
#define MPI_COMBINER_CONTIGUOUS       2
#define MPI_COMBINER_VECTOR           3
#define MPI_COMBINER_HVECTOR_INTEGER  4
#define MPI_COMBINER_HVECTOR          5
#define MPI_COMBINER_INDEXED          6
#define MPI_COMBINER_HINDEXED_INTEGER 7
#define MPI_COMBINER_HINDEXED         8
#define MPI_COMBINER_INDEXED_BLOCK    9
#define MPI_COMBINER_HINDEXED_BLOCK   10
#define MPI_COMBINER_STRUCT_INTEGER   11
#define MPI_COMBINER_STRUCT           12
#define MPI_COMBINER_SUBARRAY         13
#define MPI_COMBINER_DARRAY           14
#define MPI_COMBINER_F90_REAL         15
#define MPI_COMBINER_F90_COMPLEX      16
#define MPI_COMBINER_F90_INTEGER      17
#define MPI_COMBINER_RESIZED          18

/* Array orders and distributions of MPI_Type_create_subarray and MPI_Type_create_darray */
#define MPI_ORDER_C              0
#define MPI_ORDER_FORTRAN        1
#define MPI_DISTRIBUTE_BLOCK     0
#define MPI_DISTRIBUTE_CYCLIC    1
#define MPI_DISTRIBUTE_NONE      2
#define MPI_DISTRIBUTE_DFLT_DARG (-1)

/* Type classes of MPI_Type_match_size */
#define MPI_TYPECLASS_INTEGER 1
#define MPI_TYPECLASS_REAL    2
#define MPI_TYPECLASS_COMPLEX 3

/*
 * Callbacks the application gives the library
 */
/* A user-defined reduction: inoutvec[i] = invec[i] op inoutvec[i] for *len elements. */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void *attribute_val,
                                          void *extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval,
                                          void *attribute_val, void *extra_state);
/* The MPI-1 attribute callbacks (deprecated since MPI-2.0, still part of MPI-3.1). */
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                              void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state);
/* An error handler: called with the communicator and the error code that was raised. */
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *errcode, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn; /* deprecated MPI-2.0 name */
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);

/*
 * Predefined objects. Applications use the handle macros below, never these names.
 */
extern struct crmpi_comm_s crmpi_mpi_comm_world;
extern struct crmpi_comm_s crmpi_mpi_comm_self;

extern struct crmpi_errhandler_s crmpi_mpi_errors_are_fatal;
extern struct crmpi_errhandler_s crmpi_mpi_errors_return;

extern struct crmpi_datatype_s crmpi_mpi_char;
extern struct crmpi_datatype_s crmpi_mpi_signed_char;
extern struct crmpi_datatype_s crmpi_mpi_unsigned_char;
extern struct crmpi_datatype_s crmpi_mpi_byte;
extern struct crmpi_datatype_s crmpi_mpi_wchar;
extern struct crmpi_datatype_s crmpi_mpi_short;
extern struct crmpi_datatype_s crmpi_mpi_unsigned_short;
extern struct crmpi_datatype_s crmpi_mpi_int;
extern struct crmpi_datatype_s crmpi_mpi_unsigned;
extern struct crmpi_datatype_s crmpi_mpi_long;
extern struct crmpi_datatype_s crmpi_mpi_unsigned_long;
extern struct crmpi_datatype_s crmpi_mpi_long_long_int;
extern struct crmpi_datatype_s crmpi_mpi_unsigned_long_long;
extern struct crmpi_datatype_s crmpi_mpi_float;
extern struct crmpi_datatype_s crmpi_mpi_double;
extern struct crmpi_datatype_s crmpi_mpi_long_double;
extern struct crmpi_datatype_s crmpi_mpi_c_bool;
extern struct crmpi_datatype_s crmpi_mpi_int8_t;
extern struct crmpi_datatype_s crmpi_mpi_int16_t;
extern struct crmpi_datatype_s crmpi_mpi_int32_t;
extern struct crmpi_datatype_s crmpi_mpi_int64_t;
extern struct crmpi_datatype_s crmpi_mpi_uint8_t;
extern struct crmpi_datatype_s crmpi_mpi_uint16_t;
extern struct crmpi_datatype_s crmpi_mpi_uint32_t;
extern struct crmpi_datatype_s crmpi_mpi_uint64_t;
extern struct crmpi_datatype_s crmpi_mpi_aint;
extern struct crmpi_datatype_s crmpi_mpi_offset;
extern struct crmpi_datatype_s crmpi_mpi_count;
extern struct crmpi_datatype_s crmpi_mpi_c_float_complex;
extern struct crmpi_datatype_s crmpi_mpi_c_double_complex;
extern struct crmpi_datatype_s crmpi_mpi_c_long_double_complex;
extern struct crmpi_datatype_s crmpi_mpi_cxx_bool;
extern struct crmpi_datatype_s crmpi_mpi_cxx_float_complex;
extern struct crmpi_datatype_s crmpi_mpi_cxx_double_complex;
extern struct crmpi_datatype_s crmpi_mpi_cxx_long_double_complex;
extern struct crmpi_datatype_s crmpi_mpi_packed;
extern struct crmpi_datatype_s crmpi_mpi_float_int;
extern struct crmpi_datatype_s crmpi_mpi_double_int;
extern struct crmpi_datatype_s crmpi_mpi_long_int;
extern struct crmpi_datatype_s crmpi_mpi_2int;
extern struct crmpi_datatype_s crmpi_mpi_short_int;
extern struct crmpi_datatype_s crmpi_mpi_long_double_int;

extern struct crmpi_op_s crmpi_mpi_op_max;
extern struct crmpi_op_s crmpi_mpi_op_min;
extern struct crmpi_op_s crmpi_mpi_op_sum;
extern struct crmpi_op_s crmpi_mpi_op_prod;
extern struct crmpi_op_s crmpi_mpi_op_land;
extern struct crmpi_op_s crmpi_mpi_op_band;
extern struct crmpi_op_s crmpi_mpi_op_lor;
extern struct crmpi_op_s crmpi_mpi_op_bor;
extern struct crmpi_op_s crmpi_mpi_op_lxor;
extern struct crmpi_op_s crmpi_mpi_op_bxor;
extern struct crmpi_op_s crmpi_mpi_op_maxloc;
extern struct crmpi_op_s crmpi_mpi_op_minloc;
extern struct crmpi_op_s crmpi_mpi_op_replace;
extern struct crmpi_op_s crmpi_mpi_op_no_op;

/* Communicators */
#define MPI_COMM_WORLD (&crmpi_mpi_comm_world)
#define MPI_COMM_SELF  (&crmpi_mpi_comm_self)

/* Error handlers (MPI_ERRORS_ARE_FATAL is every communicator's default) */
#define MPI_ERRORS_ARE_FATAL (&crmpi_mpi_errors_are_fatal)
#define MPI_ERRORS_RETURN    (&crmpi_mpi_errors_return)

/* Datatypes of C (MPI-3.1 section 3.2.2) */
#define MPI_CHAR                    (&crmpi_mpi_char)
#define MPI_SIGNED_CHAR             (&crmpi_mpi_signed_char)
#define MPI_UNSIGNED_CHAR           (&crmpi_mpi_unsigned_char)
#define MPI_BYTE                    (&crmpi_mpi_byte)
#define MPI_WCHAR                   (&crmpi_mpi_wchar)
#define MPI_SHORT                   (&crmpi_mpi_short)
#define MPI_UNSIGNED_SHORT          (&crmpi_mpi_unsigned_short)
#define MPI_INT                     (&crmpi_mpi_int)
#define MPI_UNSIGNED                (&crmpi_mpi_unsigned)
#define MPI_LONG                    (&crmpi_mpi_long)
#define MPI_UNSIGNED_LONG           (&crmpi_mpi_unsigned_long)
#define MPI_LONG_LONG_INT           (&crmpi_mpi_long_long_int)
#define MPI_LONG_LONG               MPI_LONG_LONG_INT /* a synonym, one object */
#define MPI_UNSIGNED_LONG_LONG      (&crmpi_mpi_unsigned_long_long)
#define MPI_FLOAT                   (&crmpi_mpi_float)
#define MPI_DOUBLE                  (&crmpi_mpi_double)
#define MPI_LONG_DOUBLE             (&crmpi_mpi_long_double)
#define MPI_C_BOOL                  (&crmpi_mpi_c_bool)
#define MPI_INT8_T                  (&crmpi_mpi_int8_t)
#define MPI_INT16_T                 (&crmpi_mpi_int16_t)
#define MPI_INT32_T                 (&crmpi_mpi_int32_t)
#define MPI_INT64_T                 (&crmpi_mpi_int64_t)
#define MPI_UINT8_T                 (&crmpi_mpi_uint8_t)
#define MPI_UINT16_T                (&crmpi_mpi_uint16_t)
#define MPI_UINT32_T                (&crmpi_mpi_uint32_t)
#define MPI_UINT64_T                (&crmpi_mpi_uint64_t)
#define MPI_AINT                    (&crmpi_mpi_aint)
#define MPI_OFFSET                  (&crmpi_mpi_offset)
#define MPI_COUNT                   (&crmpi_mpi_count)
#define MPI_C_FLOAT_COMPLEX         (&crmpi_mpi_c_float_complex)
#define MPI_C_COMPLEX               MPI_C_FLOAT_COMPLEX /* a synonym, one object */
#define MPI_C_DOUBLE_COMPLEX        (&crmpi_mpi_c_double_complex)
#define MPI_C_LONG_DOUBLE_COMPLEX   (&crmpi_mpi_c_long_double_complex)
#define MPI_CXX_BOOL                (&crmpi_mpi_cxx_bool)
#define MPI_CXX_FLOAT_COMPLEX       (&crmpi_mpi_cxx_float_complex)
#define MPI_CXX_DOUBLE_COMPLEX      (&crmpi_mpi_cxx_double_complex)
#define MPI_CXX_LONG_DOUBLE_COMPLEX (&crmpi_mpi_cxx_long_double_complex)
#define MPI_PACKED                  (&crmpi_mpi_packed)

/* Value-index pairs for MPI_MAXLOC and MPI_MINLOC (MPI-3.1 section 5.9.4) */
#define MPI_FLOAT_INT       (&crmpi_mpi_float_int)
#define MPI_DOUBLE_INT      (&crmpi_mpi_double_int)
#define MPI_LONG_INT        (&crmpi_mpi_long_int)
#define MPI_2INT            (&crmpi_mpi_2int)
#define MPI_SHORT_INT       (&crmpi_mpi_short_int)
#define MPI_LONG_DOUBLE_INT (&crmpi_mpi_long_double_int)

/* Reduction operations (MPI-3.1 sections 5.9.2 and 11.3.4) */
#define MPI_MAX     (&crmpi_mpi_op_max)
#define MPI_MIN     (&crmpi_mpi_op_min)
#define MPI_SUM     (&crmpi_mpi_op_sum)
#define MPI_PROD    (&crmpi_mpi_op_prod)
#define MPI_LAND    (&crmpi_mpi_op_land)
#define MPI_BAND    (&crmpi_mpi_op_band)
#define MPI_LOR     (&crmpi_mpi_op_lor)
#define MPI_BOR     (&crmpi_mpi_op_bor)
#define MPI_LXOR    (&crmpi_mpi_op_lxor)
#define MPI_BXOR    (&crmpi_mpi_op_bxor)
#define MPI_MAXLOC  (&crmpi_mpi_op_maxloc)
#define MPI_MINLOC  (&crmpi_mpi_op_minloc)
#define MPI_REPLACE (&crmpi_mpi_op_replace)
#define MPI_NO_OP   (&crmpi_mpi_op_no_op)

/*
 * Environment: initialisation, finalisation, threads (MPI-3.1 sections 8 and 12.4)
 */
int MPI_Init(int *argc, char ***argv);
int PMPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Initialized(int *flag);
int PMPI_Initialized(int *flag);
int MPI_Finalize(void);
int PMPI_Finalize(void);
int MPI_Finalized(int *flag);
int PMPI_Finalized(int *flag);
int MPI_Query_thread(int *provided);
int PMPI_Query_thread(int *provided);
int MPI_Is_thread_main(int *flag);
int PMPI_Is_thread_main(int *flag);
int MPI_Abort(MPI_Comm comm, int errorcode);
int PMPI_Abort(MPI_Comm comm, int errorcode);

/* Environment: inquiry, timers, errors */
int MPI_Get_version(int *version, int *subversion);
int PMPI_Get_version(int *version, int *subversion);
int MPI_Get_library_version(char *version, int *resultlen);
int PMPI_Get_library_version(char *version, int *resultlen);
int MPI_Get_processor_name(char *name, int *resultlen);
int PMPI_Get_processor_name(char *name, int *resultlen);
double MPI_Wtime(void);
double PMPI_Wtime(void);
double MPI_Wtick(void);
double PMPI_Wtick(void);
int MPI_Error_string(int errorcode, char *string, int *resultlen);
int PMPI_Error_string(int errorcode, char *string, int *resultlen);
int MPI_Error_class(int errorcode, int *errorclass);
int PMPI_Error_class(int errorcode, int *errorclass);

/* Communicators */
int MPI_Comm_rank(MPI_Comm comm, int *rank);
int PMPI_Comm_rank(MPI_Comm comm, int *rank);
int MPI_Comm_size(MPI_Comm comm, int *size);
int PMPI_Comm_size(MPI_Comm comm, int *size);

#ifdef __cplusplus
}
#endif

#endif /* CRMPI_MPI_H */
