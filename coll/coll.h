/*
 * coll.h: the collective layer, the contract between the MPI collective calls of mpi/coll/
 * and the algorithms. Collectives are point-to-point messages of the PML, so the
 * checkpoint protocol sees every byte the library moves (docs/design.md, "Layers inside a
 * rank (libmpi)").
 *
 *   MPI_Bcast/Allreduce/Ibarrier/...  (mpi/coll/)   -- arguments, MPI_IN_PLACE, errors,
 *        |   crmpi_coll_run / crmpi_coll_start         the MPI communicator and op objects
 *        |   (crmpi_coll_comm_t, crmpi_coll_op_t)
 *   coll: the communicator's table                  -- component "basic" or "tuned",
 *        |                                             chosen at crmpi_coll_comm_create
 *   algorithm: builds a schedule (coll_sched.h)     -- rounds of sends, receives,
 *        |     (or, blocking and small: a direct       local reductions and copies
 *        |      fast path of blocking PML calls)
 *   schedule engine                                 -- runs the rounds; blocking calls
 *        |   crmpi_pml_isend/irecv                     loop on it, non-blocking ones are
 *   pml ob1                                            progressed by crmpi_progress()
 *
 * coll/ knows nothing of the MPI layer's objects. It works on its own view of a
 * communicator (crmpi_coll_comm_t: rank, size, the PML communicator its messages go over)
 * and on the op object the MPI layer gives it (crmpi_coll_op_t, inside MPI's op); the
 * reduction kernels are coll/'s (coll_op.c).
 *
 * Lifecycle: crmpi_coll_comm_create(pml communicator, rank, size) once the PML knows the
 * communicator (after crmpi_pml_add_comm; MPI_Init does it for MPI_COMM_WORLD and
 * MPI_COMM_SELF), or crmpi_coll_comm_create_inter for an intercommunicator (after its local
 * group's communicator) -> crmpi_coll_run / crmpi_coll_start any number of times ->
 * crmpi_coll_comm_destroy before crmpi_pml_del_comm (every collective on it complete:
 * a non-blocking one counts as a live request of the PML communicator, so MPI_Comm_free
 * waits for it, MPI-3.1 section 6.4.3). The first create registers the schedule
 * engine's progress function, the last destroy unregisters it.
 *
 * Messages: tags -2..-999 (MPI_ANY_TAG takes only tags >= 0, so no application receive
 * can match them; tags below -999 belong to other layers). Every blocking collective on a
 * communicator takes the next number of that communicator's blocking sequence and uses the
 * tag -2 - (sequence mod 499); every non-blocking or persistent one (each start) the next
 * of its non-blocking sequence, and the tag -501 - (sequence mod 499). MPI requires every
 * rank to start the collectives of a communicator in the same order (MPI-3.1 section
 * 5.12), so the numbers agree, and up to 499 collectives of each kind in flight on one
 * communicator never mix their messages. The two sequences are apart because libraries
 * start their non-blocking collectives from progress (ROMIO's non-blocking collective I/O
 * does, from its generalized requests' poll functions), where the ranks may be in
 * different blocking calls: a blocking collective then comes before a non-blocking one on
 * some ranks and after it on others, which MPICH tolerates and so does crmpi. Within one
 * collective, messages between two ranks are matched in the order posted (the PML does
 * not overtake).
 *
 * Requests: a non-blocking collective's request is a crmpi_request_t of kind
 * CRMPI_REQUEST_COLL whose free_fn belongs to coll: MPI_Wait/Test and the rest of mpi/p2p
 * complete and free it unchanged (crmpi_pml_request_finish / crmpi_pml_request_free call
 * free_fn; a request freed while active is freed by coll when it completes). Its owner is
 * the PML communicator's (pml.h), and it is live on that communicator until freed.
 *
 * Errors: CRMPI_ERR_* (negative) when coll could not do something (out of memory, a
 * message the PML could not start); MPI error classes (positive) as the statuses of
 * messages said (MPI_ERR_TRUNCATE...), or MPI_ERR_OP from a reduction step whose op is not
 * defined on its type. The MPI layer turns both into the error it raises on the
 * communicator; coll/ raises nothing itself.
 *
 * Threading: everything is called with the library lock held. A blocking collective waits
 * with crmpi_pml_wait_turn(), which drops the lock between progress turns, so other
 * threads and the C/R thread run while it waits.
 */
#ifndef CRMPI_COLL_H
#define CRMPI_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datatype.h"
#include "mpi.h"
#include "pml.h"

/* The collectives, in the order of the ops table. */
typedef enum {
    CRMPI_COLL_BARRIER,
    CRMPI_COLL_BCAST,
    CRMPI_COLL_REDUCE,
    CRMPI_COLL_ALLREDUCE,
    CRMPI_COLL_GATHER,
    CRMPI_COLL_GATHERV,
    CRMPI_COLL_SCATTER,
    CRMPI_COLL_SCATTERV,
    CRMPI_COLL_ALLGATHER,
    CRMPI_COLL_ALLGATHERV,
    CRMPI_COLL_ALLTOALL,
    CRMPI_COLL_ALLTOALLV,
    CRMPI_COLL_ALLTOALLW,
    CRMPI_COLL_REDUCE_SCATTER,
    CRMPI_COLL_REDUCE_SCATTER_BLOCK,
    CRMPI_COLL_SCAN,
    CRMPI_COLL_EXSCAN,
    CRMPI_COLL_NEIGHBOR_ALLGATHER, /* the neighbourhood collectives (MPI-3.1 section 7.6) */
    CRMPI_COLL_NEIGHBOR_ALLGATHERV,
    CRMPI_COLL_NEIGHBOR_ALLTOALL,
    CRMPI_COLL_NEIGHBOR_ALLTOALLV,
    CRMPI_COLL_NEIGHBOR_ALLTOALLW,
    CRMPI_COLL_COUNT /* number of collectives */
} crmpi_coll_kind_t;

/* Which operation an op object is. */
typedef enum {
    CRMPI_COLL_OP_USER,    /* MPI_Op_create's (user_fn) or MPI_Op_create_c's (user_fn_c) */
    CRMPI_COLL_OP_MAX,     /* MPI_MAX */
    CRMPI_COLL_OP_MIN,     /* MPI_MIN */
    CRMPI_COLL_OP_SUM,     /* MPI_SUM */
    CRMPI_COLL_OP_PROD,    /* MPI_PROD */
    CRMPI_COLL_OP_LAND,    /* MPI_LAND */
    CRMPI_COLL_OP_LOR,     /* MPI_LOR */
    CRMPI_COLL_OP_LXOR,    /* MPI_LXOR */
    CRMPI_COLL_OP_BAND,    /* MPI_BAND */
    CRMPI_COLL_OP_BOR,     /* MPI_BOR */
    CRMPI_COLL_OP_BXOR,    /* MPI_BXOR */
    CRMPI_COLL_OP_MAXLOC,  /* MPI_MAXLOC */
    CRMPI_COLL_OP_MINLOC,  /* MPI_MINLOC */
    CRMPI_COLL_OP_REPLACE, /* MPI_REPLACE: for accumulate only, defined on no type here */
    CRMPI_COLL_OP_NO_OP,   /* MPI_NO_OP: likewise */
    CRMPI_COLL_OP_COUNT    /* number of kinds */
} crmpi_coll_op_kind_t;

/* An operation as the collectives see it: the MPI layer's op object holds one (its
 * predefined ops are constant; a user op's lives until MPI_Op_free). */
typedef struct crmpi_coll_op {
    crmpi_coll_op_kind_t kind;      /* which operation */
    bool commutative;               /* a op b == b op a, so reductions may reorder operands */
    MPI_User_function *user_fn;     /* CRMPI_COLL_OP_USER: the application's function */
    MPI_User_function_c *user_fn_c; /* CRMPI_COLL_OP_USER when user_fn is NULL: the
                                       application's MPI_Count one (MPI_Op_create_c) */
} crmpi_coll_op_t;

/*
 * The arguments of any collective, already checked by mpi/coll/ and with MPI_IN_PLACE
 * resolved into `in_place` (sbuf is then unused: the data are where MPI-3.1 says, in rbuf
 * at this rank's place; never on an intercommunicator). Fields a collective does not have
 * are 0/NULL. On an intercommunicator the per-rank blocks and arrays are the remote
 * group's, but for Reduce_scatter's rcounts, which are the local group's (MPI-3.1 section
 * 5.10). The arrays and buffers belong to the application; for a non-blocking collective
 * they must stay valid until it completes (MPI-3.1 section 5.12), which the schedule
 * relies on.
 */
typedef struct crmpi_coll_args {
    const void *sbuf;            /* send buffer */
    void *rbuf;                  /* receive buffer (bcast: the buffer) */
    size_t scount;               /* send count (per rank for the *all* / scatter kinds) */
    size_t rcount;               /* receive count (per rank likewise; reduce: count) */
    MPI_Datatype stype;          /* send type */
    MPI_Datatype rtype;          /* receive type (reductions: the one type) */
    crmpi_count_array_t scounts; /* v/w variants: per-rank send counts */
    crmpi_count_array_t sdispls; /* v variants: displacements in stype extents; w: bytes */
    crmpi_count_array_t rcounts; /* v/w variants and reduce_scatter: per-rank counts */
    crmpi_count_array_t rdispls; /* v variants: displacements in rtype extents; w: bytes */
    const MPI_Datatype *stypes;  /* alltoallw: per-rank send types */
    const MPI_Datatype *rtypes;  /* alltoallw: per-rank receive types */
    const crmpi_coll_op_t *op;   /* reductions: the operation */
    int root;                    /* rooted collectives: the root's rank; on an
                                    intercommunicator MPI_ROOT (this process is the root),
                                    MPI_PROC_NULL (another process of the root's group is)
                                    or the root's rank in the remote group */
    bool in_place;               /* MPI_IN_PLACE was given (see above) */
    /* Neighbourhood collectives: block i of the receive side comes from sources[i], block i
     * of the send side goes to dests[i] (MPI_PROC_NULL: no message, the block is left
     * alone), in the order of MPI-3.1 section 7.6. Only read while the schedule is built. */
    int nsources;       /* in-neighbours */
    const int *sources; /* their ranks */
    int ndests;         /* out-neighbours */
    const int *dests;   /* their ranks */
    bool cart_pairs;    /* a Cartesian topology: neighbours come in pairs, the rank
                           at -1 then at +1 of each dimension (see coll_neighbor.c) */
} crmpi_coll_args_t;

typedef struct crmpi_coll_sched crmpi_coll_sched_t;
typedef struct crmpi_coll_comm crmpi_coll_comm_t;

/**
 * An algorithm: append to `sched` the rounds that perform the collective `args` describes
 * on `comm` (coll_sched.h). It sends and receives nothing itself.
 * @return CRMPI_OK, or CRMPI_ERR_OUT_OF_RESOURCE (the schedule is then freed by the caller)
 * Thread safety: lock held.
 */
typedef int (*crmpi_coll_build_fn_t)(const crmpi_coll_args_t *args, crmpi_coll_comm_t *comm,
                                     crmpi_coll_sched_t *sched);

/**
 * Optional fast path of a blocking collective: perform it at once with blocking PML calls
 * and `tag`, without a schedule (small messages, where a schedule's setup would be most of
 * the time). Waits drop the lock between progress turns (crmpi_pml_wait).
 * @return CRMPI_ERR_NOT_SUPPORTED when it does not handle these arguments (nothing was sent;
 *         the schedule is used), else as crmpi_coll_run
 * Thread safety: lock held.
 */
typedef int (*crmpi_coll_direct_fn_t)(const crmpi_coll_args_t *args, crmpi_coll_comm_t *comm,
                                      int tag);

/* A component's table: one algorithm builder per collective (every slot is filled, but
 * in the intercommunicator table, where Scan and Exscan are undefined). */
typedef struct crmpi_coll_ops {
    const char *component;                           /* "basic" or "tuned", for messages */
    crmpi_coll_build_fn_t build[CRMPI_COLL_COUNT];   /* indexed by crmpi_coll_kind_t */
    crmpi_coll_direct_fn_t direct[CRMPI_COLL_COUNT]; /* optional fast paths (NULL: none) */
} crmpi_coll_ops_t;

/* A communicator as the collectives see it (made by crmpi_coll_comm_create or
 * crmpi_coll_comm_create_inter; the MPI layer keeps it in its communicator and passes it
 * to every call). */
struct crmpi_coll_comm {
    int rank;                    /* this process's rank in the communicator (its local group) */
    int size;                    /* its number of ranks (of its local group) */
    crmpi_pml_comm_t *pml;       /* the PML communicator its messages go over */
    const crmpi_coll_ops_t *ops; /* the selected component's table */
    uint32_t sequence;           /* blocking collectives started on it so far */
    uint32_t nb_sequence;        /* non-blocking and persistent ones (each start) */
    int remote_size;             /* intercommunicator: the remote group's number of ranks,
                                    which the ranks of messages over pml name; 0 otherwise */
    crmpi_coll_comm_t *local;    /* intercommunicator: its local group's own communicator
                                    (not owned), for the steps among the local group; NULL
                                    otherwise */
};

/**
 * Set up the collectives of a communicator the PML knows (crmpi_pml_add_comm made pml):
 * choose the component (the framework's selection parameter `coll`: "basic", "^tuned", or
 * empty for the best, tuned; coll_base_verbose 10 says which) and start the sequence. On
 * the first call also reads the coll parameters and registers the progress function.
 * @return CRMPI_OK with *comm_out, CRMPI_ERR_OUT_OF_RESOURCE, CRMPI_ERR_NOT_FOUND (the
 *         `coll` parameter leaves no component; logged, naming every candidate)
 */
int crmpi_coll_comm_create(crmpi_pml_comm_t *pml, int rank, int size, crmpi_coll_comm_t **comm_out);

/**
 * Set up the collectives of an intercommunicator (MPI-3.1 section 5.2.2): `pml` is its PML
 * communicator (ranks name the remote group of `remote_size` ranks), rank and size are
 * this process's in the local group, and `local` is the collectives' communicator of the
 * local group alone, made before with crmpi_coll_comm_create on a PML communicator of its
 * own (a context id no other communicator of these processes has), which must outlive
 * this one. Its messages are the local steps of the intercommunicator's collectives
 * (a reduction inside each group before the leaders exchange), with the
 * intercommunicator's tags. The algorithms are component basic's intercommunicator ones
 * whatever the selection (tuned has none). Scan and Exscan are not defined on
 * intercommunicators: their slots are NULL, and the MPI layer refuses them.
 * @return as crmpi_coll_comm_create
 */
int crmpi_coll_comm_create_inter(crmpi_pml_comm_t *pml, int rank, int size, int remote_size,
                                 crmpi_coll_comm_t *local, crmpi_coll_comm_t **comm_out);

/** Free a communicator's collective state (no collective may be pending on it; NULL is
 *  fine). */
void crmpi_coll_comm_destroy(crmpi_coll_comm_t *comm);

/**
 * A blocking collective: build the schedule with the communicator's algorithm and run it
 * to completion, dropping the lock between progress turns.
 * @return CRMPI_OK; a CRMPI_ERR_* (negative) when a message could not be started
 *         (CRMPI_ERR_NOT_SUPPORTED: the collective is not defined on the communicator, Scan
 *         on an intercommunicator); or an MPI error class (positive, e.g.
 *         MPI_ERR_TRUNCATE) a message completed with.
 */
int crmpi_coll_run(crmpi_coll_comm_t *comm, crmpi_coll_kind_t kind, const crmpi_coll_args_t *args);

/**
 * A non-blocking collective: build and start the schedule, progressed by crmpi_progress().
 * @return CRMPI_OK with *req_out (kind CRMPI_REQUEST_COLL; its status's MPI_ERROR is the
 *         first error of the collective), or a CRMPI_ERR_* (nothing is pending then)
 */
int crmpi_coll_start(crmpi_coll_comm_t *comm, crmpi_coll_kind_t kind, const crmpi_coll_args_t *args,
                     crmpi_request_t **req_out);

/*
 * Persistent collectives (MPI-4.0 section 6.13; coll_base.c): a collective made once
 * and started any number of times. Each start builds its schedule with the communicator's
 * table, so on an intercommunicator they run basic's intercommunicator algorithms as the
 * other forms do (Scan and Exscan, which it lacks, fail to start: the MPI layer refuses
 * them first).
 *
 *   crmpi_coll_init (inactive request) -> crmpi_coll_restart (a schedule runs, the request
 *   completes through MPI_Wait/Test: inactive again) -> ... -> MPI_Request_free
 *
 * The request is a persistent crmpi_request_t of kind CRMPI_REQUEST_COLL, live on the PML
 * communicator from init to free. Each start takes the communicator's next collective tag,
 * so every rank must start the persistent collectives of a communicator, and its other
 * collectives, in one order (as MPI requires of collectives). The buffers and the count,
 * displacement and type arrays of `args` are the application's and must stay valid until
 * the request is freed; the neighbour lists are copied.
 */
/** @return CRMPI_OK with *req_out (inactive), or CRMPI_ERR_OUT_OF_RESOURCE */
int crmpi_coll_init(crmpi_coll_comm_t *comm, crmpi_coll_kind_t kind, const crmpi_coll_args_t *args,
                    crmpi_request_t **req_out);
/** Start an inactive request of crmpi_coll_init. @return CRMPI_OK, or a CRMPI_ERR_* (the
 *  request stays inactive) */
int crmpi_coll_restart(crmpi_request_t *req);

/*
 * Reductions (coll_op.c): the predefined operations' kernels for every type MPI-3.1
 * section 5.9.2 defines them on, and user operations.
 */

/**
 * Is `op` defined on `type`? Predefined ops: on the predefined types of their classes
 * (MINLOC/MAXLOC on the value-index pairs); MPI_REPLACE and MPI_NO_OP on none (they are for
 * accumulate only). User ops: on every type.
 */
bool crmpi_coll_op_defined(const crmpi_coll_op_t *op, MPI_Datatype type);

/**
 * inout[i] = in[i] op inout[i] for `count` elements of `type` laid out as the type says
 * (extent apart, starting at the buffer's address); in is the left operand.
 * @return CRMPI_OK, or CRMPI_ERR_NOT_SUPPORTED when the op is not defined on the type
 * Thread safety: lock held; a user op's function is called with the lock released (it may
 * call MPI), so callers must not rely on library state staying unchanged across the call.
 */
int crmpi_coll_op_reduce(const crmpi_coll_op_t *op, const void *in, void *inout, size_t count,
                         MPI_Datatype type);

#endif /* CRMPI_COLL_H */
