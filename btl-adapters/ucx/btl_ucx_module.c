/*
 * btl_ucx_module.c: the ucx module's slots (btl.h): the UCP context and worker, add_procs /
 * del_procs, progress, and finalize's flush and teardown (btl_ucx.h).
 */
#include "config.h"

#include "btl_ucx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"

static int64_t btl_ucx_module_now_ms(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* The peer's endpoint from its modex address, and the token of fragments to it;
 * CRMPI_ERR_UNREACH when it published none or UCX has no transport to it (said at verbose
 * 10), other errors logged. */
static int btl_ucx_module_peer_connect(btl_ucx_module_t *module, uint32_t peer_rank,
                                       ucp_ep_h *ep_out, uint8_t *token_out, bool *place_out)
{
    const btl_ucx_lib_t *lib = module->lib;
    ucp_ep_params_t params = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS};
    const uint8_t *nonce;
    const char *why;
    const void *addr;
    size_t addr_len;
    ucs_status_t status;
    void *blob;
    size_t len;
    int rc;

    rc = crmpi_rte_modex_lookup(peer_rank, BTL_UCX_MODEX_KEY, &blob, &len);
    if (rc == CRMPI_ERR_NOT_FOUND) {
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "ucx: rank %u published no ucx address (its ucx BTL is not in use)",
                         peer_rank);
        return CRMPI_ERR_UNREACH;
    }
    if (rc != CRMPI_OK) {
        crmpi_log_error("btl:ucx: rank %u: modex lookup of rank %u's address failed: %s",
                        module->my_rank, peer_rank, crmpi_strerror(rc));
        return rc;
    }
    if (btl_ucx_modex_unpack(blob, len, &addr, &addr_len, &nonce, place_out) != CRMPI_OK) {
        crmpi_log_error("btl:ucx: rank %u: rank %u published a ucx address this rank cannot "
                        "read (%zu bytes; another crmpi version?)",
                        module->my_rank, peer_rank, len);
        free(blob);
        return CRMPI_ERR_PROTO;
    }
    params.address = addr;
    crmpi_btl_auth_token(&module->auth, module->my_rank, peer_rank, nonce, token_out);
    btl_ucx_lib_log_begin();
    status = lib->ep_create(module->worker, &params, ep_out);
    why = btl_ucx_lib_log_end();
    free(blob);
    if (status != UCS_OK) {
        /* UCX has no transport from here to there (UCX_TLS=sm across nodes): not an
         * error of this module; the BML says so if nobody else reaches the peer. */
        crmpi_fw_verbose(&crmpi_btl_framework, 10, "ucx: rank %u -> rank %u: unreachable: %s%s%s",
                         module->my_rank, peer_rank, lib->status_string(status), why ? ": " : "",
                         why ? why : "");
        return CRMPI_ERR_UNREACH;
    }
    return CRMPI_OK;
}

/* Close an endpoint nothing was sent on, without waiting. */
static void btl_ucx_module_ep_forget(btl_ucx_module_t *module, ucp_ep_h ucp_ep)
{
    const ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                       .flags = UCP_EP_CLOSE_FLAG_FORCE};
    ucs_status_ptr_t ptr = module->lib->ep_close_nbx(ucp_ep, &param);

    if (ptr && !UCS_PTR_IS_ERR(ptr))
        module->lib->request_free(ptr);
}

static int btl_ucx_module_add_procs(crmpi_btl_module_t *base, size_t nprocs,
                                    const uint32_t *peer_ranks,
                                    crmpi_btl_endpoint_t **endpoints_out)
{
    btl_ucx_module_t *module = (btl_ucx_module_t *)base;

    for (size_t i = 0; i < nprocs; i++) {
        uint32_t peer_rank = peer_ranks[i];
        uint8_t token[CRMPI_BTL_AUTH_TOKEN_LEN];
        crmpi_btl_endpoint_t *ep;
        ucp_ep_h ucp_ep;
        bool place = false;
        int rc;

        endpoints_out[i] = NULL;
        /* This rank is the self BTL's. */
        if (peer_rank == module->my_rank || peer_rank >= module->job_size)
            continue;
        /* What its fragments must carry (btl_ucx.h, "Who may send"), whether or not this
         * rank reaches it: it depends on this module's nonce only. */
        if (!module->peers[peer_rank].known) {
            crmpi_btl_auth_token(&module->auth, peer_rank, module->my_rank, module->auth.nonce,
                                 module->peers[peer_rank].token);
            module->peers[peer_rank].known = true;
        }
        ep = module->endpoints[peer_rank];
        if (ep) {
            if (ep->deleted) {
                ep->deleted = false;
                module->num_live++;
            }
            endpoints_out[i] = ep;
            continue;
        }
        rc = btl_ucx_module_peer_connect(module, peer_rank, &ucp_ep, token, &place);
        if (rc == CRMPI_ERR_UNREACH)
            continue;
        if (rc != CRMPI_OK)
            return rc;
        ep = calloc(1, sizeof(*ep));
        if (!ep) {
            crmpi_log_error("btl:ucx: rank %u: out of memory for the endpoint of rank %u",
                            module->my_rank, peer_rank);
            /* Nothing was sent on it: closed at once; UCX frees the request when done. */
            btl_ucx_module_ep_forget(module, ucp_ep);
            return CRMPI_ERR_OUT_OF_RESOURCE;
        }
        ep->module = module;
        ep->peer_rank = peer_rank;
        ep->ucp_ep = ucp_ep;
        ep->place = place;
        memcpy(ep->token, token, sizeof(ep->token));
        module->endpoints[peer_rank] = ep;
        module->num_live++;
        endpoints_out[i] = ep;
        crmpi_fw_verbose(&crmpi_btl_framework, 20, "ucx: rank %u -> rank %u: reachable",
                         module->my_rank, peer_rank);
    }
    return CRMPI_OK;
}

/* A deleted peer's UCP endpoint stays until finalize: closing it needs the worker to be
 * progressed until the close completes, and the peer may still be wiring up with it. */
static int btl_ucx_module_del_procs(crmpi_btl_module_t *base, size_t nprocs,
                                    const uint32_t *peer_ranks, crmpi_btl_endpoint_t **endpoints)
{
    btl_ucx_module_t *module = (btl_ucx_module_t *)base;

    for (size_t i = 0; i < nprocs; i++) {
        crmpi_btl_endpoint_t *ep = endpoints[i];

        if (!ep || module->endpoints[ep->peer_rank] != ep || ep->deleted)
            continue;
        ep->deleted = true;
        module->num_live--;
    }
    return CRMPI_OK;
}

static int btl_ucx_module_progress(crmpi_btl_module_t *base)
{
    btl_ucx_module_t *module = (btl_ucx_module_t *)base;
    int count;

    if (module->in_progress)
        return 0;
    /* Always, unlike ofi's idle shortcut: a deleted peer's endpoint still exists, and UCX's
     * wireup and close with a peer need both sides' progress. */
    module->in_progress = true;
    module->delivered = 0;
    module->lib->worker_progress(module->worker);
    if (module->num_to_start)
        module->delivered += btl_ucx_endpoint_payload_start(module);
    count = module->delivered;
    module->in_progress = false;
    return count;
}

/* A request of finalize's (flush, close): done when it completed, one way or the other. */
typedef struct btl_ucx_wait {
    void *request;       /* from the _nbx call, or NULL when it completed at once */
    ucs_status_t status; /* its status once complete */
} btl_ucx_wait_t;

/* Turn an _nbx result into a wait. */
static btl_ucx_wait_t btl_ucx_module_wait_of(ucs_status_ptr_t ptr)
{
    if (ptr == NULL)
        return (btl_ucx_wait_t){NULL, UCS_OK};
    if (UCS_PTR_IS_ERR(ptr))
        return (btl_ucx_wait_t){NULL, UCS_PTR_STATUS(ptr)};
    return (btl_ucx_wait_t){ptr, UCS_INPROGRESS};
}

/*
 * Progress until every wait completed or `timeout_ms` passed; free the completed requests,
 * and release the others to UCX (ucp_request_free on a request in progress: UCX frees it
 * when it ends; the worker's destruction insists that none is left unreleased).
 * @return the waits that did not complete in time
 */
static size_t btl_ucx_module_wait_all(btl_ucx_module_t *module, btl_ucx_wait_t *waits, size_t count,
                                      int64_t timeout_ms)
{
    const btl_ucx_lib_t *lib = module->lib;
    const int64_t deadline = btl_ucx_module_now_ms() + timeout_ms;
    size_t pending;

    for (;;) {
        pending = 0;
        for (size_t i = 0; i < count; i++) {
            if (!waits[i].request)
                continue;
            waits[i].status = lib->request_check_status(waits[i].request);
            if (waits[i].status == UCS_INPROGRESS) {
                pending++;
                continue;
            }
            lib->request_free(waits[i].request);
            waits[i].request = NULL;
        }
        if (pending == 0 || btl_ucx_module_now_ms() >= deadline)
            break;
        lib->worker_progress(module->worker);
    }
    for (size_t i = 0; pending && i < count; i++) {
        if (waits[i].request)
            lib->request_free(waits[i].request);
        waits[i].request = NULL;
    }
    return pending;
}

/* Close every endpoint in `flags`' mode (0: UCP's flush mode; FORCE: cancel what is left)
 * and wait for the closes, bounded. @return the closes that did not complete in time */
static size_t btl_ucx_module_close_all(btl_ucx_module_t *module, uint32_t flags)
{
    const ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = flags};
    btl_ucx_wait_t closes[64];
    size_t pending = 0;
    size_t num = 0;

    /* In batches of at most 64, without allocating: finalize must not fail. */
    for (uint32_t r = 0; r < module->job_size; r++) {
        crmpi_btl_endpoint_t *ep = module->endpoints[r];

        if (!ep)
            continue;
        closes[num++] = btl_ucx_module_wait_of(module->lib->ep_close_nbx(ep->ucp_ep, &param));
        ep->ucp_ep = NULL;
        if (num == sizeof(closes) / sizeof(closes[0])) {
            pending += btl_ucx_module_wait_all(module, closes, num, module->finalize_timeout_ms);
            num = 0;
        }
    }
    if (num)
        pending += btl_ucx_module_wait_all(module, closes, num, module->finalize_timeout_ms);
    return pending;
}

/*
 * Flush the worker (every fragment's tail leaves UCX's buffers for its peer), then close
 * every endpoint in UCP's flush mode; each wait progresses the worker and is bounded by
 * btl_ucx_finalize_timeout (btl_ucx.h, "Checkpoint/restart"). When the flush does not end
 * in time (a peer stopped progressing), the endpoints are closed in force mode instead,
 * which cancels the sends left (UCX insists that no send is outstanding when the worker
 * goes). Arrivals meanwhile are dropped: in MPI_Finalize nothing is left to receive, and
 * before a checkpoint every channel was drained.
 */
static void btl_ucx_module_flush_close(btl_ucx_module_t *module)
{
    const btl_ucx_lib_t *lib = module->lib;
    const ucp_request_param_t flush_param = {0};
    btl_ucx_wait_t flush;
    size_t unflushed;
    size_t pending;

    module->finalizing = true;
    btl_ucx_endpoint_payload_abort(module);
    /* A send by rendezvous ("Placement") is done only once its receiver has taken the
     * payload, which needs this side's progress: the worker's flush does not wait for it. */
    for (int64_t deadline = btl_ucx_module_now_ms() + module->finalize_timeout_ms;
         module->num_sending > 0 && btl_ucx_module_now_ms() < deadline;)
        lib->worker_progress(module->worker);
    flush = btl_ucx_module_wait_of(lib->worker_flush_nbx(module->worker, &flush_param));
    if (btl_ucx_module_wait_all(module, &flush, 1, module->finalize_timeout_ms) != 0) {
        unflushed = module->num_sending;
        pending = btl_ucx_module_close_all(module, UCP_EP_CLOSE_FLAG_FORCE);
        crmpi_log_error("btl:ucx: rank %u: finalize: %zu fragments not flushed after %lld ms "
                        "were dropped; a peer stopped progressing (btl_ucx_finalize_timeout)%s",
                        module->my_rank, unflushed, (long long)module->finalize_timeout_ms,
                        pending ? "; some endpoints did not even close" : "");
        return;
    }
    if (flush.status != UCS_OK)
        crmpi_fw_verbose(&crmpi_btl_framework, 10, "ucx: rank %u: finalize: flush: %s",
                         module->my_rank, lib->status_string(flush.status));
    pending = btl_ucx_module_close_all(module, 0);
    if (pending)
        crmpi_log_error("btl:ucx: rank %u: finalize: %zu endpoints still closing after %lld ms; "
                        "destroyed with the worker (btl_ucx_finalize_timeout)",
                        module->my_rank, pending, (long long)module->finalize_timeout_ms);
}

/* Release what the module holds; the worker and context only if they were made. */
static void btl_ucx_module_destroy(btl_ucx_module_t *module)
{
    const btl_ucx_lib_t *lib = module->lib;

    if (module->addr)
        lib->worker_release_address(module->worker, module->addr);
    /* The worker ends its interfaces (sockets, segments) and leaves the async thread, which
     * libucs joins once no worker uses it. */
    if (module->worker)
        lib->worker_destroy(module->worker);
    if (module->context)
        lib->cleanup(module->context);
    btl_ucx_endpoint_early_free(module);
    for (uint32_t r = 0; module->endpoints && r < module->job_size; r++)
        free(module->endpoints[r]);
    free(module->endpoints);
    free(module->peers);
    crmpi_btl_auth_fini(&module->auth);
    free(module);
}

static int btl_ucx_module_finalize(crmpi_btl_module_t *base)
{
    btl_ucx_module_t *module = (btl_ucx_module_t *)base;

    btl_ucx_module_flush_close(module);
    crmpi_fw_verbose(
        &crmpi_btl_framework, 20,
        "ucx: rank %u: finalize; %llu fragments arrived before their turn, %llu "
        "refused; %llu payloads by rendezvous, bytes: %llu placed, %llu copied",
        module->my_rank, (unsigned long long)module->num_early,
        (unsigned long long)module->auth.num_refused, (unsigned long long)module->num_payloads,
        (unsigned long long)module->placed_bytes, (unsigned long long)module->place_copied_bytes);
    btl_ucx_module_destroy(module);
    return CRMPI_OK;
}

/* The transport list the user gave, for messages: the parameter, else UCX_TLS. */
static const char *btl_ucx_module_tls_name(const btl_ucx_settings_t *settings, char *buf,
                                           size_t size)
{
    /* UCX_TLS is UCX's own variable, read here only to name it in a message. */
    const char *env = getenv("UCX_TLS");

    if (settings->tls[0])
        snprintf(buf, size, "btl_ucx_tls=%s", settings->tls);
    else if (env && env[0])
        snprintf(buf, size, "UCX_TLS=%s", env);
    else
        buf[0] = '\0';
    return buf;
}

/* UCX's names of its shared-memory transports and their aliases (UCX_TLS). */
static const char *const btl_ucx_module_shm_names[] = {"sm",   "shm",   "mm",   "posix",
                                                       "sysv", "xpmem", "knem", "cma"};

/* The parent of `pid` as /proc shows it, or 0. */
static long btl_ucx_module_proc_parent(long pid)
{
    char path[64];
    char line[128];
    long parent = 0;
    FILE *status;

    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    status = fopen(path, "re");
    if (!status)
        return 0;
    while (fgets(line, sizeof(line), status)) {
        if (strncmp(line, "PPid:", 5) == 0) {
            parent = strtol(line + 5, NULL, 10);
            break;
        }
    }
    fclose(status);
    return parent;
}

/*
 * Does the pid this rank sees (getpid()) name, in /proc, this process or one of its
 * ancestors, which live as long as it does? Then UCX's shared memory can watch it
 * (btl_ucx.h, "Restarted ranks"). At launch the rank's pid in its namespace is its agent's
 * pid; in a restored rank it is the old agent's, gone.
 */
static bool btl_ucx_module_pid_in_proc(void)
{
    const long me = (long)getpid();
    char link[32];
    ssize_t len = readlink("/proc/self", link, sizeof(link) - 1);
    long pid;

    if (len <= 0)
        return true; /* no /proc to tell: leave UCX's choice alone */
    link[len] = '\0';
    pid = strtol(link, NULL, 10);
    /* Rank, its init, its agent: a few steps at most. */
    for (int depth = 0; pid > 1 && depth < 8; depth++) {
        if (pid == me)
            return true;
        pid = btl_ucx_module_proc_parent(pid);
    }
    return false;
}

static bool btl_ucx_module_is_shm_name(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(btl_ucx_module_shm_names) / sizeof(btl_ucx_module_shm_names[0]);
         i++) {
        if (strlen(btl_ucx_module_shm_names[i]) == len &&
            strncmp(btl_ucx_module_shm_names[i], name, len) == 0)
            return true;
    }
    return false;
}

/*
 * The transport list without UCX's shared memory, for a restored rank: `list` (the user's,
 * or "" for UCX's choice) into buf. An exclusion list ("^...") or none excludes "sm"
 * too; an inclusion list loses its shared-memory names.
 * @return false when nothing is left of an inclusion list
 */
static bool btl_ucx_module_tls_without_shm(const char *list, char *buf, size_t size)
{
    size_t used = 0;

    if (!list[0] || list[0] == '^') {
        snprintf(buf, size, "%s%s", list[0] ? list : "^sm", list[0] ? ",sm" : "");
        return true;
    }
    buf[0] = '\0';
    for (const char *name = list; *name;) {
        size_t len = strcspn(name, ",");

        if (len && !btl_ucx_module_is_shm_name(name, len) && used + len + 2 < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%.*s", used ? "," : "", (int)len,
                                     name);
        name += len + (name[len] == ',');
    }
    return used > 0;
}

/* UCP's context: features, the transport list, and the check that every transport named
 * exists here (btl_ucx.h, "Transports"). */
static int btl_ucx_module_context_create(btl_ucx_module_t *module,
                                         const btl_ucx_settings_t *settings)
{
    const btl_ucx_lib_t *lib = module->lib;
    ucp_params_t params = {
        .field_mask =
            UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS | UCP_PARAM_FIELD_NAME,
        .features = UCP_FEATURE_AM,
        .estimated_num_eps = module->job_size,
        .name = "crmpi",
    };
    /* UCX_TLS is UCX's own variable: read to name it in messages and to filter it. */
    const char *env_tls = getenv("UCX_TLS");
    const char *tls_list;
    ucp_config_t *config;
    ucs_status_t status;
    const char *why;
    char no_shm[256];
    char tls[256];

    btl_ucx_module_tls_name(settings, tls, sizeof(tls));
    status = lib->config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        crmpi_log_error("btl:ucx: rank %u: UCX cannot read its configuration (UCX_* variables): "
                        "%s",
                        module->my_rank, lib->status_string(status));
        return CRMPI_ERR_BAD_PARAM;
    }
    tls_list = settings->tls[0] ? settings->tls : (env_tls && env_tls[0] ? env_tls : "");
    if (!btl_ucx_module_pid_in_proc()) {
        /* A restored rank: UCX's shared memory cannot connect (btl_ucx.h, "Restarted
         * ranks"). */
        if (!btl_ucx_module_tls_without_shm(tls_list, no_shm, sizeof(no_shm))) {
            crmpi_log_error("btl:ucx: rank %u: %s names only UCX's shared-memory transports, "
                            "which cannot connect in a restarted rank (UCX finds a peer by its "
                            "pid in /proc, which a restored rank's pid is not); restart with "
                            "btl_ucx_tls=tcp, or with crmpi's sm BTL (--mca btl self,sm,ucx)",
                            module->my_rank, tls);
            lib->config_release(config);
            return CRMPI_ERR_BAD_PARAM;
        }
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "ucx: rank %u: restarted rank: UCX's transports %s (no shared memory)",
                         module->my_rank, no_shm);
        tls_list = no_shm;
    }
    if (tls_list[0] && tls_list != env_tls) {
        status = lib->config_modify(config, "TLS", tls_list);
        if (status != UCS_OK) {
            crmpi_log_error("btl:ucx: rank %u: %s is not a transport list UCX accepts: %s",
                            module->my_rank, tls[0] ? tls : tls_list, lib->status_string(status));
            lib->config_release(config);
            return CRMPI_ERR_BAD_PARAM;
        }
    }
    /* No rendezvous lanes (btl_ucx.h, "Progress"), unless the user asked for some. */
    if (!getenv("UCX_MAX_RNDV_LANES")) {
        status = lib->config_modify(config, "MAX_RNDV_LANES", "0");
        if (status != UCS_OK)
            crmpi_fw_verbose(&crmpi_btl_framework, 10,
                             "ucx: rank %u: UCX keeps its rendezvous lanes (MAX_RNDV_LANES: %s)",
                             module->my_rank, lib->status_string(status));
    }
    if (settings->net_devices[0]) {
        status = lib->config_modify(config, "NET_DEVICES", settings->net_devices);
        if (status != UCS_OK) {
            crmpi_log_error("btl:ucx: rank %u: btl_ucx_net_devices=%s is not a device list UCX "
                            "accepts: %s",
                            module->my_rank, settings->net_devices, lib->status_string(status));
            lib->config_release(config);
            return CRMPI_ERR_BAD_PARAM;
        }
    }
    btl_ucx_lib_log_begin();
    status = lib->init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &module->context);
    why = btl_ucx_lib_log_end();
    lib->config_release(config);
    if (status != UCS_OK) {
        /* Without a list of the user's, UCX found nothing usable on this node. */
        if (tls[0] || settings->required)
            crmpi_log_error("btl:ucx: rank %u: UCX cannot start%s%s: %s; name transports "
                            "UCX has here (btl_ucx_tls or UCX_TLS), or leave ucx out of the "
                            "btl list",
                            module->my_rank, tls[0] ? " with " : "", tls,
                            why ? why : lib->status_string(status));
        else
            crmpi_fw_verbose(&crmpi_btl_framework, 10, "ucx: rank %u: UCX cannot start: %s",
                             module->my_rank, why ? why : lib->status_string(status));
        module->context = NULL;
        return tls[0] ? CRMPI_ERR_BAD_PARAM : CRMPI_ERR_NOT_SUPPORTED;
    }
    /* UCX only warns about a transport it does not have, and goes on with the others: a
     * list the user wrote is taken at its word instead (UCX's warning says "transport 'X'
     * is not available, please use one or more of: ..."). */
    if (tls[0] && why && strstr(why, "not available")) {
        crmpi_log_error("btl:ucx: rank %u: %s: %s; name transports UCX has here, or leave ucx "
                        "out of the btl list",
                        module->my_rank, tls, why);
        return CRMPI_ERR_BAD_PARAM;
    }
    return CRMPI_OK;
}

/* The worker, its AM handlers and its address. */
static int btl_ucx_module_worker_create(btl_ucx_module_t *module)
{
    const btl_ucx_lib_t *lib = module->lib;
    ucp_worker_params_t params = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE, /* every slot runs under the library lock */
    };
    ucs_status_t status;
    const char *what;

    what = "ucp_worker_create";
    status = lib->worker_create(module->context, &params, &module->worker);
    if (status != UCS_OK) {
        module->worker = NULL;
        goto err;
    }
    what = "ucp_worker_set_am_recv_handler";
    for (uint8_t tag = 0; tag < CRMPI_BTL_TAG_MAX; tag++) {
        ucp_am_handler_param_t am = {
            .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                          UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
            .id = tag,
            /* The whole fragment in one call: UCX joins its segments. */
            .flags = UCP_AM_FLAG_WHOLE_MSG,
            .cb = btl_ucx_endpoint_am_recv,
            .arg = &module->am_ctx[tag],
        };

        module->am_ctx[tag] = (btl_ucx_am_ctx_t){.module = module, .tag = tag};
        status = lib->worker_set_am_recv_handler(module->worker, &am);
        if (status != UCS_OK)
            goto err;
    }
    what = "ucp_worker_get_address";
    status = lib->worker_get_address(module->worker, &module->addr, &module->addr_len);
    if (status != UCS_OK) {
        module->addr = NULL;
        goto err;
    }
    return CRMPI_OK;

err:
    crmpi_log_error("btl:ucx: rank %u: %s: %s", module->my_rank, what, lib->status_string(status));
    return CRMPI_ERR_IO;
}

int btl_ucx_module_create(const crmpi_rte_job_info_t *job, const btl_ucx_settings_t *settings,
                          const btl_ucx_lib_t *lib, btl_ucx_module_t **module_out)
{
    btl_ucx_module_t *module = calloc(1, sizeof(*module));
    int rc;

    if (!module) {
        crmpi_log_error("btl:ucx: out of memory for the module");
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    module->super = (crmpi_btl_module_t){
        .name = "ucx",
        .exclusivity = BTL_UCX_EXCLUSIVITY,
        .priority = settings->priority,
        .flags = 0, /* not CKPT_FRIENDLY: btl_ucx.h says why */
        .max_send_size = settings->max_send_size,
        .eager_limit = settings->eager_limit,
        .add_procs = btl_ucx_module_add_procs,
        .del_procs = btl_ucx_module_del_procs,
        .send = btl_ucx_endpoint_send,
        .progress = btl_ucx_module_progress,
        .finalize = btl_ucx_module_finalize,
    };
    module->my_rank = job->rank;
    module->job_size = job->size;
    module->lib = lib;
    module->max_sends = settings->max_sends;
    module->finalize_timeout_ms = settings->finalize_timeout_ms;
    module->recv_place = settings->recv_place;
    if (module->recv_place)
        module->super.flags |= CRMPI_BTL_FLAG_RECV_PLACE;
    module->endpoints = calloc(job->size, sizeof(module->endpoints[0]));
    module->peers = calloc(job->size, sizeof(module->peers[0]));
    if (!module->endpoints || !module->peers) {
        crmpi_log_error("btl:ucx: rank %u: out of memory for the module of a job of %u ranks",
                        job->rank, job->size);
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_destroy;
    }
    /* A new nonce with every module: tokens made for an earlier one are refused. */
    rc = crmpi_btl_auth_init(&module->auth, "ucx", job);
    if (rc != CRMPI_OK)
        goto err_destroy;
    rc = btl_ucx_module_context_create(module, settings);
    if (rc != CRMPI_OK)
        goto err_destroy;
    rc = btl_ucx_module_worker_create(module);
    if (rc != CRMPI_OK)
        goto err_destroy;
    *module_out = module;
    return CRMPI_OK;

err_destroy:
    btl_ucx_module_destroy(module);
    return rc;
}
