/*
 * graph.c: general graph topologies (MPI-3.1 sections 7.5.3, 7.5.5): creation and the
 * inquiries. `reorder` is ignored (ranks keep their order).
 */
#include <stdlib.h>
#include <string.h>

#include "topo.h"

#pragma weak MPI_Graph_create = PMPI_Graph_create
#pragma weak MPI_Graph_get = PMPI_Graph_get
#pragma weak MPI_Graphdims_get = PMPI_Graphdims_get
#pragma weak MPI_Graph_neighbors = PMPI_Graph_neighbors
#pragma weak MPI_Graph_neighbors_count = PMPI_Graph_neighbors_count
#pragma weak MPI_Graph_map = PMPI_Graph_map

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    static const char func_name[] = "MPI_Graph_create";
    struct crmpi_topo_s *topo = NULL;
    MPI_Comm created;
    int nedges, rc;

    (void)reorder;
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm_old))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (comm_old->inter)
        return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_COMM, func_name, CRMPI_TOPO_NOT_INTER);
    if (nnodes < 0 || nnodes > comm_old->size || comm_graph == NULL ||
        (nnodes > 0 && (index == NULL || edges == NULL)))
        return crmpi_mpi_errhandler_invoke(
            comm_old, MPI_ERR_ARG, func_name,
            "nnodes is negative or above the size, or an array is NULL");
    nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    for (int i = 0; i < nnodes; i++) {
        if (index[i] < (i > 0 ? index[i - 1] : 0))
            return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_ARG, func_name,
                                               "index is not non-decreasing");
    }
    for (int e = 0; e < nedges; e++) {
        if (edges[e] < 0 || edges[e] >= nnodes)
            return crmpi_mpi_errhandler_invoke(comm_old, MPI_ERR_ARG, func_name,
                                               "an edge names no node of the graph");
    }
    rc = crmpi_comm_split_make(comm_old, comm_old->rank < nnodes ? 0 : MPI_UNDEFINED,
                               comm_old->rank, &created);
    if (rc == CRMPI_OK && created != MPI_COMM_NULL) {
        topo = crmpi_topo_new(MPI_GRAPH);
        if (topo) {
            topo->nnodes = nnodes;
            topo->index = malloc((size_t)nnodes * sizeof(int));
            topo->edges = malloc(((size_t)nedges + 1) * sizeof(int));
        }
        if (!topo || !topo->index || !topo->edges) {
            crmpi_topo_destroy(topo);
            crmpi_comm_destroy(created);
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
        } else {
            memcpy(topo->index, index, (size_t)nnodes * sizeof(int));
            memcpy(topo->edges, edges, (size_t)nedges * sizeof(int));
            created->topo = topo;
        }
    }
    if (rc != CRMPI_OK)
        return crmpi_mpi_errhandler_invoke(comm_old, crmpi_comm_error_class(rc), func_name,
                                           "cannot make the graph communicator");
    *comm_graph = created;
    crmpi_unlock();
    return MPI_SUCCESS;
}

#define GRAPH_ENTER(comm, func_name)                                                               \
    do {                                                                                           \
        crmpi_lock();                                                                              \
        crmpi_mpi_require_active(func_name);                                                       \
        if (!crmpi_mpi_comm_is_valid(comm))                                                        \
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);      \
        if (!(comm)->topo || (comm)->topo->kind != MPI_GRAPH)                                      \
            return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_TOPOLOGY, func_name,                  \
                                               "the communicator has no graph topology");          \
    } while (0)

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    static const char func_name[] = "MPI_Graphdims_get";
    const struct crmpi_topo_s *topo;

    GRAPH_ENTER(comm, func_name);
    topo = comm->topo;
    if (nnodes == NULL || nedges == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "nnodes or nedges is NULL");
    *nnodes = topo->nnodes;
    *nedges = topo->nnodes > 0 ? topo->index[topo->nnodes - 1] : 0;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    static const char func_name[] = "MPI_Graph_get";
    const struct crmpi_topo_s *topo;
    int nedges, n;

    GRAPH_ENTER(comm, func_name);
    topo = comm->topo;
    nedges = topo->nnodes > 0 ? topo->index[topo->nnodes - 1] : 0;
    if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && index == NULL) ||
        (maxedges > 0 && edges == NULL))
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "a maximum is negative or an array is NULL");
    /* As many as fit (7.5.5). */
    n = maxindex < topo->nnodes ? maxindex : topo->nnodes;
    memcpy(index, topo->index, (size_t)n * sizeof(int));
    n = maxedges < nedges ? maxedges : nedges;
    memcpy(edges, topo->edges, (size_t)n * sizeof(int));
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char func_name[] = "MPI_Graph_neighbors_count";
    const struct crmpi_topo_s *topo;

    GRAPH_ENTER(comm, func_name);
    topo = comm->topo;
    if (rank < 0 || rank >= topo->nnodes)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_RANK, func_name, NULL);
    if (nneighbors == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "nneighbors is NULL");
    *nneighbors = topo->index[rank] - (rank > 0 ? topo->index[rank - 1] : 0);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char func_name[] = "MPI_Graph_neighbors";
    const struct crmpi_topo_s *topo;
    int first, count;

    GRAPH_ENTER(comm, func_name);
    topo = comm->topo;
    if (rank < 0 || rank >= topo->nnodes)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_RANK, func_name, NULL);
    first = rank > 0 ? topo->index[rank - 1] : 0;
    count = topo->index[rank] - first;
    if (maxneighbors < 0 || (maxneighbors > 0 && neighbors == NULL))
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "maxneighbors is negative or neighbors is NULL");
    if (count > maxneighbors)
        count = maxneighbors;
    memcpy(neighbors, topo->edges + first, (size_t)count * sizeof(int));
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* MPI_Graph_map (7.5.8): no reordering; the first nnodes processes are the nodes. */
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    static const char func_name[] = "MPI_Graph_map";

    (void)index, (void)edges;
    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (nnodes < 0 || nnodes > comm->size || newrank == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name,
                                           "nnodes is out of range or newrank is NULL");
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    crmpi_unlock();
    return MPI_SUCCESS;
}
