/*
 * neighbor.c: the neighbourhood collectives (MPI-3.1 section 7.6): MPI_Neighbor_allgather,
 * _allgatherv, _alltoall, _alltoallv and _alltoallw, their non-blocking forms (section
 * 7.7, MPI_Ineighbor_*) and their persistent forms (MPI-4.0 section 7.8,
 * MPI_Neighbor_*_init). Each checks its arguments, lists this process's neighbours, and
 * hands the collective to coll/ (coll_neighbor.c: one round of messages on the
 * communicator's collective tags).
 *
 * Neighbour order (7.6): Cartesian, per dimension the rank at -1 then the one at +1 (both
 * for sends and receives; MPI_PROC_NULL at a non-periodic border, whose block is left
 * alone); graph, MPI_Graph_neighbors' order; distributed graph, sources and destinations
 * as given.
 */
#include <stdlib.h>

#include "coll/coll_mpi.h"
#include "topo.h"

#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw
#pragma weak MPI_Neighbor_allgather_init = PMPI_Neighbor_allgather_init
#pragma weak MPI_Neighbor_allgatherv_init = PMPI_Neighbor_allgatherv_init
#pragma weak MPI_Neighbor_alltoall_init = PMPI_Neighbor_alltoall_init
#pragma weak MPI_Neighbor_alltoallv_init = PMPI_Neighbor_alltoallv_init
#pragma weak MPI_Neighbor_alltoallw_init = PMPI_Neighbor_alltoallw_init

int crmpi_topo_neighbors(MPI_Comm comm, int *indegree_out, int **sources_out, int *outdegree_out,
                         int **dests_out)
{
    const struct crmpi_topo_s *topo = comm->topo;
    int nin, nout, first = 0;
    int *in, *out;

    if (!topo)
        return MPI_ERR_TOPOLOGY;
    switch (topo->kind) {
    case MPI_CART: nin = nout = 2 * topo->ndims; break;
    case MPI_GRAPH:
        first = comm->rank > 0 ? topo->index[comm->rank - 1] : 0;
        nin = nout = topo->index[comm->rank] - first;
        break;
    default:
        nin = topo->indegree;
        nout = topo->outdegree;
        break;
    }
    in = malloc(((size_t)nin + 1) * sizeof(int));
    out = malloc(((size_t)nout + 1) * sizeof(int));
    if (!in || !out) {
        free(in);
        free(out);
        return MPI_ERR_NO_MEM;
    }
    if (topo->kind == MPI_CART) {
        int *coords = malloc(((size_t)topo->ndims + 1) * sizeof(int));

        if (!coords) {
            free(in);
            free(out);
            return MPI_ERR_NO_MEM;
        }
        for (int d = 0; d < topo->ndims; d++) {
            crmpi_topo_cart_coords(topo, comm->rank, coords);
            coords[d]--;
            in[2 * d] = out[2 * d] = crmpi_topo_cart_rank(topo, coords);
            coords[d] += 2;
            in[2 * d + 1] = out[2 * d + 1] = crmpi_topo_cart_rank(topo, coords);
        }
        free(coords);
    } else {
        for (int i = 0; i < nin; i++)
            in[i] = topo->kind == MPI_GRAPH ? topo->edges[first + i] : topo->sources[i];
        for (int i = 0; i < nout; i++)
            out[i] = topo->kind == MPI_GRAPH ? topo->edges[first + i] : topo->destinations[i];
    }
    *indegree_out = nin;
    *sources_out = in;
    *outdegree_out = nout;
    *dests_out = out;
    return MPI_SUCCESS;
}

/* The checks of one side: a buffer of `count` (allgather, alltoall), per-neighbour counts
 * and displacements (v), or counts and types (w), for `n` neighbours. */
static int neighbor_check_side(crmpi_coll_kind_t kind, const void *buf, int count,
                               MPI_Datatype type, const int counts[], const void *displs,
                               const MPI_Datatype types[], int n, const char *which,
                               const char **detail_out)
{
    int rc = MPI_SUCCESS;

    switch (kind) {
    case CRMPI_COLL_NEIGHBOR_ALLTOALLW:
        if (counts == NULL || displs == NULL || types == NULL) {
            *detail_out = "a counts, displacements or types array is NULL";
            return MPI_ERR_ARG;
        }
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
            rc = crmpi_mpi_coll_check_buffer(buf, counts[i], types[i], which, detail_out);
        return rc;
    case CRMPI_COLL_NEIGHBOR_ALLTOALLV:
    case CRMPI_COLL_NEIGHBOR_ALLGATHERV:
        if (counts != NULL || displs != NULL)
            return crmpi_mpi_coll_check_vector(buf, counts, displs, type, n, which, detail_out);
        /* allgatherv's send side has a plain count */
        return crmpi_mpi_coll_check_buffer(buf, count, type, which, detail_out);
    default: return crmpi_mpi_coll_check_buffer(buf, count, type, which, detail_out);
    }
}

/*
 * The body of all fifteen calls: `a` holds the buffers and arrays as given, `scount` and
 * `rcount` the plain counts (those of the v and w forms are in the arrays). Returns with
 * the lock released.
 */
static int neighbor_call(crmpi_coll_kind_t kind, crmpi_coll_args_t *a, int scount, int rcount,
                         MPI_Comm comm, MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                         const char *func_name)
{
    const char *detail = NULL;
    int *sources = NULL, *dests = NULL;
    int nin = 0, nout = 0;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (!crmpi_mpi_comm_is_valid(comm))
        COLL_FAIL(MPI_COMM_NULL, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
    /* Checked always: the neighbours come from it. */
    if (!comm->topo)
        COLL_FAIL(comm, MPI_ERR_TOPOLOGY, "the communicator has no topology");
    rc = crmpi_topo_neighbors(comm, &nin, &sources, &nout, &dests);
    if (rc != MPI_SUCCESS)
        COLL_FAIL(comm, rc, "cannot list the neighbours");
    if (crmpi_mpi_state.param_check) {
        bool send_plain = kind == CRMPI_COLL_NEIGHBOR_ALLGATHER ||
                          kind == CRMPI_COLL_NEIGHBOR_ALLGATHERV ||
                          kind == CRMPI_COLL_NEIGHBOR_ALLTOALL;

        rc = neighbor_check_side(send_plain && kind != CRMPI_COLL_NEIGHBOR_ALLTOALL
                                     ? CRMPI_COLL_NEIGHBOR_ALLGATHER
                                     : kind,
                                 a->sbuf, scount, a->stype, a->scounts,
                                 kind == CRMPI_COLL_NEIGHBOR_ALLTOALLW ? (const void *)a->sbdispls
                                                                       : (const void *)a->sdispls,
                                 a->stypes, nout, "the send", &detail);
        if (rc == MPI_SUCCESS)
            rc = neighbor_check_side(kind, a->rbuf, rcount, a->rtype, a->rcounts,
                                     kind == CRMPI_COLL_NEIGHBOR_ALLTOALLW
                                         ? (const void *)a->rbdispls
                                         : (const void *)a->rdispls,
                                     a->rtypes, nin, "the receive", &detail);
        if (rc == MPI_SUCCESS && (a->sbuf == MPI_IN_PLACE || a->rbuf == MPI_IN_PLACE)) {
            rc = MPI_ERR_BUFFER;
            detail = "MPI_IN_PLACE is not allowed in a neighbourhood collective";
        }
        if (rc == MPI_SUCCESS && mode != CRMPI_MPI_COLL_BLOCKING && request == NULL) {
            rc = MPI_ERR_ARG;
            detail = "request is NULL";
        }
        if (rc != MPI_SUCCESS) {
            free(sources);
            free(dests);
            COLL_FAIL(comm, rc, detail);
        }
    }
    a->scount = scount < 0 ? 0 : (size_t)scount;
    a->rcount = rcount < 0 ? 0 : (size_t)rcount;
    a->nsources = nin;
    a->sources = sources;
    a->ndests = nout;
    a->dests = dests;
    a->cart_pairs = comm->topo->kind == MPI_CART;
    /* The lists are read only while the schedule is built (or copied, by the persistent
     * form), so they can go when the call returns. */
    rc = crmpi_mpi_coll_call_mode(comm, kind, a, request, mode, func_name);
    free(sources);
    free(dests);
    return rc;
}

/* allgather */
static int neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                              const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sendbuf, .stype = sendtype, .rbuf = recvbuf, .rtype = recvtype};

    return neighbor_call(CRMPI_COLL_NEIGHBOR_ALLGATHER, &a, sendcount, recvcount, comm, request,
                         mode, func_name);
}

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Neighbor_allgather");
}

int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    return neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ineighbor_allgather");
}

int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    (void)info;
    return neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Neighbor_allgather_init");
}

/* allgatherv */
static int neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request,
                               crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sendbuf,
                           .stype = sendtype,
                           .rbuf = recvbuf,
                           .rcounts = recvcounts,
                           .rdispls = displs,
                           .rtype = recvtype};

    return neighbor_call(CRMPI_COLL_NEIGHBOR_ALLGATHERV, &a, sendcount, 0, comm, request, mode,
                         func_name);
}

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Neighbor_allgatherv");
}

int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                               "MPI_Ineighbor_allgatherv");
}

int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    (void)info;
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, request, CRMPI_MPI_COLL_PERSISTENT,
                               "MPI_Neighbor_allgatherv_init");
}

/* alltoall */
static int neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                             const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sendbuf, .stype = sendtype, .rbuf = recvbuf, .rtype = recvtype};

    return neighbor_call(CRMPI_COLL_NEIGHBOR_ALLTOALL, &a, sendcount, recvcount, comm, request,
                         mode, func_name);
}

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL,
                             CRMPI_MPI_COLL_BLOCKING, "MPI_Neighbor_alltoall");
}

int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    return neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ineighbor_alltoall");
}

int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    (void)info;
    return neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Neighbor_alltoall_init");
}

/* alltoallv */
static int neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                              const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sendbuf,
                           .scounts = sendcounts,
                           .sdispls = sdispls,
                           .stype = sendtype,
                           .rbuf = recvbuf,
                           .rcounts = recvcounts,
                           .rdispls = rdispls,
                           .rtype = recvtype};

    return neighbor_call(CRMPI_COLL_NEIGHBOR_ALLTOALLV, &a, 0, 0, comm, request, mode, func_name);
}

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                              "MPI_Neighbor_alltoallv");
}

int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    return neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                              "MPI_Ineighbor_alltoallv");
}

int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    (void)info;
    return neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                              "MPI_Neighbor_alltoallv_init");
}

/* alltoallw: byte displacements (MPI_Aint) and a type per neighbour */
static int neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                              MPI_Comm comm, MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                              const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sendbuf,
                           .scounts = sendcounts,
                           .sbdispls = sdispls,
                           .stypes = sendtypes,
                           .rbuf = recvbuf,
                           .rcounts = recvcounts,
                           .rbdispls = rdispls,
                           .rtypes = recvtypes};

    return neighbor_call(CRMPI_COLL_NEIGHBOR_ALLTOALLW, &a, 0, 0, comm, request, mode, func_name);
}

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                              "MPI_Neighbor_alltoallw");
}

int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request *request)
{
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                              "MPI_Ineighbor_alltoallw");
}

int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    (void)info;
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                              "MPI_Neighbor_alltoallw_init");
}
