/*
 * topo_base.c: topologies as objects: made, copied with a communicator, destroyed, and
 * MPI_Topo_test (MPI-3.1 section 7.5.5).
 */
#include <stdlib.h>
#include <string.h>

#include "topo.h"

#pragma weak MPI_Topo_test = PMPI_Topo_test

struct crmpi_topo_s *crmpi_topo_new(int kind)
{
    struct crmpi_topo_s *topo = calloc(1, sizeof(*topo));

    if (topo)
        topo->kind = kind;
    return topo;
}

void crmpi_topo_destroy(struct crmpi_topo_s *topo)
{
    if (!topo)
        return;
    free(topo->dims);
    free(topo->periods);
    free(topo->index);
    free(topo->edges);
    free(topo->sources);
    free(topo->sourceweights);
    free(topo->destinations);
    free(topo->destweights);
    free(topo);
}

/* A copy of n ints into *out (NULL for none). */
static bool topo_copy_ints(const int *from, int n, int **out)
{
    *out = NULL;
    if (!from || n <= 0)
        return true;
    *out = malloc((size_t)n * sizeof(int));
    if (*out)
        memcpy(*out, from, (size_t)n * sizeof(int));
    return *out != NULL;
}

struct crmpi_topo_s *crmpi_topo_copy(const struct crmpi_topo_s *topo, int *rc_out)
{
    struct crmpi_topo_s *copy;
    int nedges;

    *rc_out = CRMPI_OK;
    if (!topo)
        return NULL;
    copy = malloc(sizeof(*copy));
    if (!copy)
        goto err_no_memory;
    *copy = *topo;
    nedges = topo->nnodes > 0 && topo->index ? topo->index[topo->nnodes - 1] : 0;
    if (!topo_copy_ints(topo->dims, topo->ndims, &copy->dims) |
        !topo_copy_ints(topo->periods, topo->ndims, &copy->periods) |
        !topo_copy_ints(topo->index, topo->nnodes, &copy->index) |
        !topo_copy_ints(topo->edges, nedges, &copy->edges) |
        !topo_copy_ints(topo->sources, topo->indegree, &copy->sources) |
        !topo_copy_ints(topo->sourceweights, topo->indegree, &copy->sourceweights) |
        !topo_copy_ints(topo->destinations, topo->outdegree, &copy->destinations) |
        !topo_copy_ints(topo->destweights, topo->outdegree, &copy->destweights)) {
        crmpi_topo_destroy(copy);
        goto err_no_memory;
    }
    return copy;

err_no_memory:
    *rc_out = CRMPI_ERR_OUT_OF_RESOURCE;
    return NULL;
}

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    static const char func_name[] = "MPI_Topo_test";

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_COMM, func_name, NULL);
    if (status == NULL)
        return crmpi_mpi_errhandler_invoke(comm, MPI_ERR_ARG, func_name, "status is NULL");
    *status = comm->topo ? comm->topo->kind : MPI_UNDEFINED;
    crmpi_unlock();
    return MPI_SUCCESS;
}
