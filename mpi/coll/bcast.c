/*
 * bcast.c: MPI_Bcast, MPI_Ibcast and MPI_Bcast_init (MPI-3.1 sections 5.4 and 5.12.2,
 * MPI-4.0 section 6.13) and their large-count "_c" forms, on intra- and intercommunicators
 * (coll_mpi.h).
 */
#include "coll_mpi.h"

#pragma weak MPI_Bcast = PMPI_Bcast
#pragma weak MPI_Ibcast = PMPI_Ibcast
#pragma weak MPI_Bcast_init = PMPI_Bcast_init
#pragma weak MPI_Bcast_c = PMPI_Bcast_c
#pragma weak MPI_Ibcast_c = PMPI_Ibcast_c
#pragma weak MPI_Bcast_init_c = PMPI_Bcast_init_c

static int bcast_body(void *buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                      MPI_Request *request, crmpi_mpi_coll_mode_t mode, const char *func_name)
{
    crmpi_coll_args_t args = {0};
    const char *detail;
    int rc;

    crmpi_lock();
    crmpi_mpi_require_active(func_name);
    if (crmpi_mpi_state.param_check) {
        if (!crmpi_mpi_comm_is_valid(comm))
            COLL_FAIL(MPI_COMM_NULL, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
        /* On an intercommunicator, the root's group but the root takes no part. */
        if (!(comm->inter && root == MPI_PROC_NULL)) {
            rc = crmpi_mpi_coll_check_buffer(buffer, count, type, "the", &detail);
            if (rc != MPI_SUCCESS)
                COLL_FAIL(comm, rc, detail);
            if (buffer == MPI_IN_PLACE)
                COLL_FAIL(comm, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in MPI_Bcast");
        }
        if (!crmpi_mpi_coll_root_ok(comm, root))
            COLL_FAIL(comm, MPI_ERR_ROOT, crmpi_mpi_coll_root_detail(comm));
        if (mode != CRMPI_MPI_COLL_BLOCKING && request == NULL)
            COLL_FAIL(comm, MPI_ERR_ARG, "request is NULL");
    }
    args.rbuf = buffer;
    args.rcount = (size_t)count;
    args.rtype = type;
    args.root = root;
    return crmpi_mpi_coll_call_mode(comm, CRMPI_COLL_BCAST, &args, request, mode, func_name);
}

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast_body(buffer, count, datatype, root, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                      "MPI_Bcast");
}

int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    return bcast_body(buffer, count, datatype, root, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                      "MPI_Ibcast");
}

int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return bcast_body(buffer, count, datatype, root, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                      "MPI_Bcast_init");
}

int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast_body(buffer, count, datatype, root, comm, NULL, CRMPI_MPI_COLL_BLOCKING,
                      "MPI_Bcast_c");
}

int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    return bcast_body(buffer, count, datatype, root, comm, request, CRMPI_MPI_COLL_NONBLOCKING,
                      "MPI_Ibcast_c");
}

int PMPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return bcast_body(buffer, count, datatype, root, comm, request, CRMPI_MPI_COLL_PERSISTENT,
                      "MPI_Bcast_init_c");
}
