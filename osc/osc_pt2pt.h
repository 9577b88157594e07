/*
 * osc_pt2pt.h: what the files of component pt2pt share: the window, the wire format of
 * its messages, and the target side (osc_pt2pt_target.c) that the origin side
 * (osc_pt2pt.c) starts through the progress engine. See osc.h for the protocol.
 *
 * Threading: library lock held everywhere.
 */
#ifndef OSC_PT2PT_H
#define OSC_PT2PT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osc.h"

/* Tags on the window's own communicator; the collectives keep -2..-999 (coll.h). */
enum {
    OSC_TAG_AM = -2000,    /* a request to the target */
    OSC_TAG_REPLY = -2001, /* the target's answer: data of a get, or an empty ack */
    OSC_TAG_LOCK = -2002,  /* a lock granted */
    OSC_TAG_POST = -2003,  /* MPI_Win_post: this origin may start */
};

/* What a request asks of the target. */
typedef enum {
    OSC_AM_PUT = 1,  /* store the data */
    OSC_AM_GET,      /* reply with the data */
    OSC_AM_ACC,      /* apply op; reply with the old data when fetch */
    OSC_AM_CAS,      /* compare and swap one element; reply with the old one */
    OSC_AM_FLUSH,    /* reply once everything before is applied */
    OSC_AM_LOCK,     /* grant a lock (on OSC_TAG_LOCK) when it is free */
    OSC_AM_UNLOCK,   /* release the lock, reply */
    OSC_AM_COMPLETE, /* MPI_Win_complete: count it for MPI_Win_wait */
} osc_am_kind_t;

/* One run of the target type, as sent (datatype.h: crmpi_dt_run_t without its kinds). */
typedef struct osc_run {
    int64_t disp; /* bytes from the element's address */
    uint64_t len; /* bytes */
} osc_run_t;

/* The header of every request; the runs and then the data follow it. */
typedef struct osc_am_hdr {
    uint32_t kind;     /* osc_am_kind_t */
    uint32_t op;       /* ACC: crmpi_coll_op_kind_t */
    int32_t basic;     /* ACC, CAS: index of the basic type in osc_pt2pt_basic_types */
    int32_t lock_type; /* LOCK: MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED */
    uint32_t fetch;    /* ACC: reply with the old data */
    uint32_t pad;      /* zero */
    int64_t disp;      /* target displacement, in the target's units (an address when
                          the window is dynamic) */
    uint64_t count;    /* elements of the target type */
    int64_t extent;    /* the target type's extent */
    uint64_t num_runs; /* runs of one element of the target type that follow */
    uint64_t nbytes;   /* data bytes after the runs (CAS: two elements, origin then compare) */
} osc_am_hdr_t;

/* A request received, waiting for its data or its turn. */
typedef struct osc_incoming {
    crmpi_request_t *recv;     /* the receive of the whole message */
    void *buf;                 /* the message */
    size_t nbytes;             /* its size */
    int source;                /* the origin's rank */
    struct osc_incoming *next; /* the next in arrival order */
} osc_incoming_t;

/*
 * A PML request of the window's to finish once it completes: the receive of a reply this
 * origin expects (with the request form's request it completes), or a send (with its
 * buffer, freed then).
 */
typedef struct osc_pending {
    crmpi_request_t *req;     /* the PML's request */
    crmpi_request_t *user;    /* completed with it, or NULL */
    void *buf;                /* freed with it, or NULL */
    struct osc_pending *next; /* the next posted to the same peer */
} osc_pending_t;

/* The pending requests with one peer, in posting order. Replies match in this order (the
 * target answers in the order it received the requests, and the PML does not overtake),
 * and a peer's sends complete in this order too. */
typedef struct osc_queue {
    osc_pending_t *head; /* the oldest */
    osc_pending_t *tail; /* the newest */
} osc_queue_t;

/* Append `pending` to `queue`, counted in *count. */
static inline void osc_queue_push(osc_queue_t *queue, osc_pending_t *pending, size_t *count)
{
    pending->next = NULL;
    if (queue->tail)
        queue->tail->next = pending;
    else
        queue->head = pending;
    queue->tail = pending;
    (*count)++;
}

/* A lock request the target could not grant yet. */
typedef struct osc_lock_waiter {
    int origin;                   /* who asked */
    int lock_type;                /* what for */
    struct osc_lock_waiter *next; /* in arrival order */
} osc_lock_waiter_t;

/* Memory attached to a dynamic window. */
typedef struct osc_region {
    char *base;    /* its first byte */
    size_t nbytes; /* its size */
} osc_region_t;

struct crmpi_osc_win {
    crmpi_osc_win_params_t params; /* as created */
    size_t *sizes;                 /* each rank's window bytes */
    MPI_Aint *units;               /* each rank's displacement unit */
    bool *dirty;                   /* per target: operations sent that no reply covers */
    osc_incoming_t *in_head;       /* requests received, oldest first */
    osc_incoming_t *in_tail;       /* the newest */
    osc_queue_t *replies;          /* per target: the replies expected */
    osc_queue_t *sends;            /* per destination: the sends in flight */
    size_t replies_pending;        /* in all the reply queues */
    size_t sends_pending;          /* in all the send queues */
    /* Target side of passive synchronisation */
    int lock_exclusive;         /* the origin holding it exclusively, or -1 */
    int lock_shared;            /* origins holding it shared */
    osc_lock_waiter_t *waiters; /* lock requests not granted yet, in arrival order */
    /* PSCW */
    int *completes;   /* per origin: MPI_Win_complete notices not yet waited */
    int *post_group;  /* ranks of the exposure epoch (MPI_Win_post) */
    int post_n;       /* entries; 0: none open */
    int *start_group; /* ranks of the access epoch (MPI_Win_start) */
    int start_n;      /* entries */
    /* Dynamic windows */
    osc_region_t *regions; /* attached memory */
    size_t num_regions;    /* entries */
    crmpi_osc_win_t *next; /* in the list the progress function walks */
};

/* Every window of this process, for the progress function (osc_pt2pt.c). */
extern crmpi_osc_win_t *osc_pt2pt_windows;

/** The predefined types an accumulate may be made of, indexed by osc_am_hdr_t.basic. */
int osc_pt2pt_basic_index(MPI_Datatype type);

/** The target side: receive requests of every window and apply them in order, complete
 *  expected replies, free finished sends. Registered with crmpi_progress_register. */
int osc_pt2pt_progress(void);
/** Start a send of a malloc'd message (buf is freed once sent, also on error). */
int osc_pt2pt_send(crmpi_osc_win_t *win, void *buf, size_t nbytes, int dest, int tag);

#endif /* OSC_PT2PT_H */
