/*
 * btl_auth.c: per-fragment tokens of the ofi and ucx BTLs (btl_auth.h). nettle's HMAC, as
 * in the tcp BTL's handshake.
 */
#include "config.h"

#include "btl_auth.h"

#include <errno.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"
#include "random.h"

/* "crmpi btl ofi": the label of the key derivation and of every token. */
static void crmpi_btl_auth_label(const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "crmpi btl %s", name);
}

int crmpi_btl_auth_derive(const char *name, const crmpi_rte_job_info_t *job, uint8_t *key_out,
                          uint8_t *nonce_out, size_t nonce_len)
{
    struct hmac_sha256_ctx ctx;
    char label[64];

    if (job->job_key_len != CRMPI_RTE_KEY_LEN) {
        crmpi_log_error("btl:%s: rank %u: the job has no key to authenticate its peers with "
                        "(was it started by crmpi's mpirun?)",
                        name, job->rank);
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    if (crmpi_random_bytes(nonce_out, nonce_len) != CRMPI_OK) {
        crmpi_log_error("btl:%s: rank %u: getrandom: %s", name, job->rank, strerror(errno));
        return CRMPI_ERR_IO;
    }
    crmpi_btl_auth_label(name, label, sizeof(label));
    hmac_sha256_set_key(&ctx, job->job_key_len, job->job_key);
    hmac_sha256_update(&ctx, strlen(label), (const uint8_t *)label);
    hmac_sha256_digest(&ctx, CRMPI_BTL_AUTH_KEY_LEN, key_out);
    return CRMPI_OK;
}

int crmpi_btl_auth_init(crmpi_btl_auth_t *auth, const char *name, const crmpi_rte_job_info_t *job)
{
    int rc;

    memset(auth, 0, sizeof(*auth));
    rc = crmpi_btl_auth_derive(name, job, auth->key, auth->nonce, sizeof(auth->nonce));
    if (rc != CRMPI_OK)
        return rc;
    auth->refusal_said = calloc(job->size, sizeof(auth->refusal_said[0]));
    if (!auth->refusal_said) {
        crmpi_log_error("btl:%s: rank %u: out of memory for a job of %u ranks", name, job->rank,
                        job->size);
        explicit_bzero(auth->key, sizeof(auth->key));
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    auth->name = name;
    auth->jobid = job->jobid;
    auth->my_rank = job->rank;
    auth->job_size = job->size;
    return CRMPI_OK;
}

void crmpi_btl_auth_fini(crmpi_btl_auth_t *auth)
{
    free(auth->refusal_said);
    auth->refusal_said = NULL;
    /* A key left in freed memory would be in the next checkpoint's image. */
    explicit_bzero(auth->key, sizeof(auth->key));
}

void crmpi_btl_auth_token(const crmpi_btl_auth_t *auth, uint32_t sender_rank,
                          uint32_t receiver_rank, const uint8_t *receiver_nonce, uint8_t *token_out)
{
    struct hmac_sha256_ctx ctx;
    char label[64];

    /* Host byte order, as every field crmpi sends: a job's ranks share one architecture. */
    crmpi_btl_auth_label(auth->name, label, sizeof(label));
    hmac_sha256_set_key(&ctx, sizeof(auth->key), auth->key);
    hmac_sha256_update(&ctx, strlen(label), (const uint8_t *)label);
    hmac_sha256_update(&ctx, sizeof(sender_rank), (const uint8_t *)&sender_rank);
    hmac_sha256_update(&ctx, sizeof(receiver_rank), (const uint8_t *)&receiver_rank);
    hmac_sha256_update(&ctx, sizeof(auth->jobid), (const uint8_t *)&auth->jobid);
    hmac_sha256_update(&ctx, CRMPI_BTL_AUTH_NONCE_LEN, receiver_nonce);
    hmac_sha256_digest(&ctx, CRMPI_BTL_AUTH_TOKEN_LEN, token_out);
}

bool crmpi_btl_auth_match(const uint8_t *token, const uint8_t *expected)
{
    return nettle_memeql_sec(token, expected, CRMPI_BTL_AUTH_TOKEN_LEN) != 0;
}

void crmpi_btl_auth_refuse(crmpi_btl_auth_t *auth, uint32_t claimed_rank, const char *why)
{
    auth->num_refused++;
    if (claimed_rank < auth->job_size) {
        if (auth->refusal_said[claimed_rank])
            return;
        auth->refusal_said[claimed_rank] = true;
        crmpi_log_error("btl:%s: rank %u: refused a fragment claiming to come from rank %u: "
                        "%s; dropped (later ones refused for rank %u are counted, not logged)",
                        auth->name, auth->my_rank, claimed_rank, why, claimed_rank);
        return;
    }
    if (auth->stranger_said)
        return;
    auth->stranger_said = true;
    if (claimed_rank == CRMPI_BTL_AUTH_NO_RANK)
        crmpi_log_error("btl:%s: rank %u: refused a message that names no sender: %s; dropped "
                        "(later ones refused for senders outside the job's %u ranks are "
                        "counted, not logged)",
                        auth->name, auth->my_rank, why, auth->job_size);
    else
        crmpi_log_error("btl:%s: rank %u: refused a fragment claiming to come from rank %u: "
                        "%s; dropped (later ones refused for senders outside the job's %u "
                        "ranks are counted, not logged)",
                        auth->name, auth->my_rank, claimed_rank, why, auth->job_size);
}
