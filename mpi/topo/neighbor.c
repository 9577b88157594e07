/*
 * neighbor.c: the neighbourhood collectives (MPI-3.1 section 7.6): MPI_Neighbor_allgather,
 * _allgatherv, _alltoall, _alltoallv and _alltoallw, their non-blocking forms (section
 * 7.7, MPI_Ineighbor_*) and their persistent forms (MPI-4.0 section 7.8,
 * MPI_Neighbor_*_init), and the large-count "_c" form of each. Each checks its arguments, lists
 * this process's neighbours, and hands the collective to coll/ (coll_neighbor.c: one round of
 * messages on the communicator's collective tags).
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
#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
#pragma weak MPI_Neighbor_allgather_init = PMPI_Neighbor_allgather_init
#pragma weak MPI_Neighbor_allgather_c = PMPI_Neighbor_allgather_c
#pragma weak MPI_Ineighbor_allgather_c = PMPI_Ineighbor_allgather_c
#pragma weak MPI_Neighbor_allgather_init_c = PMPI_Neighbor_allgather_init_c
#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
#pragma weak MPI_Neighbor_allgatherv_init = PMPI_Neighbor_allgatherv_init
#pragma weak MPI_Neighbor_allgatherv_c = PMPI_Neighbor_allgatherv_c
#pragma weak MPI_Ineighbor_allgatherv_c = PMPI_Ineighbor_allgatherv_c
#pragma weak MPI_Neighbor_allgatherv_init_c = PMPI_Neighbor_allgatherv_init_c
#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
#pragma weak MPI_Neighbor_alltoall_init = PMPI_Neighbor_alltoall_init
#pragma weak MPI_Neighbor_alltoall_c = PMPI_Neighbor_alltoall_c
#pragma weak MPI_Ineighbor_alltoall_c = PMPI_Ineighbor_alltoall_c
#pragma weak MPI_Neighbor_alltoall_init_c = PMPI_Neighbor_alltoall_init_c
#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
#pragma weak MPI_Neighbor_alltoallv_init = PMPI_Neighbor_alltoallv_init
#pragma weak MPI_Neighbor_alltoallv_c = PMPI_Neighbor_alltoallv_c
#pragma weak MPI_Ineighbor_alltoallv_c = PMPI_Ineighbor_alltoallv_c
#pragma weak MPI_Neighbor_alltoallv_init_c = PMPI_Neighbor_alltoallv_init_c
#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw
#pragma weak MPI_Neighbor_alltoallw_init = PMPI_Neighbor_alltoallw_init
#pragma weak MPI_Neighbor_alltoallw_c = PMPI_Neighbor_alltoallw_c
#pragma weak MPI_Ineighbor_alltoallw_c = PMPI_Ineighbor_alltoallw_c
#pragma weak MPI_Neighbor_alltoallw_init_c = PMPI_Neighbor_alltoallw_init_c

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
static int neighbor_check_side(crmpi_coll_kind_t kind, const void *buf, MPI_Count count,
                               MPI_Datatype type, crmpi_count_array_t counts,
                               crmpi_count_array_t displs, const MPI_Datatype types[], int n,
                               const char *which, const char **detail_out)
{
    int rc = MPI_SUCCESS;

    switch (kind) {
    case CRMPI_COLL_NEIGHBOR_ALLTOALLW:
        if (counts.base == NULL || displs.base == NULL || types == NULL) {
            *detail_out = "a counts, displacements or types array is NULL";
            return MPI_ERR_ARG;
        }
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
            rc = crmpi_mpi_coll_check_buffer(buf, crmpi_count_array_at(counts, i), types[i], which,
                                             detail_out);
        return rc;
    case CRMPI_COLL_NEIGHBOR_ALLTOALLV:
    case CRMPI_COLL_NEIGHBOR_ALLGATHERV:
        if (counts.base != NULL || displs.base != NULL)
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
static int neighbor_call(crmpi_coll_kind_t kind, crmpi_coll_args_t *a, MPI_Count scount,
                         MPI_Count rcount, MPI_Comm comm, MPI_Request *request,
                         crmpi_mpi_coll_mode_t mode, const char *func_name)
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
                                 a->sbuf, scount, a->stype, a->scounts, a->sdispls, a->stypes, nout,
                                 "the send", &detail);
        if (rc == MPI_SUCCESS)
            rc = neighbor_check_side(kind, a->rbuf, rcount, a->rtype, a->rcounts, a->rdispls,
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

/* Allgather and alltoall: one count on each side. */
static int neighbor_fixed(crmpi_coll_kind_t kind, const void *sbuf, MPI_Count scount,
                          MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                          MPI_Comm comm, MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                          const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sbuf, .stype = stype, .rbuf = rbuf, .rtype = rtype};

    return neighbor_call(kind, &a, scount, rcount, comm, request, mode, func_name);
}

static int neighbor_allgatherv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                               crmpi_count_array_t rcounts, crmpi_count_array_t rdispls,
                               MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request,
                               crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sbuf,
                           .stype = stype,
                           .rbuf = rbuf,
                           .rcounts = rcounts,
                           .rdispls = rdispls,
                           .rtype = rtype};

    return neighbor_call(CRMPI_COLL_NEIGHBOR_ALLGATHERV, &a, scount, 0, comm, request, mode,
                         func_name);
}

static int neighbor_alltoallv(const void *sbuf, crmpi_count_array_t scounts,
                              crmpi_count_array_t sdispls, MPI_Datatype stype, void *rbuf,
                              crmpi_count_array_t rcounts, crmpi_count_array_t rdispls,
                              MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request,
                              crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sbuf,
                           .scounts = scounts,
                           .sdispls = sdispls,
                           .stype = stype,
                           .rbuf = rbuf,
                           .rcounts = rcounts,
                           .rdispls = rdispls,
                           .rtype = rtype};

    return neighbor_call(CRMPI_COLL_NEIGHBOR_ALLTOALLV, &a, 0, 0, comm, request, mode, func_name);
}

/* Alltoallw: byte displacements (MPI_Aint) and a type per neighbour. */
static int neighbor_alltoallw(const void *sbuf, crmpi_count_array_t scounts,
                              crmpi_count_array_t sdispls, const MPI_Datatype stypes[], void *rbuf,
                              crmpi_count_array_t rcounts, crmpi_count_array_t rdispls,
                              const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request *request,
                              crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sbuf,
                           .scounts = scounts,
                           .sdispls = sdispls,
                           .stypes = stypes,
                           .rbuf = rbuf,
                           .rcounts = rcounts,
                           .rdispls = rdispls,
                           .rtypes = rtypes};

    return neighbor_call(CRMPI_COLL_NEIGHBOR_ALLTOALLW, &a, 0, 0, comm, request, mode, func_name);
}

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                          "MPI_Neighbor_allgather");
}

int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                          "MPI_Ineighbor_allgather");
}

int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                          "MPI_Neighbor_allgather_init");
}

int PMPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm)
{
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                          "MPI_Neighbor_allgather_c");
}

int PMPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request)
{
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                          "MPI_Ineighbor_allgather_c");
}

int PMPI_Neighbor_allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                          "MPI_Neighbor_allgather_init_c");
}

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                               crmpi_count_array_int(recvcounts), crmpi_count_array_int(displs),
                               recvtype, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                               "MPI_Neighbor_allgatherv");
}

int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                               crmpi_count_array_int(recvcounts), crmpi_count_array_int(displs),
                               recvtype, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                               "MPI_Ineighbor_allgatherv");
}

int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    (void)info; /* no hints are used */
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                               crmpi_count_array_int(recvcounts), crmpi_count_array_int(displs),
                               recvtype, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                               "MPI_Neighbor_allgatherv_init");
}

int PMPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                               crmpi_count_array_count(recvcounts), crmpi_count_array_aint(displs),
                               recvtype, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                               "MPI_Neighbor_allgatherv_c");
}

int PMPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request)
{
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                               crmpi_count_array_count(recvcounts), crmpi_count_array_aint(displs),
                               recvtype, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                               "MPI_Ineighbor_allgatherv_c");
}

int PMPI_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const MPI_Count recvcounts[],
                                    const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                               crmpi_count_array_count(recvcounts), crmpi_count_array_aint(displs),
                               recvtype, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                               "MPI_Neighbor_allgatherv_init_c");
}

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                          "MPI_Neighbor_alltoall");
}

int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                          "MPI_Ineighbor_alltoall");
}

int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                          "MPI_Neighbor_alltoall_init");
}

int PMPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm)
{
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                          "MPI_Neighbor_alltoall_c");
}

int PMPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request *request)
{
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                          "MPI_Ineighbor_alltoall_c");
}

int PMPI_Neighbor_alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return neighbor_fixed(CRMPI_COLL_NEIGHBOR_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                          "MPI_Neighbor_alltoall_init_c");
}

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_alltoallv(
        sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(sdispls), sendtype,
        recvbuf, crmpi_count_array_int(recvcounts), crmpi_count_array_int(rdispls), recvtype, comm,
        NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Neighbor_alltoallv");
}

int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    return neighbor_alltoallv(
        sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(sdispls), sendtype,
        recvbuf, crmpi_count_array_int(recvcounts), crmpi_count_array_int(rdispls), recvtype, comm,
        request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ineighbor_alltoallv");
}

int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return neighbor_alltoallv(
        sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(sdispls), sendtype,
        recvbuf, crmpi_count_array_int(recvcounts), crmpi_count_array_int(rdispls), recvtype, comm,
        request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Neighbor_alltoallv_init");
}

int PMPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_alltoallv(
        sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls), sendtype,
        recvbuf, crmpi_count_array_count(recvcounts), crmpi_count_array_aint(rdispls), recvtype,
        comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Neighbor_alltoallv_c");
}

int PMPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return neighbor_alltoallv(
        sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls), sendtype,
        recvbuf, crmpi_count_array_count(recvcounts), crmpi_count_array_aint(rdispls), recvtype,
        comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ineighbor_alltoallv_c");
}

int PMPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    (void)info; /* no hints are used */
    return neighbor_alltoallv(
        sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls), sendtype,
        recvbuf, crmpi_count_array_count(recvcounts), crmpi_count_array_aint(rdispls), recvtype,
        comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Neighbor_alltoallv_init_c");
}

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return neighbor_alltoallw(
        sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_aint(sdispls), sendtypes,
        recvbuf, crmpi_count_array_int(recvcounts), crmpi_count_array_aint(rdispls), recvtypes,
        comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Neighbor_alltoallw");
}

int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request *request)
{
    return neighbor_alltoallw(
        sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_aint(sdispls), sendtypes,
        recvbuf, crmpi_count_array_int(recvcounts), crmpi_count_array_aint(rdispls), recvtypes,
        comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ineighbor_alltoallw");
}

int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    (void)info; /* no hints are used */
    return neighbor_alltoallw(
        sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_aint(sdispls), sendtypes,
        recvbuf, crmpi_count_array_int(recvcounts), crmpi_count_array_aint(rdispls), recvtypes,
        comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Neighbor_alltoallw_init");
}

int PMPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                              void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return neighbor_alltoallw(
        sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls), sendtypes,
        recvbuf, crmpi_count_array_count(recvcounts), crmpi_count_array_aint(rdispls), recvtypes,
        comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Neighbor_alltoallw_c");
}

int PMPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                               MPI_Comm comm, MPI_Request *request)
{
    return neighbor_alltoallw(
        sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls), sendtypes,
        recvbuf, crmpi_count_array_count(recvcounts), crmpi_count_array_aint(rdispls), recvtypes,
        comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ineighbor_alltoallw_c");
}

int PMPI_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return neighbor_alltoallw(
        sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls), sendtypes,
        recvbuf, crmpi_count_array_count(recvcounts), crmpi_count_array_aint(rdispls), recvtypes,
        comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Neighbor_alltoallw_init_c");
}
