/*
 * snapc_local.c: the local coordinator (snapc.h), in crmpi-agent: it passes the protocol
 * between mpirun and its rank, and runs the dump itself.
 */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include "crmpi_status.h"
#include "log.h"
#include "snapc_local.h"

static int snapc_local_send(int fd, crmpi_ctl_type_t type, uint32_t seq, int status,
                            const crmpi_buf_t *payload)
{
    return crmpi_ctl_send(fd, type, seq, status, payload ? payload->data : NULL,
                          payload ? payload->len : 0);
}

/* Answer mpirun for the rank: the checkpoint cannot go on here. */
static void snapc_local_refuse(crmpi_snapc_local_t *local, crmpi_ctl_type_t type, uint32_t seq,
                               int status, const char *why)
{
    crmpi_buf_t buf;

    crmpi_buf_init(&buf);
    crmpi_buf_put_str(&buf, why);
    snapc_local_send(local->hnp_fd, type, seq, status, &buf);
    crmpi_buf_free(&buf);
}

static uint64_t snapc_local_now_ns(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void snapc_local_dump(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg)
{
    crmpi_snapc_dump_result_t result = {0};
    crmpi_buf_t req, reply;
    const char *dir = NULL;
    uint32_t flags = 0;
    int rc;

    crmpi_buf_init_read(&req, msg->payload, msg->hdr.len);
    crmpi_buf_get_str(&req, &dir);
    crmpi_buf_get_u32(&req, &flags);
    if (crmpi_buf_get_done(&req) != CRMPI_OK) {
        snapc_local_refuse(local, CRMPI_CTL_CKPT_DUMPED, msg->hdr.seq, CRMPI_ERR_PROTO,
                           "malformed dump request");
        return;
    }
    if (!local->dump) {
        snapc_local_refuse(local, CRMPI_CTL_CKPT_DUMPED, msg->hdr.seq, CRMPI_ERR_NOT_SUPPORTED,
                           "this agent was built without a checkpointer (CRIU)");
        return;
    }
    uint64_t start = snapc_local_now_ns();
    rc = local->dump(local, dir, flags, &result);
    crmpi_buf_init(&reply);
    crmpi_buf_put_u64(&reply, result.image_bytes);
    crmpi_buf_put_u64(&reply, snapc_local_now_ns() - start);
    crmpi_buf_put_str(&reply, rc == CRMPI_OK ? "" : result.error);
    snapc_local_send(local->hnp_fd, CRMPI_CTL_CKPT_DUMPED, msg->hdr.seq, rc, &reply);
    crmpi_buf_free(&reply);
}

void crmpi_snapc_local_from_hnp(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg)
{
    switch (msg->hdr.type) {
    case CRMPI_CTL_CKPT_BEGIN:
        if (!local->rank_ready) {
            snapc_local_refuse(local, CRMPI_CTL_CKPT_BOOKMARKS, msg->hdr.seq,
                               CRMPI_ERR_NOT_SUPPORTED,
                               local->rank_stopped ? "it is in MPI_Finalize or has ended"
                                                   : "it has not finished MPI_Init");
            break;
        }
        local->seq = msg->hdr.seq;
        local->in_checkpoint = true;
        __attribute__((fallthrough)); /* the rank gets it as it is */
    case CRMPI_CTL_CKPT_EXPECT:
    case CRMPI_CTL_CKPT_SUSPEND:
    case CRMPI_CTL_CKPT_CONTINUE:
    case CRMPI_CTL_CKPT_ABORT:
        if (!local->in_checkpoint || msg->hdr.seq != local->seq)
            break; /* nothing of it reached the rank: nothing to undo there */
        if (crmpi_ctl_send(local->rank_fd, (crmpi_ctl_type_t)msg->hdr.type, msg->hdr.seq,
                           msg->hdr.status, msg->payload, msg->hdr.len) != CRMPI_OK)
            snapc_local_refuse(local, CRMPI_CTL_CKPT_ABORT, msg->hdr.seq, CRMPI_ERR_PEER_GONE,
                               "the rank is gone");
        break;
    case CRMPI_CTL_CKPT_DUMP: snapc_local_dump(local, msg); break;
    default:
        crmpi_log_warn("snapc: mpirun sent an unexpected %s", crmpi_ctl_type_name(msg->hdr.type));
        break;
    }
}

void crmpi_snapc_local_from_rank(crmpi_snapc_local_t *local, crmpi_ctl_msg_t *msg)
{
    if (msg->hdr.type == CRMPI_CTL_CKPT_CONTINUED || msg->hdr.type == CRMPI_CTL_CKPT_ABORT)
        local->in_checkpoint = false;
    if (crmpi_ctl_send(local->hnp_fd, (crmpi_ctl_type_t)msg->hdr.type, msg->hdr.seq,
                       msg->hdr.status, msg->payload, msg->hdr.len) != CRMPI_OK)
        crmpi_log_error("snapc: cannot pass the rank's %s to mpirun",
                        crmpi_ctl_type_name(msg->hdr.type));
}
