/*
 * coll_sched.h: the schedule engine of the collectives (coll.h), after libNBC's idea.
 *
 * A schedule is a list of steps cut into rounds. Starting a round executes its steps in
 * order: a local step (copy, reduction) runs at once, a send or receive is started. The
 * round ends when all its messages have completed; the next round then starts. So a step
 * that uses data received in round k belongs to round k + 1.
 *
 *   builder: sched_send/recv/copy/reduce ... sched_round ... sched_send ...
 *   engine:  start round 0 -> (progress: its messages complete) -> round 1 -> ... -> done
 *
 * Lifecycle: crmpi_coll_sched_create -> the algorithm appends steps and allocates its
 * temporary buffers with crmpi_coll_sched_tmp (freed with the schedule) -> the engine runs
 * it (coll_base.c) -> crmpi_coll_sched_free.
 *
 * Threading: lock held throughout.
 */
#ifndef CRMPI_COLL_SCHED_H
#define CRMPI_COLL_SCHED_H

#include <stdbool.h>
#include <stddef.h>

#include "coll.h"

typedef enum {
    COLL_STEP_SEND,   /* send buf/count/type to peer */
    COLL_STEP_RECV,   /* receive into buf/count/type from peer */
    COLL_STEP_COPY,   /* copy src (scount stype) into dst (dcount dtype), as a stream */
    COLL_STEP_REDUCE, /* dst = src op dst, count elements of type */
    COLL_STEP_ROUND,  /* end of a round */
} coll_step_kind_t;

typedef struct coll_step {
    coll_step_kind_t kind;     /* what the step does */
    const void *src;           /* send / copy / reduce: the data read */
    void *dst;                 /* recv / copy / reduce: the data written */
    size_t count;              /* send, recv, reduce: elements; copy: of stype */
    size_t dcount;             /* copy: elements of dtype */
    MPI_Datatype type;         /* send, recv, reduce: the type; copy: the source type */
    MPI_Datatype dtype;        /* copy: the destination type */
    const crmpi_coll_op_t *op; /* reduce: the operation */
    int peer;                  /* send, recv: the rank in the communicator */
    crmpi_pml_comm_t *pml;     /* send, recv: the PML communicator peer is a rank of (the
                                  schedule's target when the step was appended) */
    crmpi_request_t *req;      /* send, recv: the PML request while the round runs */
} coll_step_t;

struct crmpi_coll_sched {
    crmpi_request_t req;      /* non-blocking: the request the application holds */
    crmpi_coll_comm_t *comm;  /* the communicator */
    int tag;                  /* the collective's tag (coll.h) */
    coll_step_t *steps;       /* the steps, rounds separated by COLL_STEP_ROUND */
    size_t num_steps;         /* used entries of steps */
    size_t max_steps;         /* allocated entries of steps */
    size_t round_start;       /* first step of the running round */
    size_t round_end;         /* one past its last step */
    bool running;             /* a round is running (its messages may be pending) */
    bool done;                /* every round ran */
    int error;                /* first error: CRMPI_ERR_* (< 0) or MPI class (> 0) */
    void **tmps;              /* temporary buffers, freed with the schedule */
    size_t num_tmps;          /* entries of tmps */
    crmpi_coll_sched_t *next; /* in the engine's list of non-blocking schedules */
    crmpi_coll_sched_t *prev; /* ditto */
    bool listed;              /* on that list */
    bool busy;                /* being progressed (a user op runs without the lock) */
    crmpi_request_t *persist; /* a start of a persistent collective: the request this run
                                 completes (req is then unused); NULL otherwise */

    /* The communicator the sends and receives appended next go over: comm, or an
     * intercommunicator's local group (crmpi_coll_sched_target). */
    crmpi_coll_comm_t *target;
};

/** A new empty schedule on comm with tag. @return NULL when out of memory (logged). */
crmpi_coll_sched_t *crmpi_coll_sched_create(crmpi_coll_comm_t *comm, int tag);
/** Free a schedule that has no message pending, with its temporary buffers. */
void crmpi_coll_sched_free(crmpi_coll_sched_t *sched);

/* Append steps; each returns CRMPI_OK or CRMPI_ERR_OUT_OF_RESOURCE. Zero-sized
 * sends and receives are kept (the peer posts the matching one). */
int crmpi_coll_sched_send(crmpi_coll_sched_t *sched, const void *buf, size_t count,
                          MPI_Datatype type, int peer);
int crmpi_coll_sched_recv(crmpi_coll_sched_t *sched, void *buf, size_t count, MPI_Datatype type,
                          int peer);
int crmpi_coll_sched_copy(crmpi_coll_sched_t *sched, const void *src, size_t scount,
                          MPI_Datatype stype, void *dst, size_t dcount, MPI_Datatype dtype);
int crmpi_coll_sched_reduce(crmpi_coll_sched_t *sched, const void *src, void *dst, size_t count,
                            MPI_Datatype type, const crmpi_coll_op_t *op);
/** End the current round (an empty round is dropped). */
int crmpi_coll_sched_round(crmpi_coll_sched_t *sched);
/**
 * The sends and receives appended from now on go over `target`'s PML communicator and
 * their peers are its ranks: an intercommunicator's algorithm switches between its local
 * group (comm->local, where it may reuse an intracommunicator builder given that
 * communicator) and the intercommunicator itself (comm). The schedule starts on comm.
 */
void crmpi_coll_sched_target(crmpi_coll_sched_t *sched, crmpi_coll_comm_t *target);

/**
 * A temporary buffer for `count` elements of `type` laid out as the type says, returned
 * as the address the type's displacements are relative to: both the data (true_lb to the
 * end of the last element's data) and the elements with their padding (lb to lb + count *
 * extent) are inside the allocation. Freed with the schedule. @return NULL when out of
 * memory.
 */
void *crmpi_coll_sched_tmp(crmpi_coll_sched_t *sched, size_t count, MPI_Datatype type);

/**
 * Advance the schedule: finish the running round's completed messages and, while a round
 * is over, start the next. @return the number of events (>= 0); sched->done once finished.
 */
int crmpi_coll_sched_progress(crmpi_coll_sched_t *sched);

/**
 * Copy `scount` elements of stype at src to dst as `dcount` elements of dtype, the byte
 * streams of both being the same (the shorter one is copied). Used by copy steps and by
 * MPI_Reduce_local-style paths.
 */
void crmpi_coll_copy(const void *src, size_t scount, MPI_Datatype stype, void *dst, size_t dcount,
                     MPI_Datatype dtype);

/*
 * The components' builders (coll_basic.c, coll_tuned.c).
 */
extern const crmpi_coll_ops_t crmpi_coll_basic_ops;
extern const crmpi_coll_ops_t crmpi_coll_tuned_ops;
/* The tuned component's fast paths (coll_tuned_direct.c). */
int coll_tuned_direct_barrier(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, int tag);
int coll_tuned_direct_bcast(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, int tag);
int coll_tuned_direct_allreduce(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, int tag);
int coll_tuned_direct_alltoall(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, int tag);

/* The neighbourhood collectives' builders (coll_neighbor.c), both components'. */
int coll_neighbor_allgather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                            crmpi_coll_sched_t *s);
int coll_neighbor_allgatherv(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                             crmpi_coll_sched_t *s);
int coll_neighbor_alltoall(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                           crmpi_coll_sched_t *s);
int coll_neighbor_alltoallv(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                            crmpi_coll_sched_t *s);
int coll_neighbor_alltoallw(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                            crmpi_coll_sched_t *s);

/* Basic builders the tuned ones fall back to. */
int coll_basic_barrier(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s);
int coll_basic_bcast(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s);
int coll_basic_reduce(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s);
int coll_basic_allreduce(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                         crmpi_coll_sched_t *s);
int coll_basic_gather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s);
int coll_basic_scatter(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s);
int coll_basic_allgather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                         crmpi_coll_sched_t *s);
int coll_basic_allgatherv(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                          crmpi_coll_sched_t *s);
int coll_basic_alltoall(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s);
int coll_basic_reduce_scatter(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                              crmpi_coll_sched_t *s);
/* Reduce_scatter's blocks (Reduce_scatter_block's, all rcount long) among n ranks: each
 * rank's count and displacement, temporaries of s, and their total. @return CRMPI_OK or
 * CRMPI_ERR_OUT_OF_RESOURCE */
int coll_basic_reduce_scatter_blocks(const crmpi_coll_args_t *a, int n, crmpi_coll_sched_t *s,
                                     MPI_Count **counts_out, MPI_Count **displs_out,
                                     size_t *total_out);
int coll_basic_scan(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, crmpi_coll_sched_t *s);
/** The block of peer r in an alltoall(v,w) send (is_send) or receive buffer. */
/* The receive block of rank r in an allgather(v): where, and how many. */
void *coll_basic_allgather_slot(const crmpi_coll_args_t *a, int r, size_t *count_out);
void coll_basic_alltoall_slot(const crmpi_coll_args_t *a, int r, bool is_send, void **buf_out,
                              size_t *count_out, MPI_Datatype *type_out);

/* Component basic's intercommunicator algorithms (coll_basic_inter.c). */
extern const crmpi_coll_ops_t crmpi_coll_basic_inter_ops;

/* The tuned component's forced algorithms (coll_tuned_<coll>_algorithm; 0: decide). */
typedef struct coll_tuned_params {
    int64_t forced[CRMPI_COLL_COUNT]; /* per collective, the forced algorithm number */
} coll_tuned_params_t;
extern coll_tuned_params_t coll_tuned_params;
/** The bcast algorithm the tuned component uses for these arguments (1, 2 or 3). */
int coll_tuned_bcast_decide(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm);
/** The alltoall algorithm the tuned component uses for these arguments (1, 2 or 3). */
int coll_tuned_alltoall_decide(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm);
/** Read the coll_tuned_* parameters (coll_base.c calls it once). */
void coll_tuned_read_params(void);

#endif /* CRMPI_COLL_SCHED_H */
