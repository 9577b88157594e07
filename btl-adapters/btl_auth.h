/*
 * btl_auth.h: per-fragment tokens of the BTLs whose transport lets any local process send
 * to a rank's endpoint (ofi, ucx): who may send a fragment to a module.
 *
 *   sender s (module key K)                          receiver r (module key K, nonce N_r)
 *   add_procs: token[s->r] = HMAC(K, label || s       add_procs: expected[s] = the same,
 *              || r || jobid || N_r)[0..15],                     from its own N_r
 *              N_r read from r's modex blob
 *   every fragment carries token[s->r] ------------>  compared with expected[sender] in
 *                                                     constant time before anything else
 *
 * K is HMAC-SHA256(job key, label), label "crmpi btl <name>": one key per transport, so a
 * key recovered from one says nothing of the others (the tcp BTL derives its own the same
 * way). N_r is random, new with every module (MPI_Init and every rebuild after a
 * checkpoint), so a token is worth nothing to the next instance of its receiver.
 *
 * The token is a bearer token, not a MAC of the fragment: it proves that its sender knew
 * the job's key when the receiver's module was created, and nothing about the bytes that
 * follow it. That stops every local user without the key (another user of the node, a
 * rank of another run) from having a fragment delivered; it does not stop one who can read
 * the traffic between two ranks and copy a token, which on the loopback interface or in
 * shared memory takes root (an unprivileged user cannot capture packets), and root owns
 * the ranks anyway; across nodes it assumes a network other users cannot tap, as the tcp
 * BTL's frames do. A MAC of every fragment would defend against that reader, but costs an
 * HMAC over every byte on both sides: about 0.5 us for a 64-byte fragment and 80 us for a
 * 64 KiB one with nettle on the machine crmpi is tested on, where a small message over
 * UCX's shared memory takes about 2 us one way. The token costs a 16-byte compare.
 *
 * Refusals are said once per claimed sender rank (and once for every rank outside the job
 * taken together): a flood of forged fragments writes at most job size + 1 lines.
 *
 * Threading: as btl.h (the library lock is held).
 */
#ifndef CRMPI_BTL_AUTH_H
#define CRMPI_BTL_AUTH_H

#include <stdbool.h>
#include <stdint.h>

#include "rte.h"

/* Bytes of a module's nonce in its modex blob. */
#define CRMPI_BTL_AUTH_NONCE_LEN 16u
/* Bytes of the token in every fragment: HMAC-SHA256 truncated (NIST SP 800-107, 5.3.3). */
#define CRMPI_BTL_AUTH_TOKEN_LEN 16u
/* Bytes of a module key: HMAC-SHA256's output. */
#define CRMPI_BTL_AUTH_KEY_LEN 32u
/* The claimed rank of a message too short to name one (crmpi_btl_auth_refuse). */
#define CRMPI_BTL_AUTH_NO_RANK UINT32_MAX

/* One module's part: its key and nonce, and what it said about refused fragments. */
typedef struct crmpi_btl_auth {
    const char *name;                        /* the transport ("ofi"), in the label */
    uint8_t key[CRMPI_BTL_AUTH_KEY_LEN];     /* HMAC-SHA256(job key, "crmpi btl <name>") */
    uint8_t nonce[CRMPI_BTL_AUTH_NONCE_LEN]; /* random, published in the module's modex */
    uint64_t jobid;                          /* covered by every token */
    uint32_t my_rank;                        /* this rank, in MPI_COMM_WORLD */
    uint32_t job_size;                       /* ranks in MPI_COMM_WORLD */
    bool *refusal_said;                      /* by claimed sender rank: already logged */
    bool stranger_said;                      /* a rank outside the job was logged */
    uint64_t num_refused;                    /* fragments refused, for finalize's line */
} crmpi_btl_auth_t;

/**
 * What every authenticating BTL starts from (the tcp BTL's handshakes too): the module key
 * of transport `name`, HMAC-SHA256(job key, "crmpi btl <name>"), into key_out
 * (CRMPI_BTL_AUTH_KEY_LEN bytes), and `nonce_len` random bytes into nonce_out.
 * @return CRMPI_OK; CRMPI_ERR_NOT_SUPPORTED (the job has no key: a rank not started by
 *         crmpi's mpirun), CRMPI_ERR_IO (getrandom); logged
 */
int crmpi_btl_auth_derive(const char *name, const crmpi_rte_job_info_t *job, uint8_t *key_out,
                          uint8_t *nonce_out, size_t nonce_len);

/**
 * Derive the module key for transport `name` from the job's key and draw the nonce.
 * @return CRMPI_OK; CRMPI_ERR_NOT_SUPPORTED (the job has no key: a rank not started by
 *         crmpi's mpirun), CRMPI_ERR_IO (getrandom), CRMPI_ERR_OUT_OF_RESOURCE; logged
 */
int crmpi_btl_auth_init(crmpi_btl_auth_t *auth, const char *name, const crmpi_rte_job_info_t *job);
/** Free what init allocated; the key is wiped. */
void crmpi_btl_auth_fini(crmpi_btl_auth_t *auth);

/** The token fragments from `sender_rank` to `receiver_rank` carry, for the receiver's
 *  module whose nonce is `receiver_nonce` (CRMPI_BTL_AUTH_NONCE_LEN bytes). */
void crmpi_btl_auth_token(const crmpi_btl_auth_t *auth, uint32_t sender_rank,
                          uint32_t receiver_rank, const uint8_t *receiver_nonce,
                          uint8_t *token_out);

/** Does `token` equal `expected`? In constant time (nettle's memeql_sec). */
bool crmpi_btl_auth_match(const uint8_t *token, const uint8_t *expected);

/**
 * A fragment claiming to come from `claimed_rank` (CRMPI_BTL_AUTH_NO_RANK: none) was refused
 * because `why`; counted, and logged only if it is the first from that rank (every rank
 * >= job_size, and none, count as one).
 */
void crmpi_btl_auth_refuse(crmpi_btl_auth_t *auth, uint32_t claimed_rank, const char *why);

#endif /* CRMPI_BTL_AUTH_H */
