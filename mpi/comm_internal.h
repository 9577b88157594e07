/*
 * comm_internal.h: groups, communicator creation, context ids, attributes, info objects
 * and topologies: what the files of mpi/ that make and destroy MPI objects share
 * (MPI-3.1 chapters 6, 7, 8.3 and 9).
 *
 *   MPI_Comm_dup/split/create...   comm_create.c, comm_split.c: who is in the new
 *        |                         communicator, in which order
 *   crmpi_comm_cid_agree           comm_cid.c: one context id, the same on every member
 *        |                         and free on every member
 *   crmpi_comm_xchg_*              comm_xchg.c: small exchanges among a set of ranks of
 *        |                         the parent, straight on the PML with reserved tags
 *   crmpi_comm_alloc               comm_create.c: members, error handler (attributes
 *        |                         may be copied to it now)
 *   crmpi_comm_activate            the agreed id, then crmpi_comm_attach_layers: the
 *                                  layers' per-communicator state (PML, then coll)
 *
 * MPI_Comm_free runs the delete callbacks at once, and destroys the communicator when no
 * request uses it any more (crmpi_mpi_comm_bury, mpi_internal.h).
 *
 * Reserved tags: the library's own messages on a user communicator use negative tags,
 * which no receive of the application can match (MPI_ANY_TAG takes tags >= 0 only, and
 * a user's tag must be >= 0). Collectives use -1..-999; this part of mpi/ uses -1000 and
 * below (CRMPI_COMM_TAG_*).
 *
 * Threading: every function is called with the library lock held; those that communicate
 * drop it while they wait (crmpi_pml_wait_turn) and hold it again on return.
 */
#ifndef CRMPI_COMM_INTERNAL_H
#define CRMPI_COMM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crmpi_status.h"
#include "mpi_internal.h"
#include "pml.h"

/* Reserved tags of the library's own messages on user communicators (see above). */
enum {
    CRMPI_COMM_TAG_CID = -1000,          /* context id agreement */
    CRMPI_COMM_TAG_SPLIT = -1001,        /* MPI_Comm_split's allgather of (color, key) */
    CRMPI_COMM_TAG_TOPO = -1002,         /* MPI_Dist_graph_create's exchange of edges */
    CRMPI_COMM_TAG_INTER = -1003,        /* intercommunicators: groups, colors, merge order */
    CRMPI_COMM_TAG_WIN_SHARED = -1004,   /* MPI_Win_allocate_shared: sizes, the segment */
    CRMPI_COMM_TAG_NEIGHBOR_AG = -1010,  /* MPI_Neighbor_allgather */
    CRMPI_COMM_TAG_NEIGHBOR_A2A = -1011, /* MPI_Neighbor_alltoall */
};
/* MPI_Comm_create_group's messages: the user's tag folded into [BASE - MASK, BASE], far
 * below every other reserved tag, so concurrent calls with different tags stay apart. */
#define CRMPI_COMM_TAG_CREATE_GROUP_BASE (-(1 << 30))
#define CRMPI_COMM_TAG_CREATE_GROUP_MASK ((1 << 29) - 1)
/* MPI_Comm_idup's: the n-th idup on a communicator uses BASE - (n & MASK), so idups in
 * progress together on one communicator never take each other's messages. */
#define CRMPI_COMM_TAG_IDUP_BASE (-(1 << 28))
#define CRMPI_COMM_TAG_IDUP_MASK ((1 << 20) - 1)
/* MPI_Comm_create_from_group's and MPI_Intercomm_create_from_groups' messages over
 * MPI_COMM_WORLD: a hash of the string tag folded into [BASE - MASK, BASE], between the two
 * ranges above. */
#define CRMPI_COMM_TAG_FROM_GROUP_BASE (-(1 << 29))
#define CRMPI_COMM_TAG_FROM_GROUP_MASK ((1 << 27) - 1)

/*
 * Groups: ordered sets of processes, named by their rank in MPI_COMM_WORLD (every process
 * of the job is there: no dynamic processes).
 */
struct crmpi_group_s {
    int size;              /* members */
    int rank;              /* this process's rank in the group, or MPI_UNDEFINED */
    uint32_t *world_ranks; /* world rank of each member; `size` entries */
    int refcount;          /* handles of the application; MPI_GROUP_EMPTY: never freed */
};

/** A group of `size` members; takes ownership of world_ranks (malloc'd). The rank is
 *  found from this process's world rank. @return NULL when out of memory (world_ranks is
 *  freed then). */
MPI_Group crmpi_group_new(int size, uint32_t *world_ranks);
/** Drop one reference; the last frees the group (never MPI_GROUP_EMPTY). */
void crmpi_group_release(MPI_Group group);
/** The position of `world_rank` in the group, or MPI_UNDEFINED. */
int crmpi_group_find(MPI_Group group, uint32_t world_rank);

/*
 * Sets of ranks of a parent communicator that talk among themselves (all of it for
 * Comm_dup, a group's members for Comm_create_group).
 *
 * A set may have a bridge: its member 0 (the leader) also talks, over another
 * communicator, with the leader of a second set, disjoint from the first, which has the
 * first as its bridge in turn. That joins the two groups of an intercommunicator being
 * made or used: the AND-allreduce (and so the context id agreement) and the swap then
 * span both sets; the other exchanges stay within one set.
 */
typedef struct crmpi_comm_xchg_set {
    MPI_Comm comm;    /* the communicator the messages go over */
    const int *ranks; /* ranks in comm of the members, in order; NULL: all of comm */
    int size;         /* members */
    int me;           /* this process's index among them */
    int tag;          /* the reserved tag of the exchange */
    MPI_Comm bridge;  /* MPI_COMM_NULL, or (at member 0 only) the communicator to the other
                         set's leader */
    int bridge_peer;  /* that leader's rank in bridge */
    int bridge_tag;   /* the tag of the leaders' messages over bridge */
} crmpi_comm_xchg_set_t;

/** The whole of comm, with `tag`; for an intercommunicator, its local group (over its
 *  local communicator) bridged to the remote group through comm itself, leader to leader
 *  (local rank 0 on each side), with the same tag. */
crmpi_comm_xchg_set_t crmpi_comm_xchg_all(MPI_Comm comm, int tag);

/** Every member gets every member's block of sizes[i] bytes at recv + displs[i].
 *  @return CRMPI_OK or the PML's error */
int crmpi_comm_xchg_allgatherv(const crmpi_comm_xchg_set_t *set, const void *block,
                               const size_t sizes[], const size_t displs[], void *recv);

/** Every member gets member 0's `nbytes` at buf. @return CRMPI_OK or the PML's error */
int crmpi_comm_xchg_bcast(const crmpi_comm_xchg_set_t *set, void *buf, size_t nbytes);

/**
 * The leaders of two bridged sets swap blocks: member 0 sends `mine` (mine_bytes, member
 * 0's counts) over the bridge and receives the other leader's block into `theirs`
 * (theirs_bytes, which every member must know: its size is the other side's mine_bytes);
 * every member then gets it in `theirs`. mine is read at member 0 only.
 * @return CRMPI_OK or the PML's error
 */
int crmpi_comm_xchg_swap(const crmpi_comm_xchg_set_t *set, const void *mine, size_t mine_bytes,
                         void *theirs, size_t theirs_bytes);

/* A non-blocking AND-allreduce in progress (comm_xchg.c); fields are private to it. */
typedef struct crmpi_comm_band {
    crmpi_comm_xchg_set_t set; /* who takes part */
    uint64_t *words;           /* in: this member's bits; out: the AND of all */
    int nwords;                /* words */
    uint64_t *tmp;             /* a child's bits, or the result from the parent */
    int state;                 /* reduce, receive the result, send it on, done */
    int mask;                  /* reduce: distance of the next child */
    crmpi_request_t *recv;     /* the receive in progress, or NULL */
    crmpi_request_t *send_up;  /* the send to the parent, or NULL */
    crmpi_request_t *down[32]; /* sends of the result to the children */
    int num_down;              /* of them, not yet finished */
    bool sent_down;            /* down[] was posted */
    bool have_result;          /* the parent's result is in tmp */
    crmpi_request_t *across;   /* the leader's bits to the other set's leader, or NULL */
} crmpi_comm_band_t;

/** Start an AND-allreduce of `words` in place, over both sets when bridged.
 *  @return CRMPI_OK or out of resource */
int crmpi_comm_band_start(const crmpi_comm_xchg_set_t *set, uint64_t *words, int nwords,
                          crmpi_comm_band_t *band);
/** Advance without blocking: 1 when done (*rc_out: CRMPI_OK or the error), 0 otherwise. */
int crmpi_comm_band_test(crmpi_comm_band_t *band, int *rc_out);

/** Every member gets the bitwise AND of every member's `words` (in place).
 *  @return CRMPI_OK or the PML's error */
int crmpi_comm_xchg_allreduce_band(const crmpi_comm_xchg_set_t *set, uint64_t *words, int nwords);
/** Every member gets every member's `block_size` bytes, in member order, in recv (size *
 *  block_size bytes). @return CRMPI_OK or the PML's error */
int crmpi_comm_xchg_allgather(const crmpi_comm_xchg_set_t *set, const void *block,
                              size_t block_size, void *recv);

/*
 * A non-blocking context id agreement (comm_cid.c): started, then advanced until done.
 * The blocking calls loop over it; MPI_Comm_idup advances it from the progress engine.
 * One agreement gives `count` ids at once, the same on every member: an intercommunicator
 * takes two (crmpi_comm_num_cids).
 */
typedef struct crmpi_comm_cid_op crmpi_comm_cid_op_t;

/* The most ids one agreement gives. */
#define CRMPI_COMM_CID_MAX 2

/** Start agreeing on `count` context ids (1..CRMPI_COMM_CID_MAX) among `set`, and the set
 *  it is bridged to (the set is copied; ranks must live until done).
 *  @return CRMPI_OK with *op_out, or CRMPI_ERR_OUT_OF_RESOURCE */
int crmpi_comm_cid_start(const crmpi_comm_xchg_set_t *set, int count, crmpi_comm_cid_op_t **op_out);
/** Advance without blocking. @return 1 when done (then cids_out[0..count-1], or the error
 *  in *rc_out when rc_out says so), 0 when not yet; the op is freed once done. */
int crmpi_comm_cid_test(crmpi_comm_cid_op_t *op, uint32_t cids_out[], int *rc_out);
/** Start and wait: `count` agreed ids, now in use in this process, in cids_out.
 *  @return CRMPI_OK or error */
int crmpi_comm_cid_agree(const crmpi_comm_xchg_set_t *set, int count, uint32_t cids_out[]);
/** Give back an id of this process: a communicator was freed, or was not made after all. */
void crmpi_comm_cid_release(uint32_t cid);
/**
 * The choice every member makes from the AND of a window's bitmaps (nwords words; bit b
 * of word w is the id base + 64 w + b): the `count` lowest ids free on every member.
 * @return true with cids_out[0..count-1] ascending, or false when the window has fewer
 *         (every member then moves on to the next window)
 */
bool crmpi_comm_cid_pick(const uint64_t *bits, int nwords, uint32_t base, int count,
                         uint32_t cids_out[]);

/*
 * Communicators
 */

/**
 * A communicator not yet usable: takes ownership of world_ranks (malloc'd, `size`
 * entries, this process among them); the rank is this process's position. It has
 * parent's error handler, no name, attributes, topology or info, and no context id:
 * attributes may be copied to it before crmpi_comm_activate. On failure world_ranks is
 * freed. @return CRMPI_OK with *comm_out, or CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_comm_alloc(MPI_Comm parent, int size, uint32_t *world_ranks, MPI_Comm *comm_out);
/**
 * An intercommunicator not yet usable, as crmpi_comm_alloc: the local group (world_ranks,
 * this process among them) and the remote group (remote_world_ranks, disjoint from it),
 * both malloc'd and taken over (freed on failure), and its local communicator, allocated
 * too. @return CRMPI_OK with *comm_out, or CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_comm_alloc_inter(MPI_Comm parent, int size, uint32_t *world_ranks, int remote_size,
                           uint32_t *remote_world_ranks, MPI_Comm *comm_out);
/**
 * MPI_Comm_create_group's work (comm_create.c), once checked: the members of group (all in
 * parent, this process one of them) agree on a context id over parent with the reserved
 * `tag`, and make their communicator. @return CRMPI_OK with *comm_out, or a crmpi status
 */
int crmpi_comm_create_group_tagged(MPI_Comm parent, MPI_Group group, int tag, MPI_Comm *comm_out);
/**
 * MPI_Intercomm_create's work (comm_inter.c), once checked: the leaders swap their groups
 * over peer_comm with `tag`. @return MPI_SUCCESS with *inter_out, or an MPI error class
 * with *detail_out (lock held)
 */
int crmpi_comm_inter_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                            int remote_leader, int tag, MPI_Comm *inter_out,
                            const char **detail_out);
/** A malloc'd copy of `size` world ranks (room for one more, so that size 0 is not NULL).
 *  @return NULL when out of memory (logged) */
uint32_t *crmpi_comm_copy_ranks(const uint32_t *world_ranks, int size);
/** The context ids a communicator takes: 2 for an intercommunicator (its own, and its
 *  local communicator's), else 1. */
static inline int crmpi_comm_num_cids(MPI_Comm comm)
{
    return comm->inter ? 2 : 1;
}
/**
 * A duplicate of comm, not yet activated: members, attributes (copy callbacks, run
 * unlocked), topology, and `info` when use_info (else comm's hints).
 * @return MPI_SUCCESS with *dup_out, or an MPI error class; lock held either way
 */
int crmpi_comm_dup_prepare(MPI_Comm comm, MPI_Info info, bool use_info, MPI_Comm *dup_out);
/**
 * The work of MPI_Comm_split, for the topology constructors too: collective over comm;
 * *newcomm_out is this process's new communicator (ranks of its color ordered by key,
 * then parent rank), or MPI_COMM_NULL for MPI_UNDEFINED. @return CRMPI_OK or an error
 */
int crmpi_comm_split_make(MPI_Comm comm, int color, int key, MPI_Comm *newcomm_out);
/** Give an allocated communicator its agreed context ids (crmpi_comm_num_cids of them;
 *  an intercommunicator's local communicator takes the second) and attach the layers.
 *  @return CRMPI_OK, or an error (the ids not kept are given back; destroy the
 *  communicator) */
int crmpi_comm_activate(MPI_Comm comm, const uint32_t cids[]);

/**
 * The per-communicator state of the layers below mpi/ for a new communicator (context id,
 * ranks and size set): the PML's communicator (comm->pml), then the collectives' made on it
 * (comm->coll). Every created communicator goes through it, exactly once.
 * @return CRMPI_OK, or an error (nothing is left attached then)
 */
int crmpi_comm_attach_layers(struct crmpi_comm_s *comm);
/** Undo crmpi_comm_attach_layers, in reverse order (in MPI_Comm_free). */
void crmpi_comm_detach_layers(struct crmpi_comm_s *comm);

/** Destroy a created (or only allocated) communicator: delete callbacks of its attributes
 * (MPI-3.1 6.7.2), layers, context id, topology, info, memory. @return MPI_SUCCESS or a delete
 * callback's error (the communicator is destroyed anyway) */
int crmpi_comm_destroy(MPI_Comm comm);

/** MPI_COMM_WORLD and MPI_COMM_SELF: never freed. */
static inline bool crmpi_comm_is_predefined(MPI_Comm comm)
{
    return comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF;
}

/*
 * Error handlers (comm_errhandler.c)
 */
/** Take a reference on a handler (no-op on the predefined ones). */
void crmpi_errhandler_retain(MPI_Errhandler handler);
/** Drop a reference; the last frees a user handler. */
void crmpi_errhandler_release(MPI_Errhandler handler);

/*
 * Attributes (attr.c)
 */
/** Copy oldcomm's attributes to newcomm through their copy callbacks (Comm_dup).
 *  @return MPI_SUCCESS or the error a callback returned (newcomm keeps what was copied) */
int crmpi_attr_copy_all(MPI_Comm oldcomm, MPI_Comm newcomm);
/** Delete every attribute of comm through its delete callback (Comm_free).
 *  @return MPI_SUCCESS or the first error a callback returned */
int crmpi_attr_delete_all(MPI_Comm comm);

/*
 * Info objects (info.c)
 */
/** A copy of info (MPI_INFO_NULL gives an empty one). @return NULL when out of memory */
struct crmpi_info_s *crmpi_info_copy(struct crmpi_info_s *info);
/** Set key to value unless info has the key already. @return MPI_SUCCESS, MPI_ERR_NO_MEM */
int crmpi_info_set_default(struct crmpi_info_s *info, const char *key, const char *value);
/** Free an info object made by crmpi_info_copy or MPI_Info_create. */
void crmpi_info_destroy(struct crmpi_info_s *info);

/*
 * Topologies (mpi/topo/)
 */
/** A copy of comm's topology for a duplicate, or NULL (no topology, or out of memory:
 *  *rc_out says which). */
struct crmpi_topo_s *crmpi_topo_copy(const struct crmpi_topo_s *topo, int *rc_out);
/** Free a topology (NULL is fine). */
void crmpi_topo_destroy(struct crmpi_topo_s *topo);

/** The MPI error class of a crmpi status (CRMPI_ERR_OUT_OF_RESOURCE -> MPI_ERR_NO_MEM...). */
int crmpi_comm_error_class(int rc);

#endif /* CRMPI_COMM_INTERNAL_H */
