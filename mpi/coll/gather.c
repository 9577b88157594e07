/*
 * gather.c: MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v) (MPI-3.1 sections 5.5 to 5.7),
 * their non-blocking (5.12.3 to 5.12.5) and persistent (MPI-4.0 section 6.13) forms, and
 * the large-count "_c" form of each, on intra- and intercommunicators (coll_mpi.h).
 */
#include "coll_mpi.h"

#pragma weak MPI_Gather = PMPI_Gather
#pragma weak MPI_Igather = PMPI_Igather
#pragma weak MPI_Gather_init = PMPI_Gather_init
#pragma weak MPI_Gather_c = PMPI_Gather_c
#pragma weak MPI_Igather_c = PMPI_Igather_c
#pragma weak MPI_Gather_init_c = PMPI_Gather_init_c
#pragma weak MPI_Gatherv = PMPI_Gatherv
#pragma weak MPI_Igatherv = PMPI_Igatherv
#pragma weak MPI_Gatherv_init = PMPI_Gatherv_init
#pragma weak MPI_Gatherv_c = PMPI_Gatherv_c
#pragma weak MPI_Igatherv_c = PMPI_Igatherv_c
#pragma weak MPI_Gatherv_init_c = PMPI_Gatherv_init_c
#pragma weak MPI_Scatter = PMPI_Scatter
#pragma weak MPI_Iscatter = PMPI_Iscatter
#pragma weak MPI_Scatter_init = PMPI_Scatter_init
#pragma weak MPI_Scatter_c = PMPI_Scatter_c
#pragma weak MPI_Iscatter_c = PMPI_Iscatter_c
#pragma weak MPI_Scatter_init_c = PMPI_Scatter_init_c
#pragma weak MPI_Scatterv = PMPI_Scatterv
#pragma weak MPI_Iscatterv = PMPI_Iscatterv
#pragma weak MPI_Scatterv_init = PMPI_Scatterv_init
#pragma weak MPI_Scatterv_c = PMPI_Scatterv_c
#pragma weak MPI_Iscatterv_c = PMPI_Iscatterv_c
#pragma weak MPI_Scatterv_init_c = PMPI_Scatterv_init_c
#pragma weak MPI_Allgather = PMPI_Allgather
#pragma weak MPI_Iallgather = PMPI_Iallgather
#pragma weak MPI_Allgather_init = PMPI_Allgather_init
#pragma weak MPI_Allgather_c = PMPI_Allgather_c
#pragma weak MPI_Iallgather_c = PMPI_Iallgather_c
#pragma weak MPI_Allgather_init_c = PMPI_Allgather_init_c
#pragma weak MPI_Allgatherv = PMPI_Allgatherv
#pragma weak MPI_Iallgatherv = PMPI_Iallgatherv
#pragma weak MPI_Allgatherv_init = PMPI_Allgatherv_init
#pragma weak MPI_Allgatherv_c = PMPI_Allgatherv_c
#pragma weak MPI_Iallgatherv_c = PMPI_Iallgatherv_c
#pragma weak MPI_Allgatherv_init_c = PMPI_Allgatherv_init_c

/* The arguments of one gather-family call; the counts/displs arrays only for v forms. */
typedef struct gather_call {
    crmpi_coll_kind_t kind;      /* which of the six */
    const void *sbuf;            /* sendbuf (may be MPI_IN_PLACE) */
    MPI_Count scount;            /* sendcount (not Scatterv) */
    crmpi_count_array_t scounts; /* Scatterv's sendcounts */
    crmpi_count_array_t sdispls; /* Scatterv's displs */
    MPI_Datatype stype;          /* sendtype */
    void *rbuf;                  /* recvbuf (may be MPI_IN_PLACE) */
    MPI_Count rcount;            /* recvcount (not Gatherv, Allgatherv) */
    crmpi_count_array_t rcounts; /* Gatherv's and Allgatherv's recvcounts */
    crmpi_count_array_t rdispls; /* their displs */
    MPI_Datatype rtype;          /* recvtype */
    int root;                    /* the root (the allgathers pass -1 and never read it) */
} gather_call_t;

/* An allgather has no root: the kind says so, not the root, which may be any bad value. */
static bool gather_is_all(const gather_call_t *c)
{
    return c->kind == CRMPI_COLL_ALLGATHER || c->kind == CRMPI_COLL_ALLGATHERV;
}

/*
 * The checks on an intercommunicator (MPI-3.1 section 5.2.3): the root (MPI_ROOT) has the
 * blocks of every process of the other group, which send or receive one each; the rest of
 * the root's group (MPI_PROC_NULL) passes nothing significant; for the allgathers every
 * process sends its block and receives the other group's. No MPI_IN_PLACE.
 */
static int gather_check_inter(const gather_call_t *c, MPI_Comm comm, const char **detail_out)
{
    bool all = gather_is_all(c);
    bool is_root = !all && c->root == MPI_ROOT;
    bool scatter = c->kind == CRMPI_COLL_SCATTER || c->kind == CRMPI_COLL_SCATTERV;
    bool vector = c->kind == CRMPI_COLL_GATHERV || c->kind == CRMPI_COLL_SCATTERV ||
                  c->kind == CRMPI_COLL_ALLGATHERV;
    /* Who sends, who receives: the root the other group's blocks, the others their own. */
    bool sends = all || (scatter ? is_root : !is_root);
    bool receives = all || (scatter ? !is_root : is_root);
    int n = comm->remote_size;

    if (!all && !crmpi_mpi_coll_root_ok(comm, c->root)) {
        *detail_out = crmpi_mpi_coll_root_detail(comm);
        return MPI_ERR_ROOT;
    }
    if (!all && c->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((sends && c->sbuf == MPI_IN_PLACE) || (receives && c->rbuf == MPI_IN_PLACE)) {
        *detail_out = CRMPI_MPI_COLL_INTER_IN_PLACE;
        return MPI_ERR_BUFFER;
    }
    if (sends) {
        /* Only a Scatterv root sends blocks of different sizes. */
        int rc =
            vector && scatter
                ? crmpi_mpi_coll_check_vector(c->sbuf, c->scounts, c->sdispls, c->stype, n,
                                              "the send", detail_out)
                : crmpi_mpi_coll_check_buffer(c->sbuf, c->scount, c->stype, "the send", detail_out);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (receives) {
        return vector && !scatter
                   ? crmpi_mpi_coll_check_vector(c->rbuf, c->rcounts, c->rdispls, c->rtype, n,
                                                 "the receive", detail_out)
                   : crmpi_mpi_coll_check_buffer(c->rbuf, c->rcount, c->rtype, "the receive",
                                                 detail_out);
    }
    return MPI_SUCCESS;
}

static int gather_check(const gather_call_t *c, MPI_Comm comm, const char **detail_out)
{
    bool all = gather_is_all(c);
    bool is_root = all || comm->rank == c->root;
    bool scatter = c->kind == CRMPI_COLL_SCATTER || c->kind == CRMPI_COLL_SCATTERV;
    bool vector = c->kind == CRMPI_COLL_GATHERV || c->kind == CRMPI_COLL_SCATTERV ||
                  c->kind == CRMPI_COLL_ALLGATHERV;
    int rc;

    if (comm->inter)
        return gather_check_inter(c, comm, detail_out);
    if (!all && !crmpi_mpi_coll_root_ok(comm, c->root)) {
        *detail_out = crmpi_mpi_coll_root_detail(comm);
        return MPI_ERR_ROOT;
    }
    if (scatter) {
        /* The root's receive buffer may be MPI_IN_PLACE; nobody's send buffer may. */
        if (c->rbuf == MPI_IN_PLACE && !is_root) {
            *detail_out = "MPI_IN_PLACE is for the root's recvbuf only";
            return MPI_ERR_BUFFER;
        }
        if (c->sbuf == MPI_IN_PLACE) {
            *detail_out = "sendbuf cannot be MPI_IN_PLACE";
            return MPI_ERR_BUFFER;
        }
        if (is_root) {
            rc = vector ? crmpi_mpi_coll_check_vector(c->sbuf, c->scounts, c->sdispls, c->stype,
                                                      comm->size, "the send", detail_out)
                        : crmpi_mpi_coll_check_buffer(c->sbuf, c->scount, c->stype, "the send",
                                                      detail_out);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        if (c->rbuf != MPI_IN_PLACE)
            return crmpi_mpi_coll_check_buffer(c->rbuf, c->rcount, c->rtype, "the receive",
                                               detail_out);
        return MPI_SUCCESS;
    }
    if (c->rbuf == MPI_IN_PLACE) {
        *detail_out = "recvbuf cannot be MPI_IN_PLACE";
        return MPI_ERR_BUFFER;
    }
    if (c->sbuf == MPI_IN_PLACE && !is_root) {
        *detail_out = "MPI_IN_PLACE is for the root's sendbuf only";
        return MPI_ERR_BUFFER;
    }
    if (c->sbuf != MPI_IN_PLACE) {
        rc = crmpi_mpi_coll_check_buffer(c->sbuf, c->scount, c->stype, "the send", detail_out);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (is_root) {
        return vector ? crmpi_mpi_coll_check_vector(c->rbuf, c->rcounts, c->rdispls, c->rtype,
                                                    comm->size, "the receive", detail_out)
                      : crmpi_mpi_coll_check_buffer(c->rbuf, c->rcount, c->rtype, "the receive",
                                                    detail_out);
    }
    return MPI_SUCCESS;
}

static int gather_body(const gather_call_t *c, MPI_Comm comm, MPI_Request *request,
                       crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    crmpi_coll_args_t args = {0};
    const char *detail;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm))
            COLL_FAIL(MPI_COMM_NULL, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
        rc = gather_check(c, comm, &detail);
        if (rc != MPI_SUCCESS)
            COLL_FAIL(comm, rc, detail);
        if (mode != CRMPI_MPI_COLL_BLOCKING && request == NULL)
            COLL_FAIL(comm, MPI_ERR_ARG, "request is NULL");
    }
    args.in_place = c->sbuf == MPI_IN_PLACE || c->rbuf == MPI_IN_PLACE;
    args.sbuf = c->sbuf == MPI_IN_PLACE ? NULL : c->sbuf;
    args.scount = c->scount < 0 ? 0 : (size_t)c->scount;
    args.scounts = c->scounts;
    args.sdispls = c->sdispls;
    args.stype = c->stype;
    args.rbuf = c->rbuf == MPI_IN_PLACE ? NULL : c->rbuf;
    args.rcount = c->rcount < 0 ? 0 : (size_t)c->rcount;
    args.rcounts = c->rcounts;
    args.rdispls = c->rdispls;
    args.rtype = c->rtype;
    /* An intercommunicator's root may be MPI_ROOT or MPI_PROC_NULL. */
    args.root = gather_is_all(c) ? 0 : c->root;
    return crmpi_mpi_coll_call_mode(comm, c->kind, &args, request, mode, func_name);
}

/* Gather, Scatter and Allgather (root -1): one count on each side. */
static int gather_fixed(crmpi_coll_kind_t kind, const void *sbuf, MPI_Count scount,
                        MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                        int root, MPI_Comm comm, MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                        const char *func_name)
{
    gather_call_t c = {.kind = kind,
                       .sbuf = sbuf,
                       .scount = scount,
                       .stype = stype,
                       .rbuf = rbuf,
                       .rcount = rcount,
                       .rtype = rtype,
                       .root = root};

    return gather_body(&c, comm, request, mode, func_name);
}

/* Gatherv and Allgatherv (root -1): a count and a displacement per rank on the receive side. */
static int gather_vrecv(crmpi_coll_kind_t kind, const void *sbuf, MPI_Count scount,
                        MPI_Datatype stype, void *rbuf, crmpi_count_array_t rcounts,
                        crmpi_count_array_t rdispls, MPI_Datatype rtype, int root, MPI_Comm comm,
                        MPI_Request *request, crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    gather_call_t c = {.kind = kind,
                       .sbuf = sbuf,
                       .scount = scount,
                       .stype = stype,
                       .rbuf = rbuf,
                       .rcounts = rcounts,
                       .rdispls = rdispls,
                       .rtype = rtype,
                       .root = root};

    return gather_body(&c, comm, request, mode, func_name);
}

/* Scatterv: a count and a displacement per rank on the send side. */
static int gather_vsend(const void *sbuf, crmpi_count_array_t scounts, crmpi_count_array_t sdispls,
                        MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                        int root, MPI_Comm comm, MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                        const char *func_name)
{
    gather_call_t c = {.kind = CRMPI_COLL_SCATTERV,
                       .sbuf = sbuf,
                       .scounts = scounts,
                       .sdispls = sdispls,
                       .stype = stype,
                       .rbuf = rbuf,
                       .rcount = rcount,
                       .rtype = rtype,
                       .root = root};

    return gather_body(&c, comm, request, mode, func_name);
}

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather_fixed(CRMPI_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Gather");
}

int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    return gather_fixed(CRMPI_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Igather");
}

int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_fixed(CRMPI_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                        "MPI_Gather_init");
}

int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather_fixed(CRMPI_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Gather_c");
}

int PMPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request)
{
    return gather_fixed(CRMPI_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Igather_c");
}

int PMPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_fixed(CRMPI_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                        "MPI_Gather_init_c");
}

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    return gather_vrecv(CRMPI_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_int(recvcounts), crmpi_count_array_int(displs), recvtype,
                        root, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Gatherv");
}

int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    return gather_vrecv(CRMPI_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_int(recvcounts), crmpi_count_array_int(displs), recvtype,
                        root, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Igatherv");
}

int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_vrecv(CRMPI_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_int(recvcounts), crmpi_count_array_int(displs), recvtype,
                        root, comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Gatherv_init");
}

int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm)
{
    return gather_vrecv(CRMPI_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_count(recvcounts), crmpi_count_array_aint(displs),
                        recvtype, root, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Gatherv_c");
}

int PMPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                    int root, MPI_Comm comm, MPI_Request *request)
{
    return gather_vrecv(CRMPI_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_count(recvcounts), crmpi_count_array_aint(displs),
                        recvtype, root, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                        "MPI_Igatherv_c");
}

int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_vrecv(CRMPI_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_count(recvcounts), crmpi_count_array_aint(displs),
                        recvtype, root, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                        "MPI_Gatherv_init_c");
}

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather_fixed(CRMPI_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Scatter");
}

int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    return gather_fixed(CRMPI_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Iscatter");
}

int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_fixed(CRMPI_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                        "MPI_Scatter_init");
}

int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather_fixed(CRMPI_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Scatter_c");
}

int PMPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request *request)
{
    return gather_fixed(CRMPI_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                        "MPI_Iscatter_c");
}

int PMPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_fixed(CRMPI_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                        "MPI_Scatter_init_c");
}

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    return gather_vsend(sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(displs),
                        sendtype, recvbuf, recvcount, recvtype, root, comm, NULL,
                        CRMPI_MPI_COLL_BLOCKING, "MPI_Scatterv");
}

int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    return gather_vsend(sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(displs),
                        sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                        CRMPI_MPI_COLL_NONBLOCKING, "MPI_Iscatterv");
}

int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_vsend(sendbuf, crmpi_count_array_int(sendcounts), crmpi_count_array_int(displs),
                        sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                        CRMPI_MPI_COLL_PERSISTENT, "MPI_Scatterv_init");
}

int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather_vsend(sendbuf, crmpi_count_array_count(sendcounts),
                        crmpi_count_array_aint(displs), sendtype, recvbuf, recvcount, recvtype,
                        root, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Scatterv_c");
}

int PMPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return gather_vsend(sendbuf, crmpi_count_array_count(sendcounts),
                        crmpi_count_array_aint(displs), sendtype, recvbuf, recvcount, recvtype,
                        root, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Iscatterv_c");
}

int PMPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_vsend(sendbuf, crmpi_count_array_count(sendcounts),
                        crmpi_count_array_aint(displs), sendtype, recvbuf, recvcount, recvtype,
                        root, comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Scatterv_init_c");
}

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return gather_fixed(CRMPI_COLL_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Allgather");
}

int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return gather_fixed(CRMPI_COLL_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, -1, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Iallgather");
}

int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_fixed(CRMPI_COLL_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, -1, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                        "MPI_Allgather_init");
}

int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return gather_fixed(CRMPI_COLL_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Allgather_c");
}

int PMPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request)
{
    return gather_fixed(CRMPI_COLL_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, -1, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                        "MPI_Iallgather_c");
}

int PMPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_fixed(CRMPI_COLL_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, -1, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                        "MPI_Allgather_init_c");
}

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    return gather_vrecv(CRMPI_COLL_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_int(recvcounts), crmpi_count_array_int(displs), recvtype,
                        -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Allgatherv");
}

int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    return gather_vrecv(CRMPI_COLL_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_int(recvcounts), crmpi_count_array_int(displs), recvtype,
                        -1, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Iallgatherv");
}

int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_vrecv(CRMPI_COLL_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_int(recvcounts), crmpi_count_array_int(displs), recvtype,
                        -1, comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Allgatherv_init");
}

int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm)
{
    return gather_vrecv(CRMPI_COLL_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_count(recvcounts), crmpi_count_array_aint(displs),
                        recvtype, -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Allgatherv_c");
}

int PMPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return gather_vrecv(CRMPI_COLL_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_count(recvcounts), crmpi_count_array_aint(displs),
                        recvtype, -1, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                        "MPI_Iallgatherv_c");
}

int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                           MPI_Request *request)
{
    (void)info; /* no hints are used */
    return gather_vrecv(CRMPI_COLL_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        crmpi_count_array_count(recvcounts), crmpi_count_array_aint(displs),
                        recvtype, -1, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                        "MPI_Allgatherv_init_c");
}
