/*
 * alltoall.c: MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw (MPI-3.1 section 5.8), their
 * non-blocking (5.12.6) and persistent (MPI-4.0 section 6.13) forms, and the large-count
 * "_c" form of each. With MPI_IN_PLACE as sendbuf, the send arguments are
 * ignored and the blocks are taken from, and replaced in, recvbuf. On an
 * intercommunicator, block r goes to and comes from rank r of the remote group, and
 * MPI_IN_PLACE is not allowed (coll_mpi.h).
 */
#include "coll_mpi.h"

#pragma weak MPI_Alltoall = PMPI_Alltoall
#pragma weak MPI_Ialltoall = PMPI_Ialltoall
#pragma weak MPI_Alltoall_init = PMPI_Alltoall_init
#pragma weak MPI_Alltoall_c = PMPI_Alltoall_c
#pragma weak MPI_Ialltoall_c = PMPI_Ialltoall_c
#pragma weak MPI_Alltoall_init_c = PMPI_Alltoall_init_c
#pragma weak MPI_Alltoallv = PMPI_Alltoallv
#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv
#pragma weak MPI_Alltoallv_init = PMPI_Alltoallv_init
#pragma weak MPI_Alltoallv_c = PMPI_Alltoallv_c
#pragma weak MPI_Ialltoallv_c = PMPI_Ialltoallv_c
#pragma weak MPI_Alltoallv_init_c = PMPI_Alltoallv_init_c
#pragma weak MPI_Alltoallw = PMPI_Alltoallw
#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw
#pragma weak MPI_Alltoallw_init = PMPI_Alltoallw_init
#pragma weak MPI_Alltoallw_c = PMPI_Alltoallw_c
#pragma weak MPI_Ialltoallw_c = PMPI_Ialltoallw_c
#pragma weak MPI_Alltoallw_init_c = PMPI_Alltoallw_init_c

/* Check one side of an alltoallw: arrays present, every count and type usable. */
static int alltoallw_check_side(const void *buf, crmpi_count_array_t counts,
                                crmpi_count_array_t displs, const MPI_Datatype types[], int size,
                                const char *which, const char **detail_out)
{
    if (counts.base == NULL || displs.base == NULL || types == NULL) {
        *detail_out = "a counts, displacements or types array is NULL";
        return MPI_ERR_ARG;
    }
    for (int r = 0; r < size; r++) {
        int rc = crmpi_mpi_coll_check_buffer(buf, crmpi_count_array_at(counts, r), types[r], which,
                                             detail_out);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static int alltoall_body(crmpi_coll_kind_t kind, const crmpi_coll_args_t *in, MPI_Count scount,
                         MPI_Count rcount, MPI_Comm comm, MPI_Request *request,
                         crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    crmpi_coll_args_t args = *in;
    bool in_place = in->sbuf == MPI_IN_PLACE;
    const char *detail;
    int rc = MPI_SUCCESS;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm))
            COLL_FAIL(MPI_COMM_NULL, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
        if (in->rbuf == MPI_IN_PLACE)
            COLL_FAIL(comm, MPI_ERR_BUFFER, "recvbuf cannot be MPI_IN_PLACE");
        if (in_place && comm->inter)
            COLL_FAIL(comm, MPI_ERR_BUFFER, CRMPI_MPI_COLL_INTER_IN_PLACE);
        switch (kind) {
        case CRMPI_COLL_ALLTOALL:
            if (!in_place)
                rc = crmpi_mpi_coll_check_buffer(in->sbuf, scount, in->stype, "the send", &detail);
            if (rc == MPI_SUCCESS)
                rc = crmpi_mpi_coll_check_buffer(in->rbuf, rcount, in->rtype, "the receive",
                                                 &detail);
            break;
        case CRMPI_COLL_ALLTOALLV:
            if (!in_place)
                rc = crmpi_mpi_coll_check_vector(in->sbuf, in->scounts, in->sdispls, in->stype,
                                                 comm->remote_size, "the send", &detail);
            if (rc == MPI_SUCCESS)
                rc = crmpi_mpi_coll_check_vector(in->rbuf, in->rcounts, in->rdispls, in->rtype,
                                                 comm->remote_size, "the receive", &detail);
            break;
        default:
            if (!in_place)
                rc = alltoallw_check_side(in->sbuf, in->scounts, in->sdispls, in->stypes,
                                          comm->remote_size, "a send", &detail);
            if (rc == MPI_SUCCESS)
                rc = alltoallw_check_side(in->rbuf, in->rcounts, in->rdispls, in->rtypes,
                                          comm->remote_size, "a receive", &detail);
            break;
        }
        if (rc != MPI_SUCCESS)
            COLL_FAIL(comm, rc, detail);
        if (mode != CRMPI_MPI_COLL_BLOCKING && request == NULL)
            COLL_FAIL(comm, MPI_ERR_ARG, "request is NULL");
    }
    args.in_place = in_place;
    if (in_place) {
        args.sbuf = NULL;
        args.scounts = CRMPI_COUNT_ARRAY_NONE;
        args.sdispls = CRMPI_COUNT_ARRAY_NONE;
        args.stypes = NULL;
        args.stype = in->rtype;
    }
    args.scount = scount < 0 ? 0 : (size_t)scount;
    args.rcount = rcount < 0 ? 0 : (size_t)rcount;
    return crmpi_mpi_coll_call_mode(comm, kind, &args, request, mode, func_name);
}

static int alltoall_fixed(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                          MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request,
                          crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sbuf, .stype = stype, .rbuf = rbuf, .rtype = rtype};

    return alltoall_body(CRMPI_COLL_ALLTOALL, &a, scount, rcount, comm, request, mode, func_name);
}

static int alltoall_v(const void *sbuf, crmpi_count_array_t scounts, crmpi_count_array_t sdispls,
                      MPI_Datatype stype, void *rbuf, crmpi_count_array_t rcounts,
                      crmpi_count_array_t rdispls, MPI_Datatype rtype, MPI_Comm comm,
                      MPI_Request *request, crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sbuf,
                           .scounts = scounts,
                           .sdispls = sdispls,
                           .stype = stype,
                           .rbuf = rbuf,
                           .rcounts = rcounts,
                           .rdispls = rdispls,
                           .rtype = rtype};

    return alltoall_body(CRMPI_COLL_ALLTOALLV, &a, 0, 0, comm, request, mode, func_name);
}

/* The displacements of Alltoallw are in bytes. */
static int alltoall_w(const void *sbuf, crmpi_count_array_t scounts, crmpi_count_array_t sdispls,
                      const MPI_Datatype stypes[], void *rbuf, crmpi_count_array_t rcounts,
                      crmpi_count_array_t rdispls, const MPI_Datatype rtypes[], MPI_Comm comm,
                      MPI_Request *request, crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    crmpi_coll_args_t a = {.sbuf = sbuf,
                           .scounts = scounts,
                           .sdispls = sdispls,
                           .stypes = stypes,
                           .rbuf = rbuf,
                           .rcounts = rcounts,
                           .rdispls = rdispls,
                           .rtypes = rtypes};

    return alltoall_body(CRMPI_COLL_ALLTOALLW, &a, 0, 0, comm, request, mode, func_name);
}

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall_fixed(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL,
                          CRMPI_MPI_COLL_BLOCKING, "MPI_Alltoall");
}

int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return alltoall_fixed(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                          CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ialltoall");
}

int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    (void)info; /* no hints are used */
    return alltoall_fixed(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                          CRMPI_MPI_COLL_PERSISTENT, "MPI_Alltoall_init");
}

int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall_fixed(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL,
                          CRMPI_MPI_COLL_BLOCKING, "MPI_Alltoall_c");
}

int PMPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    return alltoall_fixed(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                          CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ialltoall_c");
}

int PMPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return alltoall_fixed(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                          CRMPI_MPI_COLL_PERSISTENT, "MPI_Alltoall_init_c");
}

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall_v(sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(sdispls),
                      sendtype, recvbuf, crmpi_count_array_int(recvcounts),
                      crmpi_count_array_int(rdispls), recvtype, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                      "MPI_Alltoallv");
}

int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return alltoall_v(sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(sdispls),
                      sendtype, recvbuf, crmpi_count_array_int(recvcounts),
                      crmpi_count_array_int(rdispls), recvtype, comm, request,
                      CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ialltoallv");
}

int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    (void)info; /* no hints are used */
    return alltoall_v(sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(sdispls),
                      sendtype, recvbuf, crmpi_count_array_int(recvcounts),
                      crmpi_count_array_int(rdispls), recvtype, comm, request,
                      CRMPI_MPI_COLL_PERSISTENT, "MPI_Alltoallv_init");
}

int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall_v(sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls),
                      sendtype, recvbuf, crmpi_count_array_count(recvcounts),
                      crmpi_count_array_aint(rdispls), recvtype, comm, NULL,
                      CRMPI_MPI_COLL_BLOCKING, "MPI_Alltoallv_c");
}

int PMPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request)
{
    return alltoall_v(sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls),
                      sendtype, recvbuf, crmpi_count_array_count(recvcounts),
                      crmpi_count_array_aint(rdispls), recvtype, comm, request,
                      CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ialltoallv_c");
}

int PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return alltoall_v(sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls),
                      sendtype, recvbuf, crmpi_count_array_count(recvcounts),
                      crmpi_count_array_aint(rdispls), recvtype, comm, request,
                      CRMPI_MPI_COLL_PERSISTENT, "MPI_Alltoallv_init_c");
}

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoall_w(sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(sdispls),
                      sendtypes, recvbuf, crmpi_count_array_int(recvcounts),
                      crmpi_count_array_int(rdispls), recvtypes, comm, NULL,
                      CRMPI_MPI_COLL_BLOCKING, "MPI_Alltoallw");
}

int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    return alltoall_w(sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(sdispls),
                      sendtypes, recvbuf, crmpi_count_array_int(recvcounts),
                      crmpi_count_array_int(rdispls), recvtypes, comm, request,
                      CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ialltoallw");
}

int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return alltoall_w(sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(sdispls),
                      sendtypes, recvbuf, crmpi_count_array_int(recvcounts),
                      crmpi_count_array_int(rdispls), recvtypes, comm, request,
                      CRMPI_MPI_COLL_PERSISTENT, "MPI_Alltoallw_init");
}

int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoall_w(sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls),
                      sendtypes, recvbuf, crmpi_count_array_count(recvcounts),
                      crmpi_count_array_aint(rdispls), recvtypes, comm, NULL,
                      CRMPI_MPI_COLL_BLOCKING, "MPI_Alltoallw_c");
}

int PMPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                      MPI_Request *request)
{
    return alltoall_w(sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls),
                      sendtypes, recvbuf, crmpi_count_array_count(recvcounts),
                      crmpi_count_array_aint(rdispls), recvtypes, comm, request,
                      CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ialltoallw_c");
}

int PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    (void)info; /* no hints are used */
    return alltoall_w(sendbuf, crmpi_count_array_count(sendcounts), crmpi_count_array_aint(sdispls),
                      sendtypes, recvbuf, crmpi_count_array_count(recvcounts),
                      crmpi_count_array_aint(rdispls), recvtypes, comm, request,
                      CRMPI_MPI_COLL_PERSISTENT, "MPI_Alltoallw_init_c");
}
