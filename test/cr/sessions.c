/*
 * sessions: a process that never calls MPI_Init (MPI-4.0 sessions): a session, a
 * communicator made from its mpi://WORLD process set and a second one from the same group
 * with another string tag, and on each an eager and a rendezvous message to every peer
 * in flight when the checkpoint lands (the receives of the rendezvous ones posted after
 * the go). Then everything completes and is checked, a reduction runs on both, and the
 * result line is gathered over the session's communicator before MPI_Session_finalize.
 */
#include "cr_common.h"

enum { MAX_PEERS = 64 };

/* Eager sends and receives to and from every peer on comm (tag), rendezvous sends. */
static void start_traffic(MPI_Comm comm, int tag, char *eager_out, char *eager_in, char *rndv_out,
                          MPI_Request *eager_reqs, MPI_Request *rndv_sends)
{
    for (int p = 0; p < cr_size; p++) {
        char *out = eager_out + (size_t)p * CR_EAGER_BYTES;

        cr_fill(out, CR_EAGER_BYTES, cr_rank, p, tag, 0);
        MPI_Irecv(eager_in + (size_t)p * CR_EAGER_BYTES, CR_EAGER_BYTES, MPI_BYTE, p, tag, comm,
                  &eager_reqs[p]);
        MPI_Isend(out, CR_EAGER_BYTES, MPI_BYTE, p, tag, comm, &eager_reqs[cr_size + p]);
        out = rndv_out + (size_t)p * CR_RNDV_BYTES;
        cr_fill(out, CR_RNDV_BYTES, cr_rank, p, tag + 1, 0);
        MPI_Isend(out, CR_RNDV_BYTES, MPI_BYTE, p, tag + 1, comm, &rndv_sends[p]);
    }
}

static void finish_traffic(MPI_Comm comm, int tag, char *eager_in, MPI_Request *eager_reqs,
                           MPI_Request *rndv_sends)
{
    char *rndv_in = malloc(CR_RNDV_BYTES);

    MPI_Waitall(2 * cr_size, eager_reqs, MPI_STATUSES_IGNORE);
    for (int p = 0; p < cr_size; p++)
        cr_check(eager_in + (size_t)p * CR_EAGER_BYTES, CR_EAGER_BYTES, p, cr_rank, tag, 0,
                 "eager message");
    for (int p = 0; p < cr_size; p++) {
        MPI_Recv(rndv_in, CR_RNDV_BYTES, MPI_BYTE, p, tag + 1, comm, MPI_STATUS_IGNORE);
        cr_check(rndv_in, CR_RNDV_BYTES, p, cr_rank, tag + 1, 0, "rendezvous message");
    }
    MPI_Waitall(cr_size, rndv_sends, MPI_STATUSES_IGNORE);
    free(rndv_in);
}

int main(void)
{
    MPI_Session session;
    MPI_Group group;
    MPI_Comm comms[2];
    static const char *const tags[2] = {"org.crmpi.cr.sessions.a", "org.crmpi.cr.sessions.b"};
    MPI_Request eager_reqs[2][2 * MAX_PEERS], rndv_sends[2][MAX_PEERS];
    char *eager_out[2], *eager_in[2], *rndv_out[2];

    if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session) != MPI_SUCCESS) {
        printf("cr sessions: FAIL (MPI_Session_init)\n");
        return 1;
    }
    MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
    for (int c = 0; c < 2; c++)
        MPI_Comm_create_from_group(group, tags[c], MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &comms[c]);
    MPI_Group_free(&group);
    MPI_Comm_rank(comms[0], &cr_rank);
    MPI_Comm_size(comms[0], &cr_size);
    cr_fault_setup();
    if (cr_size > MAX_PEERS) {
        printf("cr sessions: FAIL (more than %d ranks)\n", MAX_PEERS);
        return 1;
    }
    for (int c = 0; c < 2; c++) {
        eager_out[c] = malloc((size_t)cr_size * CR_EAGER_BYTES);
        eager_in[c] = malloc((size_t)cr_size * CR_EAGER_BYTES);
        rndv_out[c] = malloc((size_t)cr_size * CR_RNDV_BYTES);
        start_traffic(comms[c], 10 * (c + 1), eager_out[c], eager_in[c], rndv_out[c], eager_reqs[c],
                      rndv_sends[c]);
    }
    cr_ready();
    cr_wait_go();
    for (int c = 0; c < 2; c++)
        finish_traffic(comms[c], 10 * (c + 1), eager_in[c], eager_reqs[c], rndv_sends[c]);
    for (int c = 0; c < 2; c++) {
        int sum = 0;

        MPI_Allreduce(&cr_rank, &sum, 1, MPI_INT, MPI_SUM, comms[c]);
        if (sum != cr_size * (cr_size - 1) / 2)
            cr_fail("allreduce on communicator %d gave %d", c, sum);
        cr_sum_bytes(&sum, sizeof(sum));
    }

    /* cr_finish's gathering, over the session's communicator. */
    uint64_t mine[2] = {(uint64_t)cr_errors, cr_sum};
    int status = cr_errors ? 1 : 0;
    if (cr_rank == 0) {
        uint64_t total = cr_sum, errors = (uint64_t)cr_errors;

        for (int peer = 1; peer < cr_size; peer++) {
            uint64_t theirs[2];

            MPI_Recv(theirs, 2, MPI_UINT64_T, peer, 999999, comms[0], MPI_STATUS_IGNORE);
            errors += theirs[0];
            total = (total ^ theirs[1]) * 1099511628211ull;
        }
        if (errors)
            printf("cr sessions np=%d: FAIL (%llu errors)\n", cr_size, (unsigned long long)errors);
        else
            printf("cr sessions np=%d checksum=%016llx: ok\n", cr_size, (unsigned long long)total);
        fflush(stdout);
        status = errors ? 1 : 0;
    } else {
        MPI_Send(mine, 2, MPI_UINT64_T, 0, 999999, comms[0]);
    }
    for (int c = 0; c < 2; c++)
        MPI_Comm_free(&comms[c]);
    MPI_Session_finalize(&session);
    return status;
}
