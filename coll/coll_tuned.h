/*
 * coll_tuned.h: the tuned component's insides, shared by its files: the algorithms
 * (coll_tuned_move.c: data movement; coll_tuned_reduce.c: reductions) and the small
 * helpers they share. coll_tuned.c chooses among them. Each algorithm appends its rounds
 * to a schedule (coll_sched.h) and returns CRMPI_OK or CRMPI_ERR_OUT_OF_RESOURCE.
 */
#ifndef CRMPI_COLL_TUNED_H
#define CRMPI_COLL_TUNED_H

#include <stdbool.h>
#include <stddef.h>

#include "coll_sched.h"
#include "crmpi_status.h"

#define COLL_TUNED_TRY(call)                                                                       \
    do {                                                                                           \
        int try_rc_ = (call);                                                                      \
        if (try_rc_ != CRMPI_OK)                                                                   \
            return try_rc_;                                                                        \
    } while (0)

static inline void *coll_tuned_elem_at(const void *buf, MPI_Aint index, MPI_Datatype type)
{
    return (char *)buf + index * type->extent;
}

static inline bool coll_tuned_is_pow2(int n)
{
    return (n & (n - 1)) == 0;
}

/* The largest power of two <= n (n >= 1). */
static inline int coll_tuned_pow2_floor(int n)
{
    int p = 1;

    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* Segment `index` of `count` elements cut into `parts` nearly equal pieces. */
static inline void coll_tuned_segment(size_t count, int parts, int index, size_t *lo_out,
                                      size_t *len_out)
{
    size_t base = count / (size_t)parts, extra = count % (size_t)parts;
    size_t i = (size_t)index;

    *lo_out = i * base + (i < extra ? i : extra);
    *len_out = base + (i < extra ? 1 : 0);
}

int coll_tuned_barrier_dissemination(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                     crmpi_coll_sched_t *s);
int coll_tuned_bcast_binomial(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                              crmpi_coll_sched_t *s);
int coll_tuned_bcast_scatter_allgather(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                       crmpi_coll_sched_t *s);
int coll_tuned_allgather_ring(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                              crmpi_coll_sched_t *s);
int coll_tuned_allgather_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                crmpi_coll_sched_t *s);
int coll_tuned_alltoall_pairwise(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                 crmpi_coll_sched_t *s);
int coll_tuned_alltoall_bruck(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                              crmpi_coll_sched_t *s);
int coll_tuned_reduce_binomial(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                               crmpi_coll_sched_t *s);
int coll_tuned_allreduce_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                crmpi_coll_sched_t *s);
int coll_tuned_allreduce_ring(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                              crmpi_coll_sched_t *s);
int coll_tuned_allreduce_rabenseifner(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                      crmpi_coll_sched_t *s);
int coll_tuned_reduce_scatter_ring(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                                   crmpi_coll_sched_t *s);
int coll_tuned_scan_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                           crmpi_coll_sched_t *s);
int coll_tuned_exscan_recdbl(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm,
                             crmpi_coll_sched_t *s);

#endif /* CRMPI_COLL_TUNED_H */
