/*
 * reduce.c: the reductions: MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block,
 * MPI_Reduce_scatter, MPI_Scan, MPI_Exscan (MPI-3.1 sections 5.9 to 5.11), their
 * non-blocking (5.12.7 to 5.12.10) and persistent (MPI-4.0 section 6.13) forms, and the
 * large-count "_c" form of each; all but the scans on intercommunicators too.
 */
#include "coll_mpi.h"

#pragma weak MPI_Reduce = PMPI_Reduce
#pragma weak MPI_Ireduce = PMPI_Ireduce
#pragma weak MPI_Reduce_init = PMPI_Reduce_init
#pragma weak MPI_Reduce_c = PMPI_Reduce_c
#pragma weak MPI_Ireduce_c = PMPI_Ireduce_c
#pragma weak MPI_Reduce_init_c = PMPI_Reduce_init_c
#pragma weak MPI_Allreduce = PMPI_Allreduce
#pragma weak MPI_Iallreduce = PMPI_Iallreduce
#pragma weak MPI_Allreduce_init = PMPI_Allreduce_init
#pragma weak MPI_Allreduce_c = PMPI_Allreduce_c
#pragma weak MPI_Iallreduce_c = PMPI_Iallreduce_c
#pragma weak MPI_Allreduce_init_c = PMPI_Allreduce_init_c
#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
#pragma weak MPI_Ireduce_scatter = PMPI_Ireduce_scatter
#pragma weak MPI_Reduce_scatter_init = PMPI_Reduce_scatter_init
#pragma weak MPI_Reduce_scatter_c = PMPI_Reduce_scatter_c
#pragma weak MPI_Ireduce_scatter_c = PMPI_Ireduce_scatter_c
#pragma weak MPI_Reduce_scatter_init_c = PMPI_Reduce_scatter_init_c
#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
#pragma weak MPI_Ireduce_scatter_block = PMPI_Ireduce_scatter_block
#pragma weak MPI_Reduce_scatter_block_init = PMPI_Reduce_scatter_block_init
#pragma weak MPI_Reduce_scatter_block_c = PMPI_Reduce_scatter_block_c
#pragma weak MPI_Ireduce_scatter_block_c = PMPI_Ireduce_scatter_block_c
#pragma weak MPI_Reduce_scatter_block_init_c = PMPI_Reduce_scatter_block_init_c
#pragma weak MPI_Scan = PMPI_Scan
#pragma weak MPI_Iscan = PMPI_Iscan
#pragma weak MPI_Scan_init = PMPI_Scan_init
#pragma weak MPI_Scan_c = PMPI_Scan_c
#pragma weak MPI_Iscan_c = PMPI_Iscan_c
#pragma weak MPI_Scan_init_c = PMPI_Scan_init_c
#pragma weak MPI_Exscan = PMPI_Exscan
#pragma weak MPI_Iexscan = PMPI_Iexscan
#pragma weak MPI_Exscan_init = PMPI_Exscan_init
#pragma weak MPI_Exscan_c = PMPI_Exscan_c
#pragma weak MPI_Iexscan_c = PMPI_Iexscan_c
#pragma weak MPI_Exscan_init_c = PMPI_Exscan_init_c

/* The arguments of one reduction call. */
typedef struct reduce_call {
    crmpi_coll_kind_t kind;      /* which reduction */
    const void *sbuf;            /* sendbuf (may be MPI_IN_PLACE) */
    void *rbuf;                  /* recvbuf */
    MPI_Count count;             /* count, or recvcount of Reduce_scatter_block */
    crmpi_count_array_t rcounts; /* Reduce_scatter's recvcounts */
    MPI_Datatype type;           /* datatype */
    MPI_Op op;                   /* op */
    int root;                    /* Reduce's root; -1 for the others */
} reduce_call_t;

/* The checks on an intracommunicator; `count` is the number of elements sent. */
static int reduce_check_intra(const reduce_call_t *c, MPI_Comm comm, MPI_Count count,
                              const char **detail_out)
{
    bool in_place = c->sbuf == MPI_IN_PLACE;
    int rc;

    if (c->kind == CRMPI_COLL_REDUCE && !crmpi_mpi_coll_root_ok(comm, c->root)) {
        *detail_out = crmpi_mpi_coll_root_detail(comm);
        return MPI_ERR_ROOT;
    }
    rc = crmpi_mpi_coll_check_buffer(in_place ? c->rbuf : c->sbuf, count, c->type, "the send",
                                     detail_out);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->rbuf == MPI_IN_PLACE) {
        *detail_out = "recvbuf cannot be MPI_IN_PLACE";
        return MPI_ERR_BUFFER;
    }
    if (in_place && c->kind == CRMPI_COLL_REDUCE && comm->rank != c->root) {
        *detail_out = "MPI_IN_PLACE is for the root's sendbuf only";
        return MPI_ERR_BUFFER;
    }
    if (!in_place && count > 0 && c->sbuf == c->rbuf &&
        (c->kind != CRMPI_COLL_REDUCE || comm->rank == c->root)) {
        *detail_out = "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)";
        return MPI_ERR_BUFFER;
    }
    return crmpi_mpi_coll_check_op(c->op, c->type, detail_out);
}

/*
 * The checks on an intercommunicator (MPI-3.1 section 5.2.3): a Reduce root's group
 * passes MPI_ROOT at the root, which receives, and MPI_PROC_NULL elsewhere (nothing is
 * significant there); the other group, and both groups of the other reductions, send
 * `count` elements; the latter also receive (Reduce_scatter: their block). No MPI_IN_PLACE.
 */
static int reduce_check_inter(const reduce_call_t *c, MPI_Comm comm, MPI_Count count,
                              const char **detail_out)
{
    bool is_reduce = c->kind == CRMPI_COLL_REDUCE;
    bool sends = !is_reduce || (c->root != MPI_ROOT && c->root != MPI_PROC_NULL);
    bool receives = !is_reduce || c->root == MPI_ROOT;
    MPI_Count rcount = c->count;
    int rc;

    if (is_reduce && !crmpi_mpi_coll_root_ok(comm, c->root)) {
        *detail_out = crmpi_mpi_coll_root_detail(comm);
        return MPI_ERR_ROOT;
    }
    if (!sends && !receives)
        return MPI_SUCCESS;
    if ((sends && c->sbuf == MPI_IN_PLACE) || (receives && c->rbuf == MPI_IN_PLACE)) {
        *detail_out = CRMPI_MPI_COLL_INTER_IN_PLACE;
        return MPI_ERR_BUFFER;
    }
    if (sends) {
        rc = crmpi_mpi_coll_check_buffer(c->sbuf, count, c->type, "the send", detail_out);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (c->kind == CRMPI_COLL_REDUCE_SCATTER)
        rcount = crmpi_count_array_at(c->rcounts, comm->rank);
    if (receives) {
        rc = crmpi_mpi_coll_check_buffer(c->rbuf, rcount, c->type, "the receive", detail_out);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (sends && receives && count > 0 && c->sbuf == c->rbuf) {
        *detail_out = "sendbuf and recvbuf are the same buffer";
        return MPI_ERR_BUFFER;
    }
    return crmpi_mpi_coll_check_op(c->op, c->type, detail_out);
}

static int reduce_body(const reduce_call_t *c, MPI_Comm comm, MPI_Request *request,
                       crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    crmpi_coll_args_t args = {0};
    bool in_place = c->sbuf == MPI_IN_PLACE;
    const char *detail;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        MPI_Count count = c->count;

        if (!crmpi_mpi_comm_is_valid(comm))
            COLL_FAIL(MPI_COMM_NULL, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
        if (c->kind == CRMPI_COLL_REDUCE_SCATTER) {
            if (c->rcounts.base == NULL)
                COLL_FAIL(comm, MPI_ERR_ARG, "recvcounts is NULL");
            count = 0;
            for (int r = 0; r < comm->size; r++) {
                if (crmpi_count_array_at(c->rcounts, r) < 0)
                    COLL_FAIL(comm, MPI_ERR_COUNT, "a receive count is negative");
                count += crmpi_count_array_at(c->rcounts, r);
            }
        } else if (c->kind == CRMPI_COLL_REDUCE_SCATTER_BLOCK && c->count >= 0) {
            count = c->count * comm->size;
        }
        if (comm->inter) {
            rc = reduce_check_inter(c, comm, count, &detail);
            if (rc != MPI_SUCCESS)
                COLL_FAIL(comm, rc, detail);
        } else {
            rc = reduce_check_intra(c, comm, count, &detail);
            if (rc != MPI_SUCCESS)
                COLL_FAIL(comm, rc, detail);
        }
        if (mode != CRMPI_MPI_COLL_BLOCKING && request == NULL)
            COLL_FAIL(comm, MPI_ERR_ARG, "request is NULL");
    }
    if (comm->inter && (c->kind == CRMPI_COLL_SCAN || c->kind == CRMPI_COLL_EXSCAN))
        COLL_FAIL(comm, MPI_ERR_COMM,
                  "comm is an intercommunicator, on which scans are not defined (MPI-3.1 "
                  "section 5.11)");
    args.sbuf = in_place ? NULL : c->sbuf;
    args.rbuf = c->rbuf;
    args.in_place = in_place;
    args.rcount = (size_t)c->count;
    args.rcounts = c->rcounts;
    args.rtype = c->type;
    args.stype = c->type;
    args.op = &c->op->coll;
    /* An intercommunicator's root may be MPI_ROOT or MPI_PROC_NULL (-1: no root). */
    args.root = c->root == -1 ? 0 : c->root;
    return crmpi_mpi_coll_call_mode(comm, c->kind, &args, request, mode, func_name);
}

/* Every reduction: Reduce_scatter's counts in rcounts, the others' in count. */
static int reduce_run(crmpi_coll_kind_t kind, const void *sbuf, void *rbuf, MPI_Count count,
                      crmpi_count_array_t rcounts, MPI_Datatype type, MPI_Op op, int root,
                      MPI_Comm comm, MPI_Request *request, crmpi_mpi_coll_mode_t mode,
                      const char *func_name)
{
    reduce_call_t c = {kind, sbuf, rbuf, count, rcounts, type, op, root};

    return reduce_body(&c, comm, request, mode, func_name);
}

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_REDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, root, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Reduce");
}

int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_REDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, root, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ireduce");
}

int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_REDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, root, comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Reduce_init");
}

int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_REDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, root, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Reduce_c");
}

int PMPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_REDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, root, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ireduce_c");
}

int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_REDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, root, comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Reduce_init_c");
}

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_ALLREDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE,
                      datatype, op, -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Allreduce");
}

int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_ALLREDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE,
                      datatype, op, -1, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                      "MPI_Iallreduce");
}

int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_ALLREDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE,
                      datatype, op, -1, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                      "MPI_Allreduce_init");
}

int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_ALLREDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE,
                      datatype, op, -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Allreduce_c");
}

int PMPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_ALLREDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE,
                      datatype, op, -1, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                      "MPI_Iallreduce_c");
}

int PMPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_ALLREDUCE, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE,
                      datatype, op, -1, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                      "MPI_Allreduce_init_c");
}

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0,
                      crmpi_count_array_int(recvcounts), datatype, op, -1, comm, NULL,
                      CRMPI_MPI_COLL_BLOCKING, "MPI_Reduce_scatter");
}

int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0,
                      crmpi_count_array_int(recvcounts), datatype, op, -1, comm, request,
                      CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ireduce_scatter");
}

int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0,
                      crmpi_count_array_int(recvcounts), datatype, op, -1, comm, request,
                      CRMPI_MPI_COLL_PERSISTENT, "MPI_Reduce_scatter_init");
}

int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0,
                      crmpi_count_array_count(recvcounts), datatype, op, -1, comm, NULL,
                      CRMPI_MPI_COLL_BLOCKING, "MPI_Reduce_scatter_c");
}

int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0,
                      crmpi_count_array_count(recvcounts), datatype, op, -1, comm, request,
                      CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ireduce_scatter_c");
}

int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0,
                      crmpi_count_array_count(recvcounts), datatype, op, -1, comm, request,
                      CRMPI_MPI_COLL_PERSISTENT, "MPI_Reduce_scatter_init_c");
}

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                      CRMPI_COUNT_ARRAY_NONE, datatype, op, -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                      "MPI_Reduce_scatter_block");
}

int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                      CRMPI_COUNT_ARRAY_NONE, datatype, op, -1, comm, request,
                      CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ireduce_scatter_block");
}

int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                      CRMPI_COUNT_ARRAY_NONE, datatype, op, -1, comm, request,
                      CRMPI_MPI_COLL_PERSISTENT, "MPI_Reduce_scatter_block_init");
}

int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                      CRMPI_COUNT_ARRAY_NONE, datatype, op, -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                      "MPI_Reduce_scatter_block_c");
}

int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                      CRMPI_COUNT_ARRAY_NONE, datatype, op, -1, comm, request,
                      CRMPI_MPI_COLL_NONBLOCKING, "MPI_Ireduce_scatter_block_c");
}

int PMPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount,
                      CRMPI_COUNT_ARRAY_NONE, datatype, op, -1, comm, request,
                      CRMPI_MPI_COLL_PERSISTENT, "MPI_Reduce_scatter_block_init_c");
}

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_SCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Scan");
}

int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_SCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Iscan");
}

int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_SCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Scan_init");
}

int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_SCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Scan_c");
}

int PMPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_SCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Iscan_c");
}

int PMPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_SCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Scan_init_c");
}

int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_EXSCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Exscan");
}

int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_EXSCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Iexscan");
}

int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_EXSCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Exscan_init");
}

int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    return reduce_run(CRMPI_COLL_EXSCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, NULL, CRMPI_MPI_COLL_BLOCKING, "MPI_Exscan_c");
}

int PMPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_run(CRMPI_COLL_EXSCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, request, CRMPI_MPI_COLL_NONBLOCKING, "MPI_Iexscan_c");
}

int PMPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return reduce_run(CRMPI_COLL_EXSCAN, sendbuf, recvbuf, count, CRMPI_COUNT_ARRAY_NONE, datatype,
                      op, -1, comm, request, CRMPI_MPI_COLL_PERSISTENT, "MPI_Exscan_init_c");
}
