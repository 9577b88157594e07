/*
 * btl_ucx.h: internals of the ucx BTL (btl.h): fragments as UCP active messages, over the
 * transports UCX selects itself (tcp, its shared memory: posix, sysv, cma; a NIC's).
 *
 *   rank i                                                  rank j
 *   send: hdr + payload packed into a send buffer           one AM handler per crmpi tag
 *         -> ucp_am_send_nbx(ep of j, AM id = tag,          (AM id = tag): token checked,
 *            wire header {rank, seq, token},                then in sequence to the tag's
 *            buffer) -------------------------------------> callback; a fragment ahead
 *         buffer freed at the send's completion             of its turn is copied
 *   progress: ucp_worker_progress (crmpi's progress engine calls it; no thread of ours)
 *
 * One UCP context and one worker per rank; the worker's address is published in the modex
 * under BTL_UCX_MODEX_KEY, and add_procs creates one UCP endpoint per peer from it. UCX
 * decides which transports reach a peer (a peer it cannot reach gets no endpoint).
 *
 * Active messages, not tag matching: crmpi's PML does MPI matching itself, and a BTL only
 * hands each fragment to the callback of its tag. One AM id per crmpi tag is exactly that
 * dispatch; tag matching would run UCP's matching engine (expected and unexpected queues)
 * to match everything with a full mask, and still need the sender's rank in the tag.
 *
 * Who may send (btl-adapters/btl_auth.h): a worker takes active messages from anyone who
 * has its address, and UCX's tcp transport accepts connections from any process of the node
 * (it listens on a TCP port), so without more any local user could have fragments delivered
 * to the PML. Each module derives its own key from the job's key and publishes a random
 * nonce with its worker's address, new with every module; in add_procs a sender computes,
 * for each peer, a 16-byte token (an HMAC under the module key over both ranks, the jobid
 * and the peer's nonce) and puts it in the AM header of every fragment, and the receiver
 * computes the token it expects from each sender. The AM handler checks the header's
 * length, the sender rank and the token (in constant time) before it touches the sender's
 * sequence number or early list; a fragment that fails is dropped, and a line is logged the
 * first time per claimed sender. The token is a bearer token, not a MAC of the fragment: it
 * keeps out whoever lacks the key (another user of the node, a rank of another run, or one
 * replaying a token made for a module from before a checkpoint), not whoever can read the
 * ranks' traffic, which on a node takes root (an unprivileged user cannot capture loopback
 * packets). A MAC of every fragment would also keep out that reader, but hashes every byte
 * sent and received: per fragment, more than the token's compare by the cost btl_auth.h
 * gives, which over shared memory is a large part of a small message's latency.
 *
 * Transports: UCX's own selection, restricted by btl_ucx_tls when set (it replaces
 * UCX_TLS, which is read from the environment otherwise). The parameter exists because a
 * restarted rank keeps the environment of its image (docs/design.md, "Restart"): only MCA
 * parameters given to ompi-restart reach it, so only a parameter can move a snapshot taken
 * over UCX's tcp onto its shared memory; btl_ucx_net_devices replaces UCX_NET_DEVICES for
 * the same reason (and lets tests keep to the loopback interface). A list that names a transport
 * UCX does not have here fails init with one line that says which ones it has (UCX itself would
 * only warn and go on without it); UCX's own log lines go to btl_base_verbose 20 instead of stderr.
 *
 * Restarted ranks: UCX's shared-memory transports (posix, sysv, cma) identify a peer by the
 * pid it has in its own eyes (getpid()) and read /proc/<pid>/stat to watch it (1.13 does so
 * for every endpoint, uct_ep_keepalive_init; cma reads its memory by that pid). A rank's pid
 * is its own pid namespace's, which at launch is its agent's pid on the node (an ancestor
 * that lives as long as the rank), but CRIU restores the namespace's pid only, so in a
 * restored rank /proc/<pid> names a process gone or another one, and UCX's endpoints to
 * peers over shared memory fail ("Endpoint timeout"). A rank whose getpid() names neither
 * itself nor an ancestor in /proc therefore runs UCX without its shared memory: the
 * transport list loses those names, or gets "^sm" (UCX's choice), and a list of shared
 * memory only fails init with one line that says what to use instead (btl_ucx_tls=tcp,
 * or crmpi's own sm BTL, whose segments do not depend on pids).
 *
 * Order (btl.h: whole, once, in order). Every fragment carries a per-peer sequence number in
 * its AM header, and the receiver delivers in sequence, copying a fragment that arrives
 * ahead of its turn until the ones before it came; UCP does not promise the order of active
 * messages across lanes and protocols. Every send but a placed one ("Placement") asks for
 * UCP's eager protocol (UCP_AM_SEND_FLAG_EAGER): a fragment reaches the handler whole, with
 * its data, during the receiver's progress. Rendezvous would add a round trip that the PML
 * already makes above the eager limit, and its data would arrive after later eager
 * fragments.
 *
 * Placement (btl.h; btl_ucx_recv_place, off until measured against the copy): towards a rank
 * that publishes that it takes them (takes_placed in the modex), a fragment of a tag with a
 * placer, whose payload is at least CRMPI_BTL_PLACE_MIN, goes by UCP's rendezvous
 * (UCP_AM_SEND_FLAG_RNDV): its header travels in the AM header after the wire (hdr_len), and
 * the handler gets a descriptor of the payload instead of its bytes. The handler keeps the
 * descriptor (UCS_INPROGRESS), held like an early fragment when it is ahead of its turn.
 * When its turn comes, the module's progress, after the worker's, asks the placer and calls
 * ucp_am_recv_data_nbx into its iov (UCX's iov datatype), or into a malloc'ed buffer for a
 * discarded tail (then copied) or a declined fragment (delivered whole with its header);
 * the sender's later fragments wait behind it, so the PML sees one fragment at a time per
 * peer, and the drain's wait for rendezvous receives covers the payload. Without rendezvous
 * lanes ("Progress") UCX moves such a payload through its active-message lanes, into the
 * posted buffer. A rendezvous send is done only when its receiver took the payload, so
 * finalize progresses until every send completed (bounded by btl_ucx_finalize_timeout)
 * before it flushes; it gives back the descriptors it still holds. Ranks may differ.
 *
 * Sizes: fragments up to btl_ucx_max_send_size (256 KiB); UCX cuts them into its
 * transports' segments and joins them again (UCP_AM_FLAG_WHOLE_MSG). The eager limit
 * (64 KiB) is the PML's. At most btl_ucx_max_sends sends are in flight per rank; beyond
 * that, send answers CRMPI_ERR_RESOURCE_BUSY until completions come with progress.
 *
 * Progress: no rendezvous lanes. UCP gives every endpoint lanes for rendezvous (rma_bw)
 * besides its active-message lane, and progresses the interfaces of all of them in every
 * ucp_worker_progress. On a node its choice for them is tcp, because cma refuses peers in
 * another pid namespace, which every rank is; tcp's progress is an epoll_wait, a system
 * call in every turn of crmpi's progress loop (3.4 us one-way for 1 byte, against 0.84 us
 * without). This BTL sends eager only ("Order"), so it never uses those lanes: the module
 * sets UCX's MAX_RNDV_LANES to 0 unless UCX_MAX_RNDV_LANES is set.
 *
 * Selection: exclusivity 4096, shared with ofi (below self and sm, above tcp); among the two
 * btl_ucx_priority decides. Like ofi, the component offers itself only when the btl list
 * names it: creating a UCP context costs every MPI_Init and every checkpoint.
 *
 * The library (btl_ucx_lib.c): libucp is loaded with dlopen at the first init, so a job that
 * does not use ucx loads nothing of UCX (libucs's constructor would otherwise run in every
 * MPI program). It is never unloaded: libucm patches libc's mmap family in place (its
 * "bistro" hooks) for UCX's registration cache, and those patches would jump into unmapped
 * code after a dlclose. Before loading, UCX_HANDLE_ERRORS=none is set unless the user set
 * it: libucs's constructor would otherwise take over SIGSEGV, SIGBUS, SIGILL and SIGFPE to
 * print backtraces, for as long as the process lives; UCX_DEBUG_SIGNO=0 likewise keeps it
 * from taking SIGHUP.
 *
 * Checkpoint/restart: not CKPT_FRIENDLY. While the module lives, UCX holds sockets (tcp's
 * listener and connections), an epoll fd and an eventfd, shared-memory segments (posix,
 * sysv) and one thread, libucs's async thread, which UCX starts for every worker (the
 * worker registers the tcp listener, the shared-memory transports' signal sockets and its
 * timers with it; no UCX option turns it off: this is the thread that remains, and
 * finalize ends it). Finalize (also how the BML releases the module before a dump) flushes
 * the worker, so that the tail of every fragment still in UCX's buffers reaches its peer,
 * closes every endpoint the same way (UCP's flush mode), destroys the worker and the
 * context: the process is back to the fds, threads and shared mappings it had before init.
 * Both waits progress the worker and are bounded by btl_ucx_finalize_timeout (10 s), for a
 * peer that no longer progresses (it died, or the tail could never be taken): what is left
 * then is dropped, and said in one line. The library's own mappings stay (files, dumped by
 * path like libc's), and so does its global state in plain memory; a restart maps the same
 * libucp (docs/design.md: restart nodes have the same software image). After the dump init
 * runs again: a new context, worker and address in a new modex.
 *
 * Threading: as btl.h; the worker is created UCS_THREAD_MODE_SINGLE (every slot is called
 * with the library lock held). Receive callbacks run inside ucp_worker_progress, never on
 * UCX's async thread, and may call send; progress guards itself against re-entrance.
 */
#ifndef CRMPI_BTL_UCX_H
#define CRMPI_BTL_UCX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>

#include "btl.h"
#include "btl_auth.h"

/* Shared with ofi: between sm (32768) and tcp (1024). */
#define BTL_UCX_EXCLUSIVITY 4096u
/* The modex key under which each rank publishes its worker's address. */
#define BTL_UCX_MODEX_KEY "btl.ucx"
/* "CRUX": the first four bytes of the modex blob. */
#define BTL_UCX_MAGIC 0x43525558u
/* Bumped whenever the modex blob or the AM header change meaning (2: the nonce in the
 * blob, the token in the header; 3: placed fragments, "Placement"). */
#define BTL_UCX_VERSION 3u
/* Largest worker address accepted from a peer's modex. */
#define BTL_UCX_ADDR_MAX 65536
/* Room for the first message UCX logs while the context starts (the reason it failed). */
#define BTL_UCX_LOG_MAX 512

/* The UCP AM header of every fragment (its AM id is the crmpi tag); a placed fragment's
 * header of hdr_len bytes follows it in the AM header ("Placement"). */
typedef struct btl_ucx_wire {
    uint32_t sender_rank; /* in MPI_COMM_WORLD: an AM carries no source of its own */
    uint32_t seq;         /* per (sender, receiver), from 0: the delivery order */
    uint32_t hdr_len;     /* 0: the AM's data is the whole fragment; else a placed fragment:
                           * this many header bytes follow, the data is its payload */
    uint32_t reserved;    /* zero */
    uint8_t token[CRMPI_BTL_AUTH_TOKEN_LEN]; /* proves the job's key ("Who may send") */
} btl_ucx_wire_t;

/* Largest header of a placed fragment (its AM header is the wire and this). */
#define BTL_UCX_PLACE_HDR_MAX 128

/* The modex blob: this, then addr_len bytes of the worker's address. */
typedef struct btl_ucx_modex {
    uint32_t magic;                          /* BTL_UCX_MAGIC */
    uint16_t version;                        /* BTL_UCX_VERSION */
    uint8_t takes_placed;                    /* 1: send it large payloads by rendezvous */
    uint8_t reserved;                        /* zero */
    uint32_t addr_len;                       /* bytes of address that follow */
    uint8_t nonce[CRMPI_BTL_AUTH_NONCE_LEN]; /* the module's: covered by tokens to it */
} btl_ucx_modex_t;

/* The functions of libucp (and the libucs it pulls in) this BTL calls, looked up at load. */
typedef struct btl_ucx_lib {
    void *handle; /* from dlopen; never closed (btl_ucx.h, "The library") */
    void (*get_version)(unsigned *major, unsigned *minor, unsigned *release);
    ucs_status_t (*config_read)(const char *env_prefix, const char *filename,
                                ucp_config_t **config);
    ucs_status_t (*config_modify)(ucp_config_t *config, const char *name, const char *value);
    void (*config_release)(ucp_config_t *config);
    ucs_status_t (*init_version)(unsigned api_major, unsigned api_minor, const ucp_params_t *params,
                                 const ucp_config_t *config, ucp_context_h *context);
    void (*cleanup)(ucp_context_h context);
    ucs_status_t (*worker_create)(ucp_context_h context, const ucp_worker_params_t *params,
                                  ucp_worker_h *worker);
    void (*worker_destroy)(ucp_worker_h worker);
    ucs_status_t (*worker_get_address)(ucp_worker_h worker, ucp_address_t **address, size_t *len);
    void (*worker_release_address)(ucp_worker_h worker, ucp_address_t *address);
    unsigned (*worker_progress)(ucp_worker_h worker);
    ucs_status_t (*worker_set_am_recv_handler)(ucp_worker_h worker,
                                               const ucp_am_handler_param_t *param);
    ucs_status_ptr_t (*worker_flush_nbx)(ucp_worker_h worker, const ucp_request_param_t *param);
    ucs_status_t (*ep_create)(ucp_worker_h worker, const ucp_ep_params_t *params, ucp_ep_h *ep);
    ucs_status_ptr_t (*ep_close_nbx)(ucp_ep_h ep, const ucp_request_param_t *param);
    ucs_status_ptr_t (*am_send_nbx)(ucp_ep_h ep, unsigned id, const void *header,
                                    size_t header_length, const void *buffer, size_t count,
                                    const ucp_request_param_t *param);
    ucs_status_ptr_t (*am_recv_data_nbx)(ucp_worker_h worker, void *data_desc, void *buffer,
                                         size_t count, const ucp_request_param_t *param);
    void (*am_data_release)(ucp_worker_h worker, void *data);
    ucs_status_t (*request_check_status)(void *request);
    void (*request_free)(void *request);
    const char *(*status_string)(ucs_status_t status);
    void (*log_push_handler)(ucs_log_func_t handler);
} btl_ucx_lib_t;

/* One send in flight: the AM header and the fragment, until UCP's completion frees it. */
typedef struct btl_ucx_send {
    struct btl_ucx_module *module; /* the owner, for the completion */
    uint32_t peer_rank;            /* the destination, for messages */
    size_t len;                    /* bytes at data */
    btl_ucx_wire_t wire;           /* the AM header, valid until completion; a placed
                                    * fragment's AM header goes on into data */
    char data[];                   /* the fragment: hdr, then the packed payload */
} btl_ucx_send_t;

/* A fragment that arrived before its turn: copied (UCX's buffer is gone after the handler),
 * or, a placed one, its header copied and its rendezvous descriptor kept. */
typedef struct btl_ucx_early {
    uint32_t seq;               /* its place in the sender's stream */
    uint8_t tag;                /* its callback */
    size_t len;                 /* bytes at data */
    void *desc;                 /* a placed fragment's rendezvous descriptor, or NULL */
    size_t payload_len;         /* desc: bytes of payload it describes */
    struct btl_ucx_early *next; /* the sender's next early fragment, by seq */
    char data[];                /* the fragment (desc: its header) */
} btl_ucx_early_t;

/* A placed fragment whose turn has come: its payload is received by rendezvous into the
 * placer's iov, or into a buffer of ours ("Placement"). At most one per sender. */
typedef struct btl_ucx_payload {
    struct btl_ucx_module *module; /* the owner, for the receive's completion */
    void *desc;                    /* the rendezvous descriptor; NULL once the receive started */
    uint8_t tag;                   /* the fragment's crmpi tag */
    bool placing;                  /* the placer took it: placed() follows, once */
    crmpi_btl_place_t place;       /* the placer's answer */
    ucp_dt_iov_t iov[CRMPI_BTL_PLACE_IOV_MAX]; /* the same, as UCX takes it */
    char *bounce;       /* NULL: received into iov; else malloc'ed: the header, then the
                         * payload (declined: delivered whole), or the payload alone
                         * (copied into place.iov) */
    size_t hdr_len;     /* bytes of header (at bounce when declined) */
    size_t payload_len; /* bytes of payload */
    char hdr[BTL_UCX_PLACE_HDR_MAX]; /* the fragment's header, until the receive starts */
} btl_ucx_payload_t;

/* What this rank knows of one sender: the token its fragments carry, and their order. */
typedef struct btl_ucx_peer {
    uint8_t token[CRMPI_BTL_AUTH_TOKEN_LEN]; /* expected in its fragments (add_procs) */
    bool known;                              /* token is set: add_procs named the rank */
    bool receiving;                          /* payload's turn came: the stream waits for it */
    uint32_t recv_seq;                       /* the sequence number to deliver next */
    btl_ucx_early_t *early;                  /* fragments that arrived before their turn, by seq */
    btl_ucx_payload_t payload;               /* while receiving */
} btl_ucx_peer_t;

typedef struct btl_ucx_module btl_ucx_module_t;

/* The context an AM handler of one tag is registered with. */
typedef struct btl_ucx_am_ctx {
    btl_ucx_module_t *module; /* the owner */
    uint8_t tag;              /* the crmpi tag, also the AM id */
} btl_ucx_am_ctx_t;

/* This rank's way to one peer. */
struct crmpi_btl_endpoint {
    btl_ucx_module_t *module; /* the owner */
    uint32_t peer_rank;       /* in MPI_COMM_WORLD */
    ucp_ep_h ucp_ep;          /* UCP's endpoint to the peer's worker */
    uint32_t send_seq;        /* the sequence number of the next fragment sent to it */
    bool failed;              /* a send to it failed (logged); later sends fail at once */
    bool deleted;             /* del_procs: the BML no longer uses it (closed at finalize) */
    bool place;               /* large payloads to it go by rendezvous ("Placement") */
    uint8_t token[CRMPI_BTL_AUTH_TOKEN_LEN]; /* in every fragment to it (its nonce's) */
};

/* What init read from the parameters (btl_ucx_info.c). */
typedef struct btl_ucx_settings {
    const char *library;         /* btl_ucx_library: what dlopen loads */
    const char *tls;             /* btl_ucx_tls: "" keeps UCX_TLS or UCX's default */
    const char *net_devices;     /* btl_ucx_net_devices: "" keeps UCX_NET_DEVICES or all */
    bool required;               /* the btl list names ucx: failing to start is an error */
    size_t max_send_size;        /* btl_ucx_max_send_size */
    size_t eager_limit;          /* btl_ucx_eager_limit, for the PML */
    size_t max_sends;            /* btl_ucx_max_sends: sends in flight before RESOURCE_BUSY */
    uint32_t priority;           /* btl_ucx_priority, among modules of its exclusivity */
    int64_t finalize_timeout_ms; /* btl_ucx_finalize_timeout: each of finalize's waits */
    bool recv_place;             /* btl_ucx_recv_place: take large payloads by rendezvous */
} btl_ucx_settings_t;

struct btl_ucx_module {
    crmpi_btl_module_t super;                   /* the slots; first */
    uint32_t my_rank;                           /* this rank, in MPI_COMM_WORLD */
    uint32_t job_size;                          /* ranks in MPI_COMM_WORLD */
    const btl_ucx_lib_t *lib;                   /* libucp, loaded once per process */
    ucp_context_h context;                      /* UCP's context (transports chosen) */
    ucp_worker_h worker;                        /* the one worker, progressed by us */
    ucp_address_t *addr;                        /* the worker's address, published */
    size_t addr_len;                            /* bytes of addr */
    size_t max_sends;                           /* sends in flight before RESOURCE_BUSY */
    int64_t finalize_timeout_ms;                /* each of finalize's waits */
    size_t num_sending;                         /* sends UCP has not completed yet */
    crmpi_btl_auth_t auth;                      /* module key and nonce; refusals said */
    crmpi_btl_endpoint_t **endpoints;           /* by peer rank; NULL: not added */
    btl_ucx_peer_t *peers;                      /* by sender rank: delivery order */
    btl_ucx_am_ctx_t am_ctx[CRMPI_BTL_TAG_MAX]; /* each tag's handler context */
    size_t num_live;                            /* endpoints added and not deleted */
    uint64_t num_early;                         /* fragments that arrived before their turn */
    int delivered;                              /* fragments delivered or sent in this progress */
    bool in_progress;                           /* progress is running: no re-entrance */
    bool finalizing;                            /* finalize: arrivals are dropped */
    bool recv_place;                            /* takes placed fragments (btl_ucx_recv_place) */
    size_t num_to_start;                        /* payloads whose turn came, not yet asked for */
    uint64_t num_payloads;                      /* placed fragments received */
    uint64_t placed_bytes;                      /* payload bytes received into placements */
    uint64_t place_copied_bytes;                /* ... received into a buffer, then copied */
};

/* The library (btl_ucx_lib.c) */

/**
 * Load libucp (once per process; later calls return the same) and look up its functions.
 * @param loud  log a failure as an error; else at btl_base_verbose 10
 * @return CRMPI_OK with *lib_out; CRMPI_ERR_NOT_SUPPORTED (not found, not UCP: logged)
 */
int btl_ucx_lib_open(const char *name, bool loud, const btl_ucx_lib_t **lib_out);

/** Start collecting UCX's log messages (the first warning or error is kept). */
void btl_ucx_lib_log_begin(void);
/** Stop collecting; the first message UCX logged since btl_ucx_lib_log_begin, or NULL. */
const char *btl_ucx_lib_log_end(void);

/* The module (btl_ucx_module.c) */

/**
 * Create the module: context (transports per settings->tls), worker, AM handlers, address.
 * @return CRMPI_OK; CRMPI_ERR_BAD_PARAM (the transport list names what UCX does not have:
 *         logged); CRMPI_ERR_NOT_SUPPORTED (UCX found no usable transport: logged when
 *         settings->required, else at verbose 10); other errors (logged)
 */
int btl_ucx_module_create(const crmpi_rte_job_info_t *job, const btl_ucx_settings_t *settings,
                          const btl_ucx_lib_t *lib, btl_ucx_module_t **module_out);

/* Endpoints and fragments (btl_ucx_endpoint.c) */

/** Encode this module's worker address for crmpi_rte_modex_publish (malloc'ed blob). */
int btl_ucx_modex_pack(const btl_ucx_module_t *module, void **blob_out, size_t *len_out);
/** Decode a peer's blob; CRMPI_ERR_PROTO (not logged) when malformed or of another version
 *  (one without a nonce); *addr_out and *nonce_out point into `blob`; *takes_placed_out
 *  (NULL: not wanted) says whether the peer takes placed fragments. */
int btl_ucx_modex_unpack(const void *blob, size_t len, const void **addr_out, size_t *addr_len_out,
                         const uint8_t **nonce_out, bool *takes_placed_out);

/** The module's send slot (btl.h). */
int btl_ucx_endpoint_send(crmpi_btl_module_t *module, crmpi_btl_endpoint_t *ep, uint8_t tag,
                          const void *hdr, size_t hdr_len, crmpi_convertor_t *payload,
                          size_t payload_len);

/** UCP's AM handler of every tag (ucp_am_recv_callback_t); arg is a btl_ucx_am_ctx_t.
 *  Refuses what fails the checks of btl_ucx.h, "Who may send", then btl_ucx_endpoint_recv. */
ucs_status_t btl_ucx_endpoint_am_recv(void *arg, const void *header, size_t header_length,
                                      void *data, size_t length, const ucp_am_recv_param_t *param);

/**
 * One fragment from `sender_rank` with sequence number `seq`: deliver it, and every held one
 * that follows it without a gap, or hold a copy when it is ahead of its turn.
 * @return fragments delivered
 */
int btl_ucx_endpoint_recv(btl_ucx_module_t *module, uint32_t sender_rank, uint32_t seq, uint8_t tag,
                          const void *data, size_t len);

/** Free the held fragments of every sender (finalize). */
void btl_ucx_endpoint_early_free(btl_ucx_module_t *module);

/** Ask UCX for the payloads whose turn came in the handlers (placer first); progress calls
 *  this after the worker's. @return fragments delivered by receives that completed at once */
int btl_ucx_endpoint_payload_start(btl_ucx_module_t *module);
/** Finalize, before the worker goes: give every kept rendezvous descriptor back to UCX, and
 *  tell the placer of a placement not started that it never will be. */
void btl_ucx_endpoint_payload_abort(btl_ucx_module_t *module);

#endif /* CRMPI_BTL_UCX_H */
