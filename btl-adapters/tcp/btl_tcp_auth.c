/*
 * btl_tcp_auth.c: who may open a connection to a tcp module (btl_tcp.h, "Who may connect").
 *
 * The module key is HMAC-SHA256(job key, "crmpi btl tcp"), so that a key recovered from
 * one transport says nothing of the job's others. A handshake's MAC is HMAC-SHA256(module
 * key, the handshake's bytes before `mac` || the receiver's listen nonce). nettle's HMAC is
 * used rather than code of our own; nettle already computes the snapshots' checksums.
 */
#include "config.h"

#include "btl_tcp.h"

#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btl_auth.h"
#include "crmpi_status.h"
#include "log.h"
#include "random.h"

_Static_assert(BTL_TCP_MAC_LEN == CRMPI_BTL_AUTH_KEY_LEN, "the module key is an HMAC-SHA256");

int btl_tcp_auth_init(btl_tcp_module_t *module, const crmpi_rte_job_info_t *job)
{
    return crmpi_btl_auth_derive("tcp", job, module->auth_key, module->listen_nonce,
                                 sizeof(module->listen_nonce));
}

static void btl_tcp_auth_mac(const uint8_t *key, const btl_tcp_handshake_t *hs,
                             const uint8_t *listen_nonce, uint8_t *mac_out)
{
    struct hmac_sha256_ctx ctx;

    hmac_sha256_set_key(&ctx, BTL_TCP_MAC_LEN, key);
    hmac_sha256_update(&ctx, offsetof(btl_tcp_handshake_t, mac), (const uint8_t *)hs);
    hmac_sha256_update(&ctx, BTL_TCP_NONCE_LEN, listen_nonce);
    hmac_sha256_digest(&ctx, BTL_TCP_MAC_LEN, mac_out);
}

int btl_tcp_auth_sign(const crmpi_btl_endpoint_t *ep, btl_tcp_handshake_t *hs)
{
    if (crmpi_random_bytes(hs->nonce, sizeof(hs->nonce)) != CRMPI_OK)
        return -1;
    btl_tcp_auth_mac(ep->module->auth_key, hs, ep->listen_nonce, hs->mac);
    return 0;
}

static bool btl_tcp_auth_seen(const btl_tcp_module_t *module, const uint8_t *nonce)
{
    for (size_t i = 0; i < module->num_seen_nonces; i++) {
        if (memcmp(module->seen_nonces[i], nonce, BTL_TCP_NONCE_LEN) == 0)
            return true;
    }
    return false;
}

bool btl_tcp_auth_check(btl_tcp_module_t *module, const btl_tcp_handshake_t *hs, char *why,
                        size_t why_len)
{
    uint8_t mac[BTL_TCP_MAC_LEN];

    btl_tcp_auth_mac(module->auth_key, hs, module->listen_nonce, mac);
    /* The MAC first, in constant time: nothing else the peer claims means anything before. */
    if (!nettle_memeql_sec(mac, hs->mac, sizeof(mac))) {
        snprintf(why, why_len, "its handshake does not prove the job's key");
        return false;
    }
    if (hs->receiver_rank != module->my_rank || hs->jobid != module->jobid) {
        snprintf(why, why_len, "it was meant for rank %u of job %llu", hs->receiver_rank,
                 (unsigned long long)hs->jobid);
        return false;
    }
    if (hs->sender_rank >= module->job_size || hs->sender_rank == module->my_rank) {
        snprintf(why, why_len, "it claims to be rank %u of a job of %u ranks", hs->sender_rank,
                 module->job_size);
        return false;
    }
    if (btl_tcp_auth_seen(module, hs->nonce)) {
        snprintf(why, why_len, "its handshake was used before (a replay)");
        return false;
    }
    /* One entry per accepted connection: at most a few per peer over the module's life. */
    uint8_t(*grown)[BTL_TCP_NONCE_LEN] =
        realloc(module->seen_nonces, (module->num_seen_nonces + 1) * sizeof(*grown));
    if (!grown) {
        snprintf(why, why_len, "out of memory to remember its nonce");
        return false;
    }
    module->seen_nonces = grown;
    memcpy(module->seen_nonces[module->num_seen_nonces++], hs->nonce, BTL_TCP_NONCE_LEN);
    return true;
}
