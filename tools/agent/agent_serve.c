/*
 * agent_serve.c: the rank's requests on its control socket (agent.h): job facts, modex,
 * fences and aborts, the span of its C/R thread, and the steps of a checkpoint, which go on
 * to the local coordinator (snapc_local.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "crmpi_status.h"
#include "log.h"

extern char **environ;

/* Without what belongs to the agent alone (PMIx's variables: the rank never talks to
 * PMIx; the way to mpirun and the job's key) and with the control socket's descriptor. */
char **agent_rank_env(void)
{
    size_t count = 0, n = 0;
    for (char **e = environ; *e; e++) {
        count++;
    }
    char **env = calloc(count + 2, sizeof(char *));
    if (!env) {
        return NULL;
    }
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "PMIX_", 5) == 0 || strncmp(*e, "PMI_", 4) == 0 ||
            strncmp(*e, "CRMPI_HNP_URI=", 14) == 0 || strncmp(*e, "CRMPI_CTL_FD=", 13) == 0 ||
            strncmp(*e, "CRMPI_JOB_KEY=", 14) == 0) {
            continue;
        }
        env[n++] = *e;
    }
    env[n++] = "CRMPI_CTL_FD=3";
    env[n] = NULL;
    return env;
}

int agent_reply(agent_state_t *st, uint32_t seq, int status, const crmpi_buf_t *payload)
{
    return crmpi_ctl_send(st->child.ctl_fd, CRMPI_CTL_REPLY, seq, status,
                          payload ? payload->data : NULL, payload ? payload->len : 0);
}

static int agent_forward_abort(agent_state_t *st, crmpi_buf_t *req)
{
    int32_t errcode;
    const char *message;
    crmpi_buf_t out;

    crmpi_buf_get_i32(req, &errcode);
    crmpi_buf_get_str(req, &message);
    if (crmpi_buf_get_done(req) != CRMPI_OK) {
        return CRMPI_ERR_PROTO;
    }
    crmpi_buf_init(&out);
    crmpi_buf_put_u32(&out, st->info.rank);
    crmpi_buf_put_i32(&out, errcode);
    crmpi_buf_put_str(&out, message);
    return agent_send_hnp(st, CRMPI_CTL_AGENT_ABORT, &out);
}

int agent_serve_rank(agent_state_t *st)
{
    crmpi_ctl_msg_t msg;
    crmpi_buf_t req, reply;
    int rc, status;

    rc = crmpi_ctl_recv(st->child.ctl_fd, &msg);
    if (rc != CRMPI_OK) {
        return CRMPI_ERR_PEER_GONE;
    }
    crmpi_buf_init_read(&req, msg.payload, msg.hdr.len);
    crmpi_buf_init(&reply);
    switch (msg.hdr.type) {
    case CRMPI_CTL_HELLO:
        crmpi_rte_job_info_pack(&st->info, &reply);
        status = reply.failed ? CRMPI_ERR_OUT_OF_RESOURCE : CRMPI_OK;
        break;
    case CRMPI_CTL_MODEX_PUT: status = agent_modex_put(&req); break;
    case CRMPI_CTL_FENCE:
        status = agent_fence_start(st, msg.hdr.seq, &req);
        if (status == CRMPI_OK) {
            crmpi_buf_free(&reply);
            crmpi_ctl_msg_free(&msg);
            return CRMPI_OK; /* the reply comes when the fence completes */
        }
        break;
    case CRMPI_CTL_MODEX_GET: status = agent_modex_get(st, &req, &reply); break;
    case CRMPI_CTL_ABORT: status = agent_forward_abort(st, &req); break;
    case CRMPI_CTL_FINALIZE: status = CRMPI_OK; break;
    case CRMPI_CTL_CR_START:
        st->snapc.rank_ready = !st->snapc.rank_stopped;
        status = CRMPI_OK;
        break;
    case CRMPI_CTL_CR_TRACK: {
        int uffd;

        /* No reply: the descriptor follows the message. */
        if (crmpi_ctl_recv_fd(st->child.ctl_fd, &uffd) == CRMPI_OK)
            crmpi_snapc_local_track(&st->snapc, uffd);
        else
            crmpi_log_warn("the rank's CR_TRACK came without its descriptor");
        crmpi_buf_free(&reply);
        crmpi_ctl_msg_free(&msg);
        return CRMPI_OK;
    }
    case CRMPI_CTL_CR_APP_CKPT:
        crmpi_snapc_local_app_request(&st->snapc, &msg); /* no reply: the checkpoint follows */
        crmpi_buf_free(&reply);
        crmpi_ctl_msg_free(&msg);
        return CRMPI_OK;
    case CRMPI_CTL_CR_STOP:
        st->snapc.rank_ready = false; /* checkpoints refused from now on */
        st->snapc.rank_stopped = true;
        status = CRMPI_OK;
        break;
    case CRMPI_CTL_CKPT_BOOKMARKS:
    case CRMPI_CTL_CKPT_DRAINED:
    case CRMPI_CTL_CKPT_READY:
    case CRMPI_CTL_CKPT_CONTINUED:
    case CRMPI_CTL_CKPT_ABORT:
        /* Not requests: the rank's steps of a checkpoint, for mpirun. */
        crmpi_snapc_local_from_rank(&st->snapc, &msg);
        crmpi_buf_free(&reply);
        crmpi_ctl_msg_free(&msg);
        return CRMPI_OK;
    case CRMPI_CTL_INIT_EXIT: {
        int32_t raw;
        if (crmpi_buf_get_i32(&req, &raw) == CRMPI_OK) {
            st->rank_status = raw;
            st->have_rank_status = 1;
        }
        crmpi_ctl_msg_free(&msg);
        return CRMPI_OK; /* no reply: the init is exiting */
    }
    default:
        crmpi_log_warn("the rank sent an unexpected %s", crmpi_ctl_type_name(msg.hdr.type));
        status = CRMPI_ERR_PROTO;
        break;
    }
    if (status != CRMPI_OK) {
        crmpi_buf_free(&reply);
    }
    rc = agent_reply(st, msg.hdr.seq, status, status == CRMPI_OK ? &reply : NULL);
    crmpi_buf_free(&reply);
    crmpi_ctl_msg_free(&msg);
    /* A reply the rank cannot receive means it died; the init reports that, and the
     * socket's end-of-file ends the loop. Nothing else to do here. */
    (void)rc;
    return CRMPI_OK;
}
