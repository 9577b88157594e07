/*
 * dist_graph.c: distributed graph topologies (MPI-3.1 section 7.5.4): each process knows
 * only its own edges. MPI_Dist_graph_create_adjacent is given them; MPI_Dist_graph_create
 * is given any edges by any process, so every process learns all of them (an allgather of
 * the edges on the PML, tag CRMPI_COMM_TAG_TOPO) and keeps those that touch it, in the
 * order of the ranks that gave them. That order is the same on both ends of every edge,
 * which is what pairs the messages of the neighbour collectives when two processes are
 * joined by several edges. `reorder` is ignored.
 */
#include <stdlib.h>
#include <string.h>

#include "topo.h"

#pragma weak MPI_Dist_graph_create_adjacent = PMPI_Dist_graph_create_adjacent
#pragma weak MPI_Dist_graph_create = PMPI_Dist_graph_create
#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count
#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors

/* An array of n ints, copied from `from`, or all 1 when from is MPI_UNWEIGHTED/EMPTY. */
static int *dist_ints(const int *from, int n)
{
    int *out = malloc(((size_t)n + 1) * sizeof(int));

    if (!out)
        return NULL;
    for (int i = 0; i < n; i++)
        out[i] = (from == MPI_UNWEIGHTED || from == MPI_WEIGHTS_EMPTY || !from) ? 1 : from[i];
    return out;
}

/* A copy of comm_old (same ranks, same order) with a distributed graph topology made of
 * the given edges (copied). */
static int dist_make(MPI_Comm comm_old, int indegree, const int sources[],
                     const int sourceweights[], int outdegree, const int destinations[],
                     const int destweights[], bool weighted, MPI_Comm *newcomm_out)
{
    struct crmpi_topo_s *topo = crmpi_topo_new(MPI_DIST_GRAPH);
    MPI_Comm created;
    int rc;

    if (!topo)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    topo->indegree = indegree;
    topo->outdegree = outdegree;
    topo->weighted = weighted;
    topo->sources = malloc(((size_t)indegree + 1) * sizeof(int));
    topo->destinations = malloc(((size_t)outdegree + 1) * sizeof(int));
    topo->sourceweights = dist_ints(sourceweights, indegree);
    topo->destweights = dist_ints(destweights, outdegree);
    if (!topo->sources || !topo->destinations || !topo->sourceweights || !topo->destweights) {
        crmpi_topo_destroy(topo);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(topo->sources, sources, (size_t)indegree * sizeof(int));
    memcpy(topo->destinations, destinations, (size_t)outdegree * sizeof(int));
    rc = crmpi_comm_split_make(comm_old, 0, comm_old->rank, &created);
    if (rc != CRMPI_OK) {
        crmpi_topo_destroy(topo);
        return rc;
    }
    created->topo = topo;
    *newcomm_out = created;
    return CRMPI_OK;
}

static bool dist_ranks_ok(const int ranks[], int n, int size)
{
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= size)
            return false;
    }
    return true;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    static const char func_name[] = "MPI_Dist_graph_create_adjacent";
    MPI_Comm created;
    int rc;

    (void)info, (void)reorder;
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm_old))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (comm_old->inter)
        return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_COMM, func_name, CRMPI_TOPO_NOT_INTER);
    if (indegree < 0 || outdegree < 0 || comm_dist_graph == NULL ||
        (indegree > 0 && sources == NULL) || (outdegree > 0 && destinations == NULL))
        return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_ARG, func_name,
                                           "a degree is negative or an array is NULL");
    if (!dist_ranks_ok(sources, indegree, comm_old->size) ||
        !dist_ranks_ok(destinations, outdegree, comm_old->size))
        return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_RANK, func_name,
                                           "a neighbour is not a rank of comm_old");
    rc = dist_make(comm_old, indegree, sources, sourceweights, outdegree, destinations, destweights,
                   sourceweights != MPI_UNWEIGHTED, &created);
    if (rc != CRMPI_OK)
        return crmpi_mpi_errhandler_invoke(comm_old, crmpi_comm_error_class(rc), func_name,
                                           "cannot make the graph communicator");
    *comm_dist_graph = created;
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* One edge as exchanged by MPI_Dist_graph_create. */
typedef struct dist_edge {
    int source;      /* rank the edge leaves */
    int destination; /* rank it enters */
    int weight;      /* 1 when unweighted */
} dist_edge_t;

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    static const char func_name[] = "MPI_Dist_graph_create";
    crmpi_comm_xchg_set_t set;
    dist_edge_t *mine = NULL, *all = NULL;
    size_t *counts = NULL;
    int *ints = NULL, nmine = 0, nall = 0, indegree = 0, outdegree = 0, rc;
    MPI_Comm created = MPI_COMM_NULL;

    (void)info, (void)reorder;
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm_old))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (comm_old->inter)
        return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_COMM, func_name, CRMPI_TOPO_NOT_INTER);
    if (n < 0 || comm_dist_graph == NULL ||
        (n > 0 && (sources == NULL || degrees == NULL || destinations == NULL)))
        return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_ARG, func_name,
                                           "n is negative or an array is NULL");
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_ARG, func_name,
                                               "a degree is negative");
        nmine += degrees[i];
    }
    if (!dist_ranks_ok(sources, n, comm_old->size) ||
        !dist_ranks_ok(destinations, nmine, comm_old->size))
        return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_RANK, func_name,
                                           "an edge names a rank outside comm_old");
    rc = CRMPI_ERR_OUT_OF_RESOURCE;
    mine = malloc(((size_t)nmine + 1) * sizeof(*mine));
    counts = malloc(2 * (size_t)comm_old->size * sizeof(size_t));
    ints = malloc((size_t)comm_old->size * sizeof(int));
    if (!mine || !counts || !ints)
        goto out;
    for (int i = 0, e = 0; i < n; i++) {
        for (int k = 0; k < degrees[i]; k++, e++) {
            mine[e].source = sources[i];
            mine[e].destination = destinations[e];
            mine[e].weight =
                weights == MPI_UNWEIGHTED || weights == MPI_WEIGHTS_EMPTY ? 1 : weights[e];
        }
    }
    /* How many edges each rank gives, then the edges. */
    set = crmpi_comm_xchg_all(comm_old, CRMPI_COMM_TAG_TOPO);
    rc = crmpi_comm_xchg_allgather(&set, &nmine, sizeof(int), ints);
    if (rc != CRMPI_OK)
        goto out;
    for (int r = 0; r < comm_old->size; r++) {
        counts[r] = (size_t)ints[r] * sizeof(dist_edge_t);
        counts[comm_old->size + r] = (size_t)nall * sizeof(dist_edge_t);
        nall += ints[r];
    }
    rc = CRMPI_ERR_OUT_OF_RESOURCE;
    all = malloc(((size_t)nall + 1) * sizeof(*all));
    if (!all)
        goto out;
    rc = crmpi_comm_xchg_allgatherv(&set, mine, counts, counts + comm_old->size, all);
    if (rc != CRMPI_OK)
        goto out;
    /* The edges that touch this process, kept in the global order: in-edges in the first
     * half of one scratch array, out-edges in the second. */
    free(mine);
    mine = malloc(2 * ((size_t)nall + 1) * sizeof(*mine));
    rc = CRMPI_ERR_OUT_OF_RESOURCE;
    if (!mine)
        goto out;
    {
        dist_edge_t *in = mine, *out_edges = mine + nall + 1;
        int *srcs, *sw, *dsts, *dw;
        for (int e = 0; e < nall; e++) {
            if (all[e].destination == comm_old->rank)
                in[indegree++] = all[e];
            if (all[e].source == comm_old->rank)
                out_edges[outdegree++] = all[e];
        }
        srcs = malloc(((size_t)indegree + 1) * sizeof(int));
        sw = malloc(((size_t)indegree + 1) * sizeof(int));
        dsts = malloc(((size_t)outdegree + 1) * sizeof(int));
        dw = malloc(((size_t)outdegree + 1) * sizeof(int));
        if (srcs && sw && dsts && dw) {
            for (int i = 0; i < indegree; i++) {
                srcs[i] = in[i].source;
                sw[i] = in[i].weight;
            }
            for (int i = 0; i < outdegree; i++) {
                dsts[i] = out_edges[i].destination;
                dw[i] = out_edges[i].weight;
            }
            rc = dist_make(comm_old, indegree, srcs, sw, outdegree, dsts, dw,
                           weights != MPI_UNWEIGHTED, &created);
        }
        free(srcs);
        free(sw);
        free(dsts);
        free(dw);
    }

out:
    free(mine);
    free(all);
    free(counts);
    free(ints);
    if (rc != CRMPI_OK)
        return crmpi_mpi_errhandler_invoke(comm_old, crmpi_comm_error_class(rc), func_name,
                                           "cannot make the graph communicator");
    *comm_dist_graph = created;
    crmpi_unlock();
    return MPI_SUCCESS;
}

#define DIST_ENTER(comm, func_name)                                                                \
    do {                                                                                           \
        crmpi_lock();                                                                              \
        crmpi_mpi_require_active(func_name);                                                       \
        if (!crmpi_mpi_comm_is_valid(comm))                                                        \
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);      \
        if (!(comm)->topo || (comm)->topo->kind != MPI_DIST_GRAPH)                                 \
            return crmpi_mpi_errhandler_invoke(                                                    \
                comm, MPI_ERR_TOPOLOGY, func_name,                                                 \
                "the communicator has no distributed graph topology");                             \
    } while (0)

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    static const char func_name[] = "MPI_Dist_graph_neighbors_count";

    DIST_ENTER(comm, func_name);
    if (indegree == NULL || outdegree == NULL || weighted == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "an output is NULL");
    *indegree = comm->topo->indegree;
    *outdegree = comm->topo->outdegree;
    *weighted = comm->topo->weighted;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    static const char func_name[] = "MPI_Dist_graph_neighbors";
    const struct crmpi_topo_s *topo;
    int nin, nout;

    DIST_ENTER(comm, func_name);
    topo = comm->topo;
    if (maxindegree < 0 || maxoutdegree < 0)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "a maximum degree is negative");
    nin = maxindegree < topo->indegree ? maxindegree : topo->indegree;
    nout = maxoutdegree < topo->outdegree ? maxoutdegree : topo->outdegree;
    for (int i = 0; i < nin; i++) {
        sources[i] = topo->sources[i];
        if (topo->weighted && sourceweights != MPI_UNWEIGHTED && sourceweights)
            sourceweights[i] = topo->sourceweights[i];
    }
    for (int i = 0; i < nout; i++) {
        destinations[i] = topo->destinations[i];
        if (topo->weighted && destweights != MPI_UNWEIGHTED && destweights)
            destweights[i] = topo->destweights[i];
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}
