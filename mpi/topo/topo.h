/*
 * topo.h: virtual topologies (MPI-3.1 chapter 7): what the files of mpi/topo/ share. A
 * communicator's topology (struct crmpi_comm_s.topo) is made by MPI_Cart_create,
 * MPI_Graph_create or MPI_Dist_graph_create(_adjacent), copied by MPI_Comm_dup and freed
 * with the communicator.
 */
#ifndef CRMPI_TOPO_H
#define CRMPI_TOPO_H

#include <stdbool.h>

#include "comm_internal.h"

struct crmpi_topo_s {
    int kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* MPI_CART */
    int ndims;    /* dimensions */
    int *dims;    /* processes per dimension; ndims entries */
    int *periods; /* 1 where the dimension wraps around; ndims entries */
    /* MPI_GRAPH (MPI_Graph_create's arrays, 7.5.3) */
    int nnodes; /* nodes = communicator size */
    int *index; /* index[i]: edges of nodes 0..i together; nnodes entries */
    int *edges; /* neighbours of every node, in order; index[nnodes - 1] entries */
    /* MPI_DIST_GRAPH (this process's edges only, 7.5.4) */
    int indegree;       /* edges into this process */
    int outdegree;      /* edges out of it */
    int *sources;       /* ranks the in-edges come from; indegree entries */
    int *sourceweights; /* their weights (all 1 when unweighted) */
    int *destinations;  /* ranks the out-edges go to; outdegree entries */
    int *destweights;   /* their weights */
    bool weighted;      /* made with weights (MPI_Dist_graph_neighbors gives them back) */
};

/* The detail of MPI_ERR_COMM for a topology asked of an intercommunicator: topologies
 * belong to intracommunicators only (MPI-3.1 chapter 7). */
#define CRMPI_TOPO_NOT_INTER "comm_old is an intercommunicator, which cannot have a topology"

/** A zeroed topology of `kind`. @return NULL when out of memory */
struct crmpi_topo_s *crmpi_topo_new(int kind);

/** This process's neighbours in comm's topology, in the order of MPI-3.1 section 7.6
 *  (the receive side first: *sources_out, then the send side: *dests_out); the arrays
 *  are malloc'd (the caller frees both), MPI_PROC_NULL allowed in them.
 *  @return MPI_SUCCESS, MPI_ERR_TOPOLOGY (no topology) or MPI_ERR_NO_MEM */
int crmpi_topo_neighbors(MPI_Comm comm, int *indegree_out, int **sources_out, int *outdegree_out,
                         int **dests_out);

/** Cartesian arithmetic (cart.c), no checks: the coordinates of `rank`, and the rank of
 *  `coords` (coordinates out of range wrap in periodic dimensions; MPI_PROC_NULL when
 *  out of range in a non-periodic one). */
void crmpi_topo_cart_coords(const struct crmpi_topo_s *topo, int rank, int coords[]);
int crmpi_topo_cart_rank(const struct crmpi_topo_s *topo, const int coords[]);

/** MPI_Dims_create's work: fill the zero entries of dims. @return MPI_SUCCESS,
 *  MPI_ERR_DIMS (negative entry, or the others do not divide nnodes) or MPI_ERR_NO_MEM */
int crmpi_topo_dims_fill(int nnodes, int ndims, int dims[]);

#endif /* CRMPI_TOPO_H */
