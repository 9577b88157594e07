/*
 * mpi_internal.h: libmpi's objects and global state, shared by the MPI calls in mpi/.
 * Not installed: applications see only the opaque handles of mpi.h.
 *
 * Every MPI call follows one pattern, around the one library lock (docs/design.md,
 * "Layers inside a rank (libmpi)"):
 *
 *   crmpi_lock();
 *   crmpi_mpi_require_active(FUNC_NAME);          not before MPI_Init, not after Finalize
 *   if (crmpi_mpi_state.param_check) { ...         argument checks (mpi_param_check)
 *       return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_xxx, FUNC_NAME, "why");
 *   }
 *   ... the work ...
 *   crmpi_unlock();
 *   return MPI_SUCCESS;
 *
 * crmpi_mpi_errhandler_invoke() releases the lock, so an error path is a single return.
 */
#ifndef CRMPI_MPI_INTERNAL_H
#define CRMPI_MPI_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "convertor.h"
#include "errhandler_file.h"
#include "mpi.h"
#include "pml.h"
#include "progress.h"
#include "rte.h"

/*
 * Error handlers
 */
typedef enum {
    CRMPI_ERRHANDLER_FATAL,  /* MPI_ERRORS_ARE_FATAL: log, abort the job, never return */
    CRMPI_ERRHANDLER_RETURN, /* MPI_ERRORS_RETURN: the call returns the error code */
    CRMPI_ERRHANDLER_USER,   /* MPI_Comm_create_errhandler: call comm_fn, then return */
} crmpi_errhandler_kind_t;

struct crmpi_errhandler_s {
    crmpi_errhandler_kind_t kind;          /* what raising an error does */
    MPI_Comm_errhandler_function *comm_fn; /* the application's function (CRMPI_ERRHANDLER_USER) */
    MPI_Win_errhandler_function *win_fn;   /* or, made by MPI_Win_create_errhandler, the
                                              window one's (comm_fn is NULL then) */
    crmpi_file_errhandler_fn_t *file_fn;   /* or, made by MPI_File_create_errhandler
                                              (errhandler_file.h), a file one's */
    MPI_Session_errhandler_function *session_fn; /* or, made by
                                                    MPI_Session_create_errhandler, a
                                                    session one's */
    const char *name;                            /* for messages: "MPI_ERRORS_ARE_FATAL", ... */
    int refcount;    /* handles and communicators holding it (comm_errhandler.c); unused when
                        predefined */
    bool predefined; /* MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN: never freed */
};

/**
 * A user error handler (errhandler.c), for MPI_Comm/Win/File/Session_create_errhandler:
 * a copy of `slots`, which sets the function of its kind and the name, made
 * CRMPI_ERRHANDLER_USER with one reference (the handle returned).
 * @return the handler, or NULL when out of memory
 */
MPI_Errhandler crmpi_errhandler_new_user(const struct crmpi_errhandler_s *slots);

/*
 * Communicators
 */
/* Context ids of the predefined communicators; those of created ones must differ. */
enum { CRMPI_CONTEXT_ID_WORLD = 0, CRMPI_CONTEXT_ID_SELF = 1 };

/*
 * A communicator. An intercommunicator (MPI-3.1 section 6.6) has a local group, which
 * rank, size and world_ranks describe as for an intracommunicator, and a remote group,
 * which the ranks of its point-to-point calls and collectives name: remote_size and
 * remote_world_ranks. For an intracommunicator those describe its one group, so the calls
 * check ranks against remote_size whatever the kind, at no extra cost.
 */
struct crmpi_comm_s {
    int rank;                       /* this process's rank in the communicator */
    int size;                       /* number of processes in the communicator */
    uint32_t context_id;            /* tells its messages apart from other communicators' */
    char name[MPI_MAX_OBJECT_NAME]; /* MPI_Comm_get_name; NUL-terminated */
    MPI_Errhandler errhandler;      /* raised errors go here; MPI_ERRORS_ARE_FATAL by default */
    uint32_t *world_ranks;          /* rank in MPI_COMM_WORLD of each rank; `size` entries */
    crmpi_pml_comm_t *pml;          /* the PML's communicator (pml.h: crmpi_pml_add_comm) */
    struct crmpi_attr_s *attrs;     /* cached attributes (attr.c), in the order set */
    struct crmpi_topo_s *topo;      /* virtual topology (mpi/topo/), NULL when none */
    struct crmpi_info_s *info;      /* hints of Comm_set_info/dup_with_info; NULL: none */
    uint32_t idup_count;            /* MPI_Comm_idup calls on it so far: their tags */
    crmpi_coll_comm_t *coll;        /* the collectives' communicator (coll.h:
                                       crmpi_coll_comm_create) */
    bool inter;                     /* an intercommunicator */
    int remote_size;                /* ranks that sends, receives and collectives name: the
                                       remote group's for an intercommunicator, else size */
    uint32_t *remote_world_ranks;   /* rank in MPI_COMM_WORLD of each of them; world_ranks
                                       itself for an intracommunicator */
    MPI_Comm local_comm;            /* intercommunicator: its local group as an
                                       intracommunicator of its own (never handed to the
                                       application), over which the collectives' local
                                       steps and the creation exchanges run; else NULL */
};

/*
 * MPI_COMM_WORLD and MPI_COMM_SELF: a communicator in a block of fixed size, which is the
 * size programs were linked with (mpi.h). Grow CRMPI_PREDEFINED_COMM_BYTES only with an
 * ABI break: programs would have to be linked again.
 */
#define CRMPI_PREDEFINED_COMM_BYTES 1024
struct crmpi_predefined_comm_s {
    struct crmpi_comm_s comm;
    char reserved[CRMPI_PREDEFINED_COMM_BYTES - sizeof(struct crmpi_comm_s)];
};
_Static_assert(sizeof(struct crmpi_predefined_comm_s) == CRMPI_PREDEFINED_COMM_BYTES,
               "a predefined communicator outgrew its fixed size");

/**
 * The PML's idle function (pml.h: crmpi_pml_set_comm_idle_fn, registered by MPI_Init): the
 * last request on a freed communicator was released; destroy it at the next turn of
 * progress (comm_create.c). MPI_Comm_free lets pending operations complete first that way
 * (MPI-3.1 section 6.4.3).
 */
void crmpi_mpi_comm_bury(MPI_Comm comm);

/* False for MPI_COMM_NULL; the one place later checks (freed, wrong kind) go. */
static inline bool crmpi_mpi_comm_is_valid(MPI_Comm comm)
{
    return comm != MPI_COMM_NULL;
}

/*
 * Datatypes: struct crmpi_datatype_s is the datatype engine's (datatype/datatype.h); the
 * predefined ones (mpi/datatype/predefined.c) are in blocks of a fixed size, for the
 * reason of the communicators'.
 */
#define CRMPI_PREDEFINED_DATATYPE_BYTES 512
struct crmpi_predefined_datatype_s {
    struct crmpi_datatype_s dt;
    char reserved[CRMPI_PREDEFINED_DATATYPE_BYTES - sizeof(struct crmpi_datatype_s)];
};
_Static_assert(sizeof(struct crmpi_predefined_datatype_s) == CRMPI_PREDEFINED_DATATYPE_BYTES,
               "a predefined datatype outgrew its fixed size");

/*
 * Ops: the predefined ones (op_predefined.c) and MPI_Op_create's (coll/op.c). What the
 * reductions need is coll's (coll.h), given to it as &op->coll.
 */
struct crmpi_op_s {
    crmpi_coll_op_t coll;           /* kind, commutative, the user's function */
    char name[MPI_MAX_OBJECT_NAME]; /* "MPI_SUM"; for messages */
};

/* The predefined ops in blocks of a fixed size, for the reason of the communicators'. */
#define CRMPI_PREDEFINED_OP_BYTES 256
struct crmpi_predefined_op_s {
    struct crmpi_op_s op;
    char reserved[CRMPI_PREDEFINED_OP_BYTES - sizeof(struct crmpi_op_s)];
};
_Static_assert(sizeof(struct crmpi_predefined_op_s) == CRMPI_PREDEFINED_OP_BYTES,
               "a predefined op outgrew its fixed size");

/*
 * Global state of the library in this process
 */
typedef struct crmpi_mpi_state {
    bool initialized;      /* MPI_Init has completed (and stays true after Finalize) */
    bool finalized;        /* MPI_Finalize has completed */
    bool instance_active;  /* the library is up: the World Model or a session uses it */
    bool instance_ended;   /* it was up and ended: it cannot start again */
    int sessions;          /* MPI_Session_init's sessions not yet finalized */
    int thread_level;      /* the level MPI_Init_thread provided */
    pthread_t main_thread; /* the thread that called MPI_Init (MPI_Is_thread_main) */
    bool param_check;      /* mpi_param_check: validate the arguments of every call */
} crmpi_mpi_state_t;

extern crmpi_mpi_state_t crmpi_mpi_state;

/*
 * Errors
 */
/** "MPI_ERR_COMM" for a valid error class, NULL otherwise. */
const char *crmpi_mpi_error_name(int errclass);
/** "invalid communicator" for a valid error class, NULL otherwise. */
const char *crmpi_mpi_error_text(int errclass);
/** The class of a code added by MPI_Add_error_class/code (error_user.c), or -1. */
int crmpi_mpi_error_user_class(int errorcode);
/** MPI_Add_error_string's text of an added code ("" when none), or NULL. */
const char *crmpi_mpi_error_user_text(int errorcode);
/** The largest error code in use: MPI_COMM_WORLD's MPI_LASTUSEDCODE attribute. */
int crmpi_mpi_error_last_used(void);

/**
 * Raise error `errcode` in `func_name` on `comm` (MPI_COMM_NULL: the error belongs to no
 * communicator, and MPI_COMM_WORLD's handler decides, MPI-3.1 section 8.3).
 * MPI_ERRORS_ARE_FATAL logs "MPI_Comm_rank: invalid communicator: <detail> (MPI_ERR_COMM)"
 * and aborts the job; it does not return. The other handlers return `errcode`, which the
 * MPI call returns to the application.
 * @param detail  what exactly was wrong ("rank is NULL"), or NULL
 * Called with the library lock held; returns with it released, because a user handler may
 * call MPI itself.
 */
int crmpi_mpi_errhandler_invoke(MPI_Comm comm, int errcode, const char *func_name,
                                const char *detail);

/**
 * MPI_ERRORS_ARE_FATAL, for every object's handler (errhandler.c): abort the job with
 * "<func_name>: <text>[: <detail>] (<MPI_ERR_X>); the error handler[ of <handler_of>] is
 * MPI_ERRORS_ARE_FATAL, so the job aborts".
 * @param detail      what exactly was wrong, or NULL
 * @param handler_of  whose handler it is ("the file", a communicator's name), or NULL
 */
__attribute__((noreturn)) void crmpi_mpi_errors_are_fatal_abort(int errcode, const char *func_name,
                                                                const char *detail,
                                                                const char *handler_of);

/** The MPI layer's checkpoint veto (inc.h; mpi/osc/win_shared.c): why this process cannot
 *  be checkpointed while it has a shared-memory window, or NULL when it has none. */
const char *crmpi_win_shared_refusal(void);

/** Abort with a clear message: `func_name` was called before MPI_Init or after Finalize. */
__attribute__((noreturn)) void crmpi_mpi_fail_inactive(const char *func_name);

/*
 * The library's instance (init.c), which the World Model (MPI_Init .. MPI_Finalize) and
 * every session (session.c) share: the first to begin starts it, the last to end ends it.
 * Both are called with the lock held. Start exits the process, saying why, when it fails;
 * end returns the status of leaving the job.
 */
void crmpi_mpi_instance_start(const char *func_name);
int crmpi_mpi_instance_end(void);

/* Every call except the few MPI allows outside MPI_Init..MPI_Finalize (or, with sessions,
 * outside the instance's life) starts with this. */
static inline void crmpi_mpi_require_active(const char *func_name)
{
    if (!crmpi_mpi_state.instance_active) {
        crmpi_mpi_fail_inactive(func_name);
    }
}

#endif /* CRMPI_MPI_INTERNAL_H */
