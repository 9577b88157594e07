/*
 * filem_partner.h: the partner level's transfer: one rank's checkpoint images sent over TCP
 * to another node, which keeps them in its own local level (filem.h, "levels"), so that
 * they survive the loss of the rank's node. The wire protocol is described at the top of
 * filem_partner.c; every copy is authenticated with the job's partner key.
 *
 * Threading: a server is started and stopped by one thread; it receives in a thread of its
 * own, one connection at a time. crmpi_filem_partner_send blocks until the copy is durable
 * on the partner and may run in any thread, several at the same time (distinct copies).
 * Parameters must be declared (crmpi_catalog_register_all) on the server's side, where
 * filem_local_dir says where copies go.
 */
#ifndef CRMPI_FILEM_PARTNER_H
#define CRMPI_FILEM_PARTNER_H

#include <stddef.h>
#include <stdint.h>

/* A node's receiver of partner copies: a TCP listener and one thread that stores each
 * authenticated rank copy into this node's local level. */
typedef struct crmpi_filem_partner_server crmpi_filem_partner_server_t;

/**
 * Listen on `bind_addr` (numeric IPv4, port chosen by the kernel) and start the thread.
 * @param key,key_len  the job's partner key (bytes; both sides hold the same), copied
 * @param srv_out      the server, for crmpi_filem_partner_stop
 * @param addr_out     "a.b.c.d:port" of the listener (addr_len >= 32)
 * @return CRMPI_OK; CRMPI_ERR_BAD_PARAM (logged: bind_addr is not an IPv4 address, no key,
 *         addr_len too small); CRMPI_ERR_IO (logged once with strerror);
 *         CRMPI_ERR_OUT_OF_RESOURCE
 */
int crmpi_filem_partner_serve(const char *bind_addr, const uint8_t *key, size_t key_len,
                              crmpi_filem_partner_server_t **srv_out, char *addr_out,
                              size_t addr_len);

/**
 * Stop listening, end the thread (a transfer in progress is abandoned and its .partial
 * removed) and free the server. NULL is fine.
 */
void crmpi_filem_partner_stop(crmpi_filem_partner_server_t *srv);

/**
 * Remove the copies this server stored, of every rank it stored one for, of the sequences
 * of snapshot `jobdir` that `keep` (num_keep entries: the committed ones kept) does not
 * list, and their unfinished copies; the sequence being received now stays. A copy that
 * arrives meanwhile waits until this is done. Called by the thread that started the
 * server; NULL is fine. Failures are logged as warnings (crmpi_filem_local_prune).
 */
void crmpi_filem_partner_prune(crmpi_filem_partner_server_t *srv, const char *jobdir,
                               const uint32_t *keep, uint32_t num_keep);

/**
 * Send the rank's images (every regular file under `src_dir`, recursively, e.g. criu/...
 * and rank.json) to the server at `addr` ("a.b.c.d:port"), which stores them as sequence
 * `seq`'s rank.<rank> of snapshot `jobdir` in its node's local level
 * (crmpi_filem_local_seq_dir(jobdir, seq) on the server's side), and removes that rank's
 * copies of the other sequences of that snapshot that `keep` (num_keep entries) does not
 * list. Blocks until the server answered that the copy is complete and durable.
 * @param jobdir  the snapshot's directory; only its name (<jobid>.ckpt) is sent
 * @param why     on failure, one line saying why ("partner 10.0.0.2:4000 refused the copy:
 *                bad key ..."; "the partner's disk is full ..."; "cannot connect to ...");
 *                not logged
 * @return CRMPI_OK; CRMPI_ERR_UNREACH (cannot connect); CRMPI_ERR_PROTO (refused, or a bad
 *         answer); CRMPI_ERR_OUT_OF_RESOURCE (the partner's disk is full, or out of memory
 *         here); CRMPI_ERR_BAD_PARAM (addr, jobdir, seq or rank cannot be sent);
 *         CRMPI_ERR_IO (reading src_dir or the connection failed)
 */
int crmpi_filem_partner_send(const char *addr, const uint8_t *key, size_t key_len,
                             const char *jobdir, unsigned seq, int rank, const char *src_dir,
                             const uint32_t *keep, uint32_t num_keep, char *why, size_t why_len);

#endif /* CRMPI_FILEM_PARTNER_H */
