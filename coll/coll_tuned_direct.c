/*
 * coll_tuned_direct.c: the tuned component's fast paths for small blocking collectives
 * (coll.h, crmpi_coll_direct_fn_t): the same algorithms as their schedules (dissemination
 * barrier, binomial bcast, recursive-doubling allreduce, linear alltoall), run at once with
 * blocking PML calls, no allocation. Used only when the algorithm is the one decided or forced. The
 * linear alltoall is here too: its messages all start at once, as in its schedule.
 */
#include "config.h"

#include <string.h>

#include "coll_sched.h"
#include "crmpi_status.h"

/* Largest allreduce done here: its partner's vector sits on the stack. */
#define DIRECT_ALLREDUCE_MAX 2048

/* Finish a receive: its status's error (MPI_ERR_TRUNCATE...) as a positive class. */
static int direct_recv(void *buf, size_t count, MPI_Datatype type, int peer, int tag,
                       crmpi_coll_comm_t *comm)
{
    MPI_Status status;
    int rc = crmpi_pml_recv(buf, count, type, peer, tag, comm->pml, &status);

    if (rc != CRMPI_OK)
        return rc;
    return status.MPI_ERROR == MPI_SUCCESS ? CRMPI_OK : status.MPI_ERROR;
}

/* Send to `to` while receiving from `from`: neither waits for the other. */
static int direct_sendrecv(const void *sbuf, void *rbuf, size_t count, MPI_Datatype type, int to,
                           int from, int tag, crmpi_coll_comm_t *comm)
{
    crmpi_request_t *req;
    int rc = crmpi_pml_isend(sbuf, count, type, to, tag, CRMPI_PML_SEND_STANDARD, comm->pml, &req);

    if (rc != CRMPI_OK)
        return rc;
    rc = direct_recv(rbuf, count, type, from, tag, comm);
    crmpi_pml_wait(req);
    crmpi_pml_request_finish(req, NULL);
    return rc;
}

int coll_tuned_direct_barrier(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, int tag)
{
    int n = comm->size, me = comm->rank, rc;
    int64_t alg = coll_tuned_params.forced[CRMPI_COLL_BARRIER];

    (void)a;
    if (alg != 0 && alg != 2)
        return CRMPI_ERR_NOT_SUPPORTED;
    for (int dist = 1; dist < n; dist *= 2) {
        rc = direct_sendrecv(NULL, NULL, 0, MPI_BYTE, (me + dist) % n, (me - dist + n) % n, tag,
                             comm);
        if (rc != CRMPI_OK)
            return rc;
    }
    return CRMPI_OK;
}

int coll_tuned_direct_bcast(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, int tag)
{
    int n = comm->size, vrank = (comm->rank - a->root + n) % n, mask = 1, rc = CRMPI_OK;
    crmpi_request_t *reqs[32];
    int num_reqs = 0;

    if (coll_tuned_bcast_decide(a, comm) != 2)
        return CRMPI_ERR_NOT_SUPPORTED;
    while (mask < n) {
        if (vrank & mask) {
            rc = direct_recv(a->rbuf, a->rcount, a->rtype, (vrank - mask + a->root) % n, tag, comm);
            if (rc != CRMPI_OK)
                return rc;
            break;
        }
        mask *= 2;
    }
    for (mask /= 2; mask > 0; mask /= 2) {
        if (vrank + mask >= n)
            continue;
        rc = crmpi_pml_isend(a->rbuf, a->rcount, a->rtype, (vrank + mask + a->root) % n, tag,
                             CRMPI_PML_SEND_STANDARD, comm->pml, &reqs[num_reqs]);
        if (rc != CRMPI_OK)
            break;
        num_reqs++;
    }
    for (int i = 0; i < num_reqs; i++) {
        crmpi_pml_wait(reqs[i]);
        crmpi_pml_request_finish(reqs[i], NULL);
    }
    return rc;
}

/* Recursive doubling with the non-power-of-two fold, for small vectors of a predefined
 * type and op (commutative: the partners' order does not matter, and a + b == b + a
 * exactly, so every rank ends with the same bits). */
int coll_tuned_direct_allreduce(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, int tag)
{
    _Alignas(64) char tmp[DIRECT_ALLREDUCE_MAX];
    int n = comm->size, me = comm->rank, p2 = 1, rem, vrank, rc;
    size_t bytes = a->rcount * a->rtype->size;
    int64_t alg = coll_tuned_params.forced[CRMPI_COLL_ALLREDUCE];

    if ((alg != 0 && alg != 2) || a->op->kind == CRMPI_COLL_OP_USER || !a->rtype->predefined ||
        !a->rtype->contiguous || a->rtype->true_lb != 0 || bytes > DIRECT_ALLREDUCE_MAX ||
        bytes == 0 || !crmpi_coll_op_defined(a->op, a->rtype))
        return CRMPI_ERR_NOT_SUPPORTED;
    if (!a->in_place)
        memcpy(a->rbuf, a->sbuf, bytes);
    while (p2 * 2 <= n)
        p2 *= 2;
    rem = n - p2;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            rc = crmpi_pml_send(a->rbuf, a->rcount, a->rtype, me + 1, tag, CRMPI_PML_SEND_STANDARD,
                                comm->pml);
            if (rc != CRMPI_OK)
                return rc;
            return direct_recv(a->rbuf, a->rcount, a->rtype, me + 1, tag, comm);
        }
        rc = direct_recv(tmp, a->rcount, a->rtype, me - 1, tag, comm);
        if (rc != CRMPI_OK)
            return rc;
        crmpi_coll_op_reduce(a->op, tmp, a->rbuf, a->rcount, a->rtype);
        vrank = me / 2;
    } else {
        vrank = me - rem;
    }
    for (int mask = 1; mask < p2; mask *= 2) {
        int vpeer = vrank ^ mask;
        int peer = vpeer < rem ? 2 * vpeer + 1 : vpeer + rem;

        rc = direct_sendrecv(a->rbuf, tmp, a->rcount, a->rtype, peer, peer, tag, comm);
        if (rc != CRMPI_OK)
            return rc;
        crmpi_coll_op_reduce(a->op, tmp, a->rbuf, a->rcount, a->rtype);
    }
    if (me < 2 * rem)
        return crmpi_pml_send(a->rbuf, a->rcount, a->rtype, me - 1, tag, CRMPI_PML_SEND_STANDARD,
                              comm->pml);
    return CRMPI_OK;
}

/* Alltoall, linear, every message posted at once: the small-block case of the decision. */
int coll_tuned_direct_alltoall(const crmpi_coll_args_t *a, crmpi_coll_comm_t *comm, int tag)
{
    enum { MAX_PEERS = 64 };
    crmpi_request_t *reqs[2 * MAX_PEERS];
    int n = comm->size, me = comm->rank, num_reqs = 0, rc = CRMPI_OK, error = CRMPI_OK;

    if (a->in_place || n > MAX_PEERS || coll_tuned_alltoall_decide(a, comm) != 1)
        return CRMPI_ERR_NOT_SUPPORTED;
    for (int k = 1; k < n && rc == CRMPI_OK; k++) {
        int from = (me - k + n) % n, to = (me + k) % n;

        rc = crmpi_pml_irecv((char *)a->rbuf +
                                 (MPI_Aint)from * (MPI_Aint)a->rcount * a->rtype->extent,
                             a->rcount, a->rtype, from, tag, comm->pml, &reqs[num_reqs]);
        if (rc != CRMPI_OK)
            break;
        num_reqs++;
        rc = crmpi_pml_isend(
            (const char *)a->sbuf + (MPI_Aint)to * (MPI_Aint)a->scount * a->stype->extent,
            a->scount, a->stype, to, tag, CRMPI_PML_SEND_STANDARD, comm->pml, &reqs[num_reqs]);
        if (rc == CRMPI_OK)
            num_reqs++;
    }
    crmpi_coll_copy((const char *)a->sbuf + (MPI_Aint)me * (MPI_Aint)a->scount * a->stype->extent,
                    a->scount, a->stype,
                    (char *)a->rbuf + (MPI_Aint)me * (MPI_Aint)a->rcount * a->rtype->extent,
                    a->rcount, a->rtype);
    for (int i = 0; i < num_reqs; i++) {
        MPI_Status status;

        crmpi_pml_wait(reqs[i]);
        if (crmpi_pml_request_finish(reqs[i], &status) != MPI_SUCCESS && error == CRMPI_OK)
            error = status.MPI_ERROR;
    }
    return rc != CRMPI_OK ? rc : error;
}
