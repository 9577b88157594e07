/*
 * bcast.c: MPI_Bcast and MPI_Ibcast (MPI-3.1 sections 5.4 and 5.12.2), on intra- and
 * intercommunicators (coll_mpi.h).
 */
#include "coll_mpi.h"

#pragma weak MPI_Bcast = PMPI_Bcast
#pragma weak MPI_Ibcast = PMPI_Ibcast

static int bcast_body(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                      MPI_Request *request, bool immediate, const char *func_name)
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
        if (immediate && request == NULL)
            COLL_FAIL(comm, MPI_ERR_ARG, "request is NULL");
    }
    args.rbuf = buffer;
    args.rcount = (size_t)count;
    args.rtype = type;
    args.root = root;
    return crmpi_mpi_coll_call(comm, CRMPI_COLL_BCAST, &args, request, func_name);
}

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast_body(buffer, count, datatype, root, comm, NULL, false, "MPI_Bcast");
}

int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    return bcast_body(buffer, count, datatype, root, comm, request, true, "MPI_Ibcast");
}
