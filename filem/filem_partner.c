/*
 * filem_partner.c: the partner level's transfer of one rank's images (filem_partner.h).
 *
 * Wire protocol, one copy per TCP connection; every integer is big-endian:
 *
 *   server -> client  hello:  u32 magic "CRPP", u32 version, nonce[32] (getrandom, fresh
 *                             per connection)
 *   client -> server  u32 header_len, header, mac[32]
 *                     header: u32 magic, u32 version, u32 seq, i32 rank, u32 name_len,
 *                             name (the jobdir's basename, "<jobid>.ckpt"), u32 num_keep,
 *                             u32 keep[num_keep]
 *                     mac = HMAC-SHA256(key, "crmpi partner copy" || nonce || header)
 *   server -> client  reply (see below): OK, or a refusal after which it closes
 *   client -> server  per file: u32 1, u32 path_len, path (relative), u64 size, size bytes,
 *                     sha256[32] of those bytes
 *                     then u32 2, end_mac[32] = HMAC-SHA256(key, "crmpi partner copy end" ||
 *                     nonce || header || per file: u32 path_len, path, u64 size, sha256)
 *   server -> client  reply: u32 status (FILEM_PARTNER_STATUS_*), u32 len, message[len]
 *
 * Statuses: 0 OK, 1 refused (a MAC does not prove the key), 2 bad request, 3 disk full,
 * 4 the partner's I/O failed. The server checks every field before it allocates or creates
 * anything: a header of at most FILEM_PARTNER_HEADER_MAX bytes, a name of one component
 * ending in ".ckpt", seq >= 1, rank >= 0, at most 65536 sequences kept, paths of 1..4095
 * bytes without a leading '/' nor an empty, "." or ".." component, at most 100000 files;
 * a message is at most 1024 bytes. It serves one connection at a time, each with 60 s
 * timeouts on its reads and writes.
 *
 * The header's MAC proves the key before anything is written; the nonce makes a recorded
 * connection useless on another. The end MAC covers the list of files, whose contents the
 * server checks against their sha256 while writing, so nothing else on the connection can
 * be substituted. A failing server answers at once, then reads what the client still
 * sends until it closes (so that the answer is not lost to a reset); the client looks for an
 * early answer between chunks.
 *
 * The server stores into <local seq dir>/rank.<r>.partial/, fsyncs every file and
 * directory, replaces rank.<r> by it, fsyncs the sequence's directory, then removes the
 * rank's copies of the sequences not kept, and only then answers OK. It remembers the ranks
 * it stored, so that crmpi_filem_partner_prune can remove their copies after a commit
 * without a copy of theirs coming first.
 */
#include "config.h"

#include "filem_partner.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "filem.h"
#include "filem_fs.h"
#include "log.h"
#include "random.h"
#include "snapshot_int.h"

#define FILEM_PARTNER_MAGIC       0x43525050u /* "CRPP" */
#define FILEM_PARTNER_VERSION     1u
#define FILEM_PARTNER_NONCE_LEN   32
#define FILEM_PARTNER_MAC_LEN     SHA256_DIGEST_SIZE
#define FILEM_PARTNER_NAME_MAX    255
#define FILEM_PARTNER_PATH_MAX    4095
#define FILEM_PARTNER_MAX_FILES   100000
#define FILEM_PARTNER_MAX_KEEP    65536
#define FILEM_PARTNER_HEADER_MAX  (24 + FILEM_PARTNER_NAME_MAX + 4 * FILEM_PARTNER_MAX_KEEP)
#define FILEM_PARTNER_MESSAGE_MAX 1024
#define FILEM_PARTNER_CHUNK       (1u << 20)
/* A silent client holds the server (and every other copy to this node) this long at most. */
#define FILEM_PARTNER_SERVER_TIMEOUT_S 60
/* The client waits longer: the server fsyncs as it writes. */
#define FILEM_PARTNER_CLIENT_TIMEOUT_S 300
/* How long a failing server keeps reading what the client still sends. */
#define FILEM_PARTNER_DRAIN_MS 5000

enum { FILEM_PARTNER_RECORD_FILE = 1, FILEM_PARTNER_RECORD_END = 2 };

enum {
    FILEM_PARTNER_STATUS_OK = 0,
    FILEM_PARTNER_STATUS_REFUSED = 1, /* the MAC does not prove the key */
    FILEM_PARTNER_STATUS_BAD = 2,     /* malformed or unacceptable request */
    FILEM_PARTNER_STATUS_NOSPACE = 3, /* the partner's disk is full */
    FILEM_PARTNER_STATUS_IO = 4,      /* the partner could not store the copy */
};

static const char filem_partner_label[] = "crmpi partner copy";
static const char filem_partner_end_label[] = "crmpi partner copy end";

struct crmpi_filem_partner_server {
    int listen_fd;
    int stop_fd; /* eventfd: written by stop */
    pthread_t thread;
    pthread_mutex_t lock; /* guards conn_fd and stopping */
    int conn_fd;          /* the connection being served, -1 when none */
    bool stopping;
    /* Held while a copy goes into place and the rank's others go, and while
     * crmpi_filem_partner_prune removes copies: one of them at a time. Guards the three
     * fields below. */
    pthread_mutex_t store_lock;
    unsigned receiving; /* the sequence of the copy being received (0: none) */
    int *ranks;         /* the ranks whose copies this server stored, num_ranks of them */
    size_t num_ranks;
    uint8_t *key;
    size_t key_len;
    uint8_t *buf; /* FILEM_PARTNER_CHUNK bytes, the thread's */
};

/* One connection on the server's side. */
typedef struct filem_partner_conn {
    crmpi_filem_partner_server_t *srv;
    int fd;
    char peer[64];
    uint8_t nonce[FILEM_PARTNER_NONCE_LEN];
    struct hmac_sha256_ctx end_mac; /* the transcript the end MAC covers */
    char name[FILEM_PARTNER_NAME_MAX + 1];
    unsigned seq;
    int rank;
    uint32_t *keep;
    uint32_t num_keep;
    char *seq_dir;     /* this node's local level directory of the sequence */
    char *partial_dir; /* <seq_dir>/rank.<r>.partial, once created */
    char **dirs;       /* directories created in partial_dir, to fsync */
    size_t num_dirs;
    uint32_t status; /* the first failure, answered to the client */
    char message[FILEM_PARTNER_MESSAGE_MAX];
} filem_partner_conn_t;

/* One copy on the client's side. */
typedef struct filem_partner_client {
    const char *addr;
    int fd;
    char *why;
    size_t why_len;
    uint8_t *buf;
} filem_partner_client_t;

/* ---- encoding and I/O ------------------------------------------------------------------- */

static void filem_partner_put32(uint8_t *p, uint32_t value)
{
    p[0] = (uint8_t)(value >> 24);
    p[1] = (uint8_t)(value >> 16);
    p[2] = (uint8_t)(value >> 8);
    p[3] = (uint8_t)value;
}

static uint32_t filem_partner_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void filem_partner_put64(uint8_t *p, uint64_t value)
{
    filem_partner_put32(p, (uint32_t)(value >> 32));
    filem_partner_put32(p + 4, (uint32_t)value);
}

static uint64_t filem_partner_get64(const uint8_t *p)
{
    return (uint64_t)filem_partner_get32(p) << 32 | filem_partner_get32(p + 4);
}

/* Read exactly `len` bytes. @return CRMPI_OK, CRMPI_ERR_PEER_GONE (closed),
 * CRMPI_ERR_TIMEOUT, CRMPI_ERR_IO (errno says why) */
static int filem_partner_read(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;

    while (len) {
        ssize_t got = recv(fd, p, len, 0);

        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? CRMPI_ERR_TIMEOUT : CRMPI_ERR_IO;
        if (got == 0)
            return CRMPI_ERR_PEER_GONE;
        p += got;
        len -= (size_t)got;
    }
    return CRMPI_OK;
}

/* Write all of `buf`; never raises SIGPIPE. Same statuses as filem_partner_read. */
static int filem_partner_write(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    while (len) {
        ssize_t put = send(fd, p, len, MSG_NOSIGNAL);

        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return CRMPI_ERR_TIMEOUT;
            return errno == EPIPE || errno == ECONNRESET ? CRMPI_ERR_PEER_GONE : CRMPI_ERR_IO;
        }
        p += put;
        len -= (size_t)put;
    }
    return CRMPI_OK;
}

static void filem_partner_timeouts_set(int fd, int seconds)
{
    struct timeval tv = {.tv_sec = seconds};

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* A snapshot's directory name as it may appear on the wire: "<something>.ckpt", one
 * component. */
static bool filem_partner_name_is_valid(const char *name, size_t len)
{
    static const char suffix[] = ".ckpt";

    return len > sizeof(suffix) - 1 && len <= FILEM_PARTNER_NAME_MAX && strnlen(name, len) == len &&
           !memchr(name, '/', len) &&
           memcmp(name + len - (sizeof(suffix) - 1), suffix, sizeof(suffix) - 1) == 0;
}

static void filem_partner_header_mac(const uint8_t *key, size_t key_len, const uint8_t *nonce,
                                     const uint8_t *header, size_t header_len, uint8_t *mac_out)
{
    struct hmac_sha256_ctx ctx;

    hmac_sha256_set_key(&ctx, key_len, key);
    hmac_sha256_update(&ctx, sizeof(filem_partner_label) - 1, (const uint8_t *)filem_partner_label);
    hmac_sha256_update(&ctx, FILEM_PARTNER_NONCE_LEN, nonce);
    hmac_sha256_update(&ctx, header_len, header);
    hmac_sha256_digest(&ctx, FILEM_PARTNER_MAC_LEN, mac_out);
}

static void filem_partner_end_mac_start(struct hmac_sha256_ctx *ctx, const uint8_t *key,
                                        size_t key_len, const uint8_t *nonce, const uint8_t *header,
                                        size_t header_len)
{
    hmac_sha256_set_key(ctx, key_len, key);
    hmac_sha256_update(ctx, sizeof(filem_partner_end_label) - 1,
                       (const uint8_t *)filem_partner_end_label);
    hmac_sha256_update(ctx, FILEM_PARTNER_NONCE_LEN, nonce);
    hmac_sha256_update(ctx, header_len, header);
}

static void filem_partner_end_mac_file(struct hmac_sha256_ctx *ctx, const char *path, uint64_t size,
                                       const uint8_t *sha256)
{
    uint8_t fields[12];
    size_t len = strlen(path);

    filem_partner_put32(fields, (uint32_t)len);
    filem_partner_put64(fields + 4, size);
    hmac_sha256_update(ctx, 4, fields);
    hmac_sha256_update(ctx, len, (const uint8_t *)path);
    hmac_sha256_update(ctx, 8, fields + 4);
    hmac_sha256_update(ctx, SHA256_DIGEST_SIZE, sha256);
}

/* ---- the server: one connection -------------------------------------------------------- */

/* Record the connection's first failure, for the reply, and log it once (unless `logged`:
 * the callee did). @return -1 */
static int filem_partner_fail(filem_partner_conn_t *conn, bool logged, uint32_t status,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int filem_partner_fail(filem_partner_conn_t *conn, bool logged, uint32_t status,
                              const char *fmt, ...)
{
    va_list ap;

    if (conn->status != FILEM_PARTNER_STATUS_OK)
        return -1;
    conn->status = status;
    va_start(ap, fmt);
    vsnprintf(conn->message, sizeof(conn->message), fmt, ap);
    va_end(ap);
    if (!logged)
        crmpi_log_warn("filem:partner: %s a copy from %s: %s",
                       status == FILEM_PARTNER_STATUS_REFUSED || status == FILEM_PARTNER_STATUS_BAD
                           ? "refused"
                           : "could not store",
                       conn->peer, conn->message);
    return -1;
}

/* A read of the connection failed with `rc`, while reading `what`. */
static int filem_partner_fail_read(filem_partner_conn_t *conn, int rc, const char *what)
{
    if (rc == CRMPI_ERR_PEER_GONE)
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO,
                                  "the connection closed before %s", what);
    if (rc == CRMPI_ERR_TIMEOUT)
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO,
                                  "nothing came for %d s (expecting %s)",
                                  FILEM_PARTNER_SERVER_TIMEOUT_S, what);
    return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO, "reading %s: %s", what,
                              strerror(errno));
}

/* errno of a file-system call -> the connection's failure, naming `path`. */
static int filem_partner_fail_fs(filem_partner_conn_t *conn, const char *call, const char *path)
{
    int err = errno;

    if (err == ENOSPC || err == EDQUOT)
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_NOSPACE,
                                  "the disk is full (%s %s: %s)", call, path, strerror(err));
    return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO, "%s %s: %s", call, path,
                              strerror(err));
}

static int filem_partner_reply(int fd, uint32_t status, const char *message)
{
    uint8_t head[8];
    size_t len = strnlen(message, FILEM_PARTNER_MESSAGE_MAX);
    int rc;

    filem_partner_put32(head, status);
    filem_partner_put32(head + 4, (uint32_t)len);
    rc = filem_partner_write(fd, head, sizeof(head));
    return rc == CRMPI_OK ? filem_partner_write(fd, message, len) : rc;
}

/* Read the header and its MAC; check the MAC, then the fields. */
static int filem_partner_header_recv(filem_partner_conn_t *conn)
{
    crmpi_filem_partner_server_t *srv = conn->srv;
    uint8_t len_field[4], mac[FILEM_PARTNER_MAC_LEN], expected[FILEM_PARTNER_MAC_LEN];
    uint8_t *header;
    uint32_t len, name_len, num_keep;
    int32_t rank;
    int rc;

    if ((rc = filem_partner_read(conn->fd, len_field, sizeof(len_field))) != CRMPI_OK)
        return filem_partner_fail_read(conn, rc, "the header");
    len = filem_partner_get32(len_field);
    if (len < 24 || len > FILEM_PARTNER_HEADER_MAX)
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_BAD, "a header of %u bytes",
                                  len);
    if (!(header = malloc(len)))
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO, "out of memory");
    if ((rc = filem_partner_read(conn->fd, header, len)) != CRMPI_OK ||
        (rc = filem_partner_read(conn->fd, mac, sizeof(mac))) != CRMPI_OK) {
        free(header);
        return filem_partner_fail_read(conn, rc, "the header");
    }
    /* The MAC first, in constant time: nothing the client claims means anything before. */
    filem_partner_header_mac(srv->key, srv->key_len, conn->nonce, header, len, expected);
    if (!nettle_memeql_sec(mac, expected, sizeof(mac))) {
        free(header);
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_REFUSED,
                                  "bad key (the copy does not prove the job's partner key)");
    }
    rc = -1;
    name_len = filem_partner_get32(header + 16);
    rank = (int32_t)filem_partner_get32(header + 12);
    if (filem_partner_get32(header) != FILEM_PARTNER_MAGIC ||
        filem_partner_get32(header + 4) != FILEM_PARTNER_VERSION)
        filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_BAD,
                           "not a partner copy of version %u", FILEM_PARTNER_VERSION);
    else if (name_len > len - 24 ||
             !filem_partner_name_is_valid((const char *)header + 20, name_len))
        filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_BAD,
                           "the snapshot's name is not one '<jobid>.ckpt' path component");
    else if ((num_keep = filem_partner_get32(header + 20 + name_len)) > FILEM_PARTNER_MAX_KEEP ||
             len != 24 + name_len + 4 * num_keep)
        filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_BAD,
                           "the header's length does not match its fields");
    else if (filem_partner_get32(header + 8) < 1 || rank < 0)
        filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_BAD,
                           "sequence %u of rank %d: sequences start at 1, ranks at 0",
                           filem_partner_get32(header + 8), rank);
    else if (num_keep && !(conn->keep = calloc(num_keep, sizeof(*conn->keep))))
        filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO, "out of memory");
    else
        rc = CRMPI_OK;
    if (rc == CRMPI_OK) {
        conn->seq = filem_partner_get32(header + 8);
        conn->rank = rank;
        memcpy(conn->name, header + 20, name_len);
        conn->name[name_len] = '\0';
        conn->num_keep = num_keep;
        for (uint32_t i = 0; i < num_keep; i++)
            conn->keep[i] = filem_partner_get32(header + 24 + name_len + 4 * i);
        filem_partner_end_mac_start(&conn->end_mac, srv->key, srv->key_len, conn->nonce, header,
                                    len);
    }
    free(header);
    return rc;
}

/* mkdir -p, 0700. */
static int filem_partner_dirs_make(filem_partner_conn_t *conn, char *path)
{
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;

            *p = '\0';
            if (mkdir(path, 0700) != 0 && errno != EEXIST) {
                filem_partner_fail_fs(conn, "mkdir", path);
                *p = saved;
                return -1;
            }
            *p = saved;
            if (!saved)
                return CRMPI_OK;
        }
    }
}

/* Create <seq_dir>/rank.<r>.partial afresh (an earlier attempt may have left one). */
static int filem_partner_partial_create(filem_partner_conn_t *conn)
{
    char *partial;
    int rc;

    rc = crmpi_filem_local_seq_dir(conn->name, conn->seq, &conn->seq_dir);
    if (rc != CRMPI_OK)
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO,
                                  "this node has no local level directory (%s)",
                                  crmpi_strerror(rc));
    if (filem_partner_dirs_make(conn, conn->seq_dir) != CRMPI_OK)
        return -1;
    if (asprintf(&partial, "%s/rank.%d.partial", conn->seq_dir, conn->rank) < 0)
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO, "out of memory");
    crmpi_filem_tree_remove(partial);
    if (mkdir(partial, 0700) != 0) {
        filem_partner_fail_fs(conn, "mkdir", partial);
        free(partial);
        return -1;
    }
    conn->partial_dir = partial;
    return CRMPI_OK;
}

/* Create the directories of `rel`'s path inside partial_dir, remembering them for fsync. */
static int filem_partner_parents_make(filem_partner_conn_t *conn, const char *rel)
{
    for (const char *slash = rel; (slash = strchr(slash, '/')); slash++) {
        char *dir, **grown;

        if (asprintf(&dir, "%s/%.*s", conn->partial_dir, (int)(slash - rel), rel) < 0)
            return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO, "out of memory");
        if (mkdir(dir, 0700) != 0) {
            if (errno != EEXIST) {
                filem_partner_fail_fs(conn, "mkdir", dir);
                free(dir);
                return -1;
            }
            free(dir);
            continue;
        }
        if (!(grown = realloc(conn->dirs, (conn->num_dirs + 1) * sizeof(*grown)))) {
            free(dir);
            return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO, "out of memory");
        }
        conn->dirs = grown;
        conn->dirs[conn->num_dirs++] = dir;
    }
    return CRMPI_OK;
}

/* One file's record after its kind: path, size, bytes, sha256. */
static int filem_partner_file_recv(filem_partner_conn_t *conn)
{
    uint8_t fields[8], digest[SHA256_DIGEST_SIZE], sent[SHA256_DIGEST_SIZE];
    char rel[FILEM_PARTNER_PATH_MAX + 1], *path = NULL;
    struct sha256_ctx sha;
    uint64_t size, left;
    uint32_t len;
    int fd = -1, rc;

    if ((rc = filem_partner_read(conn->fd, fields, 4)) != CRMPI_OK)
        return filem_partner_fail_read(conn, rc, "a file's path");
    len = filem_partner_get32(fields);
    if (len < 1 || len > FILEM_PARTNER_PATH_MAX)
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_BAD,
                                  "a file's path of %u bytes", len);
    if ((rc = filem_partner_read(conn->fd, rel, len)) != CRMPI_OK)
        return filem_partner_fail_read(conn, rc, "a file's path");
    rel[len] = '\0';
    if (strlen(rel) != len || !filem_path_is_safe(rel))
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_BAD,
                                  "'%.200s' is not a relative path without '.' or '..'", rel);
    if ((rc = filem_partner_read(conn->fd, fields, 8)) != CRMPI_OK)
        return filem_partner_fail_read(conn, rc, "a file's size");
    size = filem_partner_get64(fields);
    if (filem_partner_parents_make(conn, rel) != CRMPI_OK)
        return -1;
    if (asprintf(&path, "%s/%s", conn->partial_dir, rel) < 0)
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO, "out of memory");
    /* O_EXCL: a path sent twice is refused rather than overwritten. */
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = filem_partner_fail_fs(conn, "open", path);
        goto out;
    }
    sha256_init(&sha);
    for (left = size; left;) {
        size_t chunk = left < FILEM_PARTNER_CHUNK ? (size_t)left : FILEM_PARTNER_CHUNK;

        if ((rc = filem_partner_read(conn->fd, conn->srv->buf, chunk)) != CRMPI_OK) {
            rc = filem_partner_fail_read(conn, rc, "a file's bytes");
            goto out;
        }
        sha256_update(&sha, chunk, conn->srv->buf);
        for (size_t done = 0; done < chunk;) {
            ssize_t put = write(fd, conn->srv->buf + done, chunk - done);

            if (put < 0 && errno == EINTR)
                continue;
            if (put < 0) {
                rc = filem_partner_fail_fs(conn, "write", path);
                goto out;
            }
            done += (size_t)put;
        }
        left -= chunk;
    }
    sha256_digest(&sha, sizeof(digest), digest);
    if ((rc = filem_partner_read(conn->fd, sent, sizeof(sent))) != CRMPI_OK) {
        rc = filem_partner_fail_read(conn, rc, "a file's sha256");
        goto out;
    }
    if (memcmp(digest, sent, sizeof(digest)) != 0) {
        rc = filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_BAD,
                                "%.200s arrived damaged (its sha256 does not match)", rel);
        goto out;
    }
    filem_partner_end_mac_file(&conn->end_mac, rel, size, digest);
    if (fsync(fd) != 0) {
        rc = filem_partner_fail_fs(conn, "fsync", path);
        goto out;
    }
    rc = CRMPI_OK;
out:
    if (fd >= 0 && close(fd) != 0 && rc == CRMPI_OK)
        rc = filem_partner_fail_fs(conn, "close", path);
    free(path);
    return rc;
}

/* Every file's record, up to the end marker, whose MAC is checked. */
static int filem_partner_files_recv(filem_partner_conn_t *conn)
{
    uint8_t kind[4], mac[FILEM_PARTNER_MAC_LEN], expected[FILEM_PARTNER_MAC_LEN];
    int rc;

    for (unsigned count = 0;; count++) {
        if ((rc = filem_partner_read(conn->fd, kind, sizeof(kind))) != CRMPI_OK)
            return filem_partner_fail_read(conn, rc, "the next file");
        if (filem_partner_get32(kind) == FILEM_PARTNER_RECORD_END)
            break;
        if (filem_partner_get32(kind) != FILEM_PARTNER_RECORD_FILE)
            return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_BAD,
                                      "a record of unknown kind %u", filem_partner_get32(kind));
        if (count >= FILEM_PARTNER_MAX_FILES)
            return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_BAD, "more than %d files",
                                      FILEM_PARTNER_MAX_FILES);
        if (filem_partner_file_recv(conn) != CRMPI_OK)
            return -1;
    }
    if ((rc = filem_partner_read(conn->fd, mac, sizeof(mac))) != CRMPI_OK)
        return filem_partner_fail_read(conn, rc, "the end of the copy");
    hmac_sha256_digest(&conn->end_mac, sizeof(expected), expected);
    if (!nettle_memeql_sec(mac, expected, sizeof(mac)))
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_REFUSED,
                                  "bad key (the list of files does not prove the job's key)");
    return CRMPI_OK;
}

/* Make the copy durable and put it in place of rank.<r>. */
static int filem_partner_commit(filem_partner_conn_t *conn)
{
    char *rank_dir, job_dir[PATH_MAX];
    int rc;

    for (size_t i = 0; i < conn->num_dirs; i++)
        if (crmpi_filem_dir_sync(conn->dirs[i]) != CRMPI_OK)
            return filem_partner_fail(conn, true, FILEM_PARTNER_STATUS_IO,
                                      "cannot sync a directory");
    if (crmpi_filem_dir_sync(conn->partial_dir) != CRMPI_OK)
        return filem_partner_fail(conn, true, FILEM_PARTNER_STATUS_IO, "cannot sync a directory");
    if (crmpi_filem_rank_dir_path(conn->seq_dir, conn->rank, &rank_dir) != CRMPI_OK)
        return filem_partner_fail(conn, false, FILEM_PARTNER_STATUS_IO, "out of memory");
    crmpi_filem_tree_remove(rank_dir);
    if (rename(conn->partial_dir, rank_dir) != 0) {
        rc = filem_partner_fail_fs(conn, "rename to", rank_dir);
        free(rank_dir);
        return rc;
    }
    free(conn->partial_dir);
    conn->partial_dir = NULL;
    /* The sequence's directory may be new as well: its parent learns of it too. */
    snprintf(job_dir, sizeof(job_dir), "%s", conn->seq_dir);
    *strrchr(job_dir, '/') = '\0';
    if (crmpi_filem_dir_sync(conn->seq_dir) != CRMPI_OK ||
        crmpi_filem_dir_sync(job_dir) != CRMPI_OK) {
        crmpi_filem_tree_remove(rank_dir); /* the client is told it is not stored */
        free(rank_dir);
        return filem_partner_fail(conn, true, FILEM_PARTNER_STATUS_IO, "cannot sync a directory");
    }
    free(rank_dir);
    return CRMPI_OK;
}

/* After a failure: read what the client still sends until it closes (it stops when it sees
 * the answer), so that closing does not reset the connection before the answer is read. */
static void filem_partner_drain(filem_partner_conn_t *conn)
{
    struct timespec start, now;

    shutdown(conn->fd, SHUT_WR);
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        struct pollfd pfd = {.fd = conn->fd, .events = POLLIN};
        long waited;
        ssize_t got;

        clock_gettime(CLOCK_MONOTONIC, &now);
        waited = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (waited >= FILEM_PARTNER_DRAIN_MS)
            return;
        if (poll(&pfd, 1, (int)(FILEM_PARTNER_DRAIN_MS - waited)) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        if (!pfd.revents)
            return;
        got = recv(conn->fd, conn->srv->buf, FILEM_PARTNER_CHUNK, MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
            return;
    }
}

/* Remember that this server holds copies of `rank` (store_lock held). Out of memory, it
 * forgets: that rank's copies then go only at its next copy here. */
static void filem_partner_rank_add(crmpi_filem_partner_server_t *srv, int rank)
{
    int *grown;

    for (size_t i = 0; i < srv->num_ranks; i++)
        if (srv->ranks[i] == rank)
            return;
    if (!(grown = realloc(srv->ranks, (srv->num_ranks + 1) * sizeof(*grown))))
        return;
    srv->ranks = grown;
    srv->ranks[srv->num_ranks++] = rank;
}

void crmpi_filem_partner_prune(crmpi_filem_partner_server_t *srv, const char *jobdir,
                               const uint32_t *keep, uint32_t num_keep)
{
    if (!srv)
        return;
    pthread_mutex_lock(&srv->store_lock);
    for (size_t i = 0; i < srv->num_ranks; i++)
        crmpi_filem_local_prune(jobdir, srv->receiving, srv->ranks[i], keep, num_keep);
    pthread_mutex_unlock(&srv->store_lock);
}

static void filem_partner_handle(crmpi_filem_partner_server_t *srv, int fd, const char *peer)
{
    filem_partner_conn_t conn = {.srv = srv, .fd = fd};
    uint8_t hello[8 + FILEM_PARTNER_NONCE_LEN];
    int rc;

    snprintf(conn.peer, sizeof(conn.peer), "%s", peer);
    if (crmpi_random_bytes(conn.nonce, sizeof(conn.nonce)) != CRMPI_OK) {
        crmpi_log_error("filem:partner: getrandom: %s", strerror(errno));
        return;
    }
    filem_partner_put32(hello, FILEM_PARTNER_MAGIC);
    filem_partner_put32(hello + 4, FILEM_PARTNER_VERSION);
    memcpy(hello + 8, conn.nonce, sizeof(conn.nonce));
    if (filem_partner_write(fd, hello, sizeof(hello)) != CRMPI_OK)
        return; /* gone before it asked anything */
    rc = filem_partner_header_recv(&conn);
    if (rc == CRMPI_OK) {
        /* Before anything is written: a prune running now finishes first, and the next
         * one leaves this sequence alone. */
        pthread_mutex_lock(&srv->store_lock);
        srv->receiving = conn.seq;
        pthread_mutex_unlock(&srv->store_lock);
        rc = filem_partner_partial_create(&conn);
    }
    if (rc == CRMPI_OK && filem_partner_reply(fd, FILEM_PARTNER_STATUS_OK, "") != CRMPI_OK)
        rc = filem_partner_fail(&conn, false, FILEM_PARTNER_STATUS_IO,
                                "the connection closed before the files");
    if (rc == CRMPI_OK)
        rc = filem_partner_files_recv(&conn);
    if (rc == CRMPI_OK)
        rc = filem_partner_commit(&conn);
    if (rc == CRMPI_OK) {
        pthread_mutex_lock(&srv->store_lock);
        crmpi_filem_local_prune(conn.name, conn.seq, conn.rank, conn.keep, conn.num_keep);
        filem_partner_rank_add(srv, conn.rank);
        srv->receiving = 0;
        pthread_mutex_unlock(&srv->store_lock);
        filem_partner_reply(fd, FILEM_PARTNER_STATUS_OK, "stored");
    } else {
        if (conn.partial_dir)
            crmpi_filem_tree_remove(conn.partial_dir);
        pthread_mutex_lock(&srv->store_lock);
        srv->receiving = 0;
        pthread_mutex_unlock(&srv->store_lock);
        filem_partner_reply(fd, conn.status, conn.message);
        filem_partner_drain(&conn);
    }
    for (size_t i = 0; i < conn.num_dirs; i++)
        free(conn.dirs[i]);
    free(conn.dirs);
    free(conn.partial_dir);
    free(conn.seq_dir);
    free(conn.keep);
}

/* ---- the server: listening ------------------------------------------------------------- */

static void *filem_partner_run(void *arg)
{
    crmpi_filem_partner_server_t *srv = arg;

    for (;;) {
        struct pollfd fds[2] = {{.fd = srv->listen_fd, .events = POLLIN},
                                {.fd = srv->stop_fd, .events = POLLIN}};
        struct sockaddr_in peer_addr;
        socklen_t peer_len = sizeof(peer_addr);
        char peer[64], ip[INET_ADDRSTRLEN] = "?";
        bool stopping;
        int fd;

        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            crmpi_log_error("filem:partner: poll: %s; no more partner copies are received here",
                            strerror(errno));
            return NULL;
        }
        if (fds[1].revents)
            return NULL;
        fd = accept4(srv->listen_fd, (struct sockaddr *)&peer_addr, &peer_len, SOCK_CLOEXEC);
        if (fd < 0) {
            /* Out of descriptors: wait a little (or for stop) rather than spin. */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                poll(&fds[1], 1, 100);
            continue;
        }
        inet_ntop(AF_INET, &peer_addr.sin_addr, ip, sizeof(ip));
        snprintf(peer, sizeof(peer), "%s:%u", ip, ntohs(peer_addr.sin_port));
        filem_partner_timeouts_set(fd, FILEM_PARTNER_SERVER_TIMEOUT_S);
        pthread_mutex_lock(&srv->lock);
        stopping = srv->stopping;
        if (!stopping)
            srv->conn_fd = fd;
        pthread_mutex_unlock(&srv->lock);
        if (!stopping)
            filem_partner_handle(srv, fd, peer);
        pthread_mutex_lock(&srv->lock);
        srv->conn_fd = -1;
        pthread_mutex_unlock(&srv->lock);
        close(fd);
        if (stopping)
            return NULL;
    }
}

static void filem_partner_server_free(crmpi_filem_partner_server_t *srv)
{
    if (srv->listen_fd >= 0)
        close(srv->listen_fd);
    if (srv->stop_fd >= 0)
        close(srv->stop_fd);
    if (srv->key)
        explicit_bzero(srv->key, srv->key_len);
    free(srv->key);
    free(srv->buf);
    free(srv->ranks);
    free(srv);
}

int crmpi_filem_partner_serve(const char *bind_addr, const uint8_t *key, size_t key_len,
                              crmpi_filem_partner_server_t **srv_out, char *addr_out,
                              size_t addr_len)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    socklen_t sin_len = sizeof(sin);
    crmpi_filem_partner_server_t *srv;
    sigset_t all, saved;
    int err;

    if (!key || !key_len || addr_len < 32 || inet_pton(AF_INET, bind_addr, &sin.sin_addr) != 1) {
        crmpi_log_error("filem:partner: cannot listen on '%s': %s", bind_addr,
                        !key || !key_len ? "no partner key"
                        : addr_len < 32  ? "no room for the address"
                                         : "not a numeric IPv4 address");
        return CRMPI_ERR_BAD_PARAM;
    }
    if (!(srv = calloc(1, sizeof(*srv))))
        return CRMPI_ERR_OUT_OF_RESOURCE;
    srv->listen_fd = srv->stop_fd = srv->conn_fd = -1;
    srv->key_len = key_len;
    if (!(srv->key = malloc(key_len)) || !(srv->buf = malloc(FILEM_PARTNER_CHUNK))) {
        filem_partner_server_free(srv);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(srv->key, key, key_len);
    srv->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (srv->listen_fd < 0 || bind(srv->listen_fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
        listen(srv->listen_fd, SOMAXCONN) != 0 ||
        getsockname(srv->listen_fd, (struct sockaddr *)&sin, &sin_len) != 0 ||
        (srv->stop_fd = eventfd(0, EFD_CLOEXEC)) < 0) {
        crmpi_log_error("filem:partner: cannot listen on %s: %s", bind_addr, strerror(errno));
        filem_partner_server_free(srv);
        return CRMPI_ERR_IO;
    }
    pthread_mutex_init(&srv->lock, NULL);
    pthread_mutex_init(&srv->store_lock, NULL);
    /* The thread takes no signal: the process's own threads handle them. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    err = pthread_create(&srv->thread, NULL, filem_partner_run, srv);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (err) {
        crmpi_log_error("filem:partner: cannot start the receiving thread: %s", strerror(err));
        pthread_mutex_destroy(&srv->lock);
        pthread_mutex_destroy(&srv->store_lock);
        filem_partner_server_free(srv);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    snprintf(addr_out, addr_len, "%s:%u", bind_addr, ntohs(sin.sin_port));
    *srv_out = srv;
    return CRMPI_OK;
}

void crmpi_filem_partner_stop(crmpi_filem_partner_server_t *srv)
{
    uint64_t one = 1;

    if (!srv)
        return;
    pthread_mutex_lock(&srv->lock);
    srv->stopping = true;
    /* Wakes a transfer's blocked read: it ends as a failure, removing its .partial. */
    if (srv->conn_fd >= 0)
        shutdown(srv->conn_fd, SHUT_RDWR);
    pthread_mutex_unlock(&srv->lock);
    while (write(srv->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
    pthread_join(srv->thread, NULL);
    pthread_mutex_destroy(&srv->lock);
    pthread_mutex_destroy(&srv->store_lock);
    filem_partner_server_free(srv);
}

/* ---- the client ------------------------------------------------------------------------ */

/* Collect every regular file under src_dir/rel (rel "" for the top). */
static int filem_partner_walk(filem_partner_client_t *client, const char *src_dir, const char *rel,
                              char ***paths, size_t *count)
{
    struct dirent *entry;
    char *dir_path;
    DIR *dir;
    int rc = CRMPI_OK;

    if (asprintf(&dir_path, "%s%s%s", src_dir, rel[0] ? "/" : "", rel) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    if (!(dir = opendir(dir_path))) {
        snprintf(client->why, client->why_len, "cannot read %s: %s", dir_path, strerror(errno));
        free(dir_path);
        return CRMPI_ERR_IO;
    }
    while (rc == CRMPI_OK && (entry = readdir(dir))) {
        char *child_rel = NULL, *child_path = NULL, **grown;
        struct stat st;

        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        if (asprintf(&child_rel, "%s%s%s", rel, rel[0] ? "/" : "", entry->d_name) < 0 ||
            asprintf(&child_path, "%s/%s", dir_path, entry->d_name) < 0) {
            free(child_rel);
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        if (lstat(child_path, &st) != 0) {
            snprintf(client->why, client->why_len, "cannot stat %s: %s", child_path,
                     strerror(errno));
            rc = CRMPI_ERR_IO;
        } else if (S_ISDIR(st.st_mode)) {
            rc = filem_partner_walk(client, src_dir, child_rel, paths, count);
        } else if (!S_ISREG(st.st_mode)) {
            snprintf(client->why, client->why_len,
                     "%s is neither a file nor a directory; a snapshot holds only those",
                     child_path);
            rc = CRMPI_ERR_IO;
        } else if (strlen(child_rel) > FILEM_PARTNER_PATH_MAX) {
            snprintf(client->why, client->why_len, "%.200s...: a path too long to send",
                     child_path);
            rc = CRMPI_ERR_IO;
        } else if (*count >= FILEM_PARTNER_MAX_FILES) {
            snprintf(client->why, client->why_len, "%s holds more than %d files", src_dir,
                     FILEM_PARTNER_MAX_FILES);
            rc = CRMPI_ERR_IO;
        } else if (!(grown = realloc(*paths, (*count + 1) * sizeof(*grown)))) {
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
        } else {
            *paths = grown;
            grown[(*count)++] = child_rel;
            child_rel = NULL;
        }
        free(child_rel);
        free(child_path);
    }
    closedir(dir);
    free(dir_path);
    return rc;
}

static int filem_partner_path_compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A failed read or write of the connection (`rc`) as the copy's failure. */
static int filem_partner_lost(filem_partner_client_t *client, int rc)
{
    snprintf(client->why, client->why_len, "the connection to partner %s %s", client->addr,
             rc == CRMPI_ERR_PEER_GONE ? "closed"
             : rc == CRMPI_ERR_TIMEOUT ? "timed out"
                                       : strerror(errno));
    return CRMPI_ERR_IO;
}

/* Read the server's answer; anything but OK is the copy's failure. */
static int filem_partner_answer(filem_partner_client_t *client)
{
    char message[FILEM_PARTNER_MESSAGE_MAX + 1];
    uint8_t head[8];
    uint32_t status, len;
    int rc;

    if ((rc = filem_partner_read(client->fd, head, sizeof(head))) != CRMPI_OK)
        return filem_partner_lost(client, rc);
    status = filem_partner_get32(head);
    len = filem_partner_get32(head + 4);
    if (len > FILEM_PARTNER_MESSAGE_MAX) {
        snprintf(client->why, client->why_len, "partner %s answered with %u bytes", client->addr,
                 len);
        return CRMPI_ERR_PROTO;
    }
    if ((rc = filem_partner_read(client->fd, message, len)) != CRMPI_OK)
        return filem_partner_lost(client, rc);
    message[len] = '\0';
    for (uint32_t i = 0; i < len; i++)
        if ((unsigned char)message[i] < ' ')
            message[i] = ' '; /* one line, whatever the partner sent */
    switch (status) {
    case FILEM_PARTNER_STATUS_OK: return CRMPI_OK;
    case FILEM_PARTNER_STATUS_REFUSED:
    case FILEM_PARTNER_STATUS_BAD:
        snprintf(client->why, client->why_len, "partner %s refused the copy: %s", client->addr,
                 message);
        return CRMPI_ERR_PROTO;
    case FILEM_PARTNER_STATUS_NOSPACE:
        snprintf(client->why, client->why_len, "the partner's disk is full (%s: %s)", client->addr,
                 message);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    case FILEM_PARTNER_STATUS_IO:
        snprintf(client->why, client->why_len, "partner %s could not store the copy: %s",
                 client->addr, message);
        return CRMPI_ERR_IO;
    default:
        snprintf(client->why, client->why_len, "partner %s answered with an unknown status %u",
                 client->addr, status);
        return CRMPI_ERR_PROTO;
    }
}

/* The server answered before the end: it failed, and says why. */
static bool filem_partner_answered_early(filem_partner_client_t *client)
{
    struct pollfd pfd = {.fd = client->fd, .events = POLLIN};

    return poll(&pfd, 1, 0) > 0 && pfd.revents;
}

static int filem_partner_connect(filem_partner_client_t *client)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    char ip[INET_ADDRSTRLEN];
    const char *colon = strrchr(client->addr, ':');
    unsigned long port;
    char *end;

    if (!colon || (size_t)(colon - client->addr) >= sizeof(ip)) {
        snprintf(client->why, client->why_len, "cannot connect to %s: not an address a.b.c.d:port",
                 client->addr);
        return CRMPI_ERR_BAD_PARAM;
    }
    snprintf(ip, sizeof(ip), "%.*s", (int)(colon - client->addr), client->addr);
    errno = 0;
    port = strtoul(colon + 1, &end, 10);
    if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1 || !colon[1] || *end || errno || !port ||
        port > 65535) {
        snprintf(client->why, client->why_len, "cannot connect to %s: not an address a.b.c.d:port",
                 client->addr);
        return CRMPI_ERR_BAD_PARAM;
    }
    sin.sin_port = htons((uint16_t)port);
    if ((client->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
        snprintf(client->why, client->why_len, "cannot connect to %s: %s", client->addr,
                 strerror(errno));
        return CRMPI_ERR_UNREACH;
    }
    if (connect(client->fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
        int err = errno;

        /* Interrupted, the connection goes on: wait for its outcome. */
        if (err == EINTR) {
            struct pollfd pfd = {.fd = client->fd, .events = POLLOUT};
            socklen_t len = sizeof(err);

            while (poll(&pfd, 1, -1) < 0 && errno == EINTR) {
            }
            if (getsockopt(client->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
                err = errno;
        }
        if (err) {
            snprintf(client->why, client->why_len, "cannot connect to %s: %s", client->addr,
                     strerror(err));
            return CRMPI_ERR_UNREACH;
        }
    }
    filem_partner_timeouts_set(client->fd, FILEM_PARTNER_CLIENT_TIMEOUT_S);
    return CRMPI_OK;
}

/* Greeting, header and its answer. */
static int filem_partner_header_send(filem_partner_client_t *client, const uint8_t *key,
                                     size_t key_len, const char *name, unsigned seq, int rank,
                                     const uint32_t *keep, uint32_t num_keep,
                                     struct hmac_sha256_ctx *end_mac)
{
    uint8_t hello[8 + FILEM_PARTNER_NONCE_LEN], *msg;
    size_t name_len = strlen(name), len = 24 + name_len + 4 * (size_t)num_keep;
    int rc;

    if ((rc = filem_partner_read(client->fd, hello, sizeof(hello))) != CRMPI_OK)
        return filem_partner_lost(client, rc);
    if (filem_partner_get32(hello) != FILEM_PARTNER_MAGIC ||
        filem_partner_get32(hello + 4) != FILEM_PARTNER_VERSION) {
        snprintf(client->why, client->why_len,
                 "%s is not a partner server of version %u (its greeting is %08x %u)", client->addr,
                 FILEM_PARTNER_VERSION, filem_partner_get32(hello), filem_partner_get32(hello + 4));
        return CRMPI_ERR_PROTO;
    }
    if (!(msg = malloc(4 + len + FILEM_PARTNER_MAC_LEN)))
        return CRMPI_ERR_OUT_OF_RESOURCE;
    filem_partner_put32(msg, (uint32_t)len);
    filem_partner_put32(msg + 4, FILEM_PARTNER_MAGIC);
    filem_partner_put32(msg + 8, FILEM_PARTNER_VERSION);
    filem_partner_put32(msg + 12, seq);
    filem_partner_put32(msg + 16, (uint32_t)rank);
    filem_partner_put32(msg + 20, (uint32_t)name_len);
    memcpy(msg + 24, name, name_len);
    filem_partner_put32(msg + 24 + name_len, num_keep);
    for (uint32_t i = 0; i < num_keep; i++)
        filem_partner_put32(msg + 28 + name_len + 4 * i, keep[i]);
    filem_partner_header_mac(key, key_len, hello + 8, msg + 4, len, msg + 4 + len);
    filem_partner_end_mac_start(end_mac, key, key_len, hello + 8, msg + 4, len);
    /* The write's error is not looked at: a refusal's answer says more. */
    filem_partner_write(client->fd, msg, 4 + len + FILEM_PARTNER_MAC_LEN);
    free(msg);
    return filem_partner_answer(client);
}

/* One file's record. @return CRMPI_OK, 1 (the server answered early), or an error */
static int filem_partner_file_send(filem_partner_client_t *client, const char *src_dir,
                                   const char *rel, struct hmac_sha256_ctx *end_mac)
{
    size_t rel_len = strlen(rel);
    uint8_t fields[16 + FILEM_PARTNER_PATH_MAX], digest[SHA256_DIGEST_SIZE];
    struct sha256_ctx sha;
    struct stat st;
    char *path;
    uint64_t left;
    int fd, rc;

    if (asprintf(&path, "%s/%s", src_dir, rel) < 0)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) != 0) {
        snprintf(client->why, client->why_len, "cannot read %s: %s", path, strerror(errno));
        rc = CRMPI_ERR_IO;
        goto out;
    }
    filem_partner_put32(fields, FILEM_PARTNER_RECORD_FILE);
    filem_partner_put32(fields + 4, (uint32_t)rel_len);
    memcpy(fields + 8, rel, rel_len);
    filem_partner_put64(fields + 8 + rel_len, (uint64_t)st.st_size);
    if ((rc = filem_partner_write(client->fd, fields, 16 + rel_len)) != CRMPI_OK) {
        rc = filem_partner_answered_early(client) ? 1 : filem_partner_lost(client, rc);
        goto out;
    }
    sha256_init(&sha);
    for (left = (uint64_t)st.st_size; left;) {
        size_t want = left < FILEM_PARTNER_CHUNK ? (size_t)left : FILEM_PARTNER_CHUNK;
        ssize_t got;

        if (filem_partner_answered_early(client)) {
            rc = 1;
            goto out;
        }
        got = read(fd, client->buf, want);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            snprintf(client->why, client->why_len, "cannot read %s: %s", path,
                     got < 0 ? strerror(errno) : "it shrank while being sent");
            rc = CRMPI_ERR_IO;
            goto out;
        }
        sha256_update(&sha, (size_t)got, client->buf);
        if ((rc = filem_partner_write(client->fd, client->buf, (size_t)got)) != CRMPI_OK) {
            rc = filem_partner_answered_early(client) ? 1 : filem_partner_lost(client, rc);
            goto out;
        }
        left -= (uint64_t)got;
    }
    sha256_digest(&sha, sizeof(digest), digest);
    filem_partner_end_mac_file(end_mac, rel, (uint64_t)st.st_size, digest);
    if ((rc = filem_partner_write(client->fd, digest, sizeof(digest))) != CRMPI_OK)
        rc = filem_partner_answered_early(client) ? 1 : filem_partner_lost(client, rc);
out:
    if (fd >= 0)
        close(fd);
    free(path);
    return rc;
}

int crmpi_filem_partner_send(const char *addr, const uint8_t *key, size_t key_len,
                             const char *jobdir, unsigned seq, int rank, const char *src_dir,
                             const uint32_t *keep, uint32_t num_keep, char *why, size_t why_len)
{
    filem_partner_client_t client = {.addr = addr, .fd = -1, .why = why, .why_len = why_len};
    uint8_t end[4 + FILEM_PARTNER_MAC_LEN];
    struct hmac_sha256_ctx end_mac;
    char name[PATH_MAX], *base;
    char **paths = NULL;
    size_t count = 0, name_len;
    int rc;

    /* The snapshot's name: jobdir's last component. */
    snprintf(name, sizeof(name), "%s", jobdir);
    for (name_len = strlen(name); name_len > 1 && name[name_len - 1] == '/';)
        name[--name_len] = '\0';
    base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    if (why_len)
        why[0] = '\0';
    if (!filem_partner_name_is_valid(base, strlen(base)) || seq < 1 || rank < 0 || !key_len ||
        num_keep > FILEM_PARTNER_MAX_KEEP) {
        snprintf(why, why_len,
                 "cannot send sequence %u of rank %d of %s: not a <jobid>.ckpt snapshot, a "
                 "sequence >= 1 and a rank >= 0 with a key and at most %d sequences kept",
                 seq, rank, jobdir, FILEM_PARTNER_MAX_KEEP);
        return CRMPI_ERR_BAD_PARAM;
    }
    if ((rc = filem_partner_walk(&client, src_dir, "", &paths, &count)) != CRMPI_OK)
        goto out;
    if (count)
        qsort(paths, count, sizeof(*paths), filem_partner_path_compare);
    if (!(client.buf = malloc(FILEM_PARTNER_CHUNK))) {
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    if ((rc = filem_partner_connect(&client)) != CRMPI_OK)
        goto out;
    rc =
        filem_partner_header_send(&client, key, key_len, base, seq, rank, keep, num_keep, &end_mac);
    for (size_t i = 0; i < count && rc == CRMPI_OK; i++)
        rc = filem_partner_file_send(&client, src_dir, paths[i], &end_mac);
    if (rc == CRMPI_OK) {
        filem_partner_put32(end, FILEM_PARTNER_RECORD_END);
        hmac_sha256_digest(&end_mac, FILEM_PARTNER_MAC_LEN, end + 4);
        rc = filem_partner_write(client.fd, end, sizeof(end));
        if (rc != CRMPI_OK && !filem_partner_answered_early(&client))
            rc = filem_partner_lost(&client, rc);
        else
            rc = 1;
    }
    if (rc == 1)
        rc = filem_partner_answer(&client);
out:
    if (rc == CRMPI_ERR_OUT_OF_RESOURCE && why_len && !why[0])
        snprintf(why, why_len, "out of memory");
    if (client.fd >= 0)
        close(client.fd);
    for (size_t i = 0; i < count; i++)
        free(paths[i]);
    free(paths);
    free(client.buf);
    return rc;
}
