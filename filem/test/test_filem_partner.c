/*
 * test_filem_partner.c: unit tests of the partner level's transfer (filem_partner.h) over
 * 127.0.0.1: a round trip, a wrong key, forged requests (a path with "..", a snapshot name
 * with '/', a file whose sha256 does not match), a replayed connection, pruning of the
 * sequences not kept, a server failing in the middle of a file, an unreachable partner,
 * stopping idle and in the middle of a copy.
 * The forged clients speak the wire protocol of filem_partner.c themselves.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <nettle/hmac.h>
#include <nettle/sha2.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "component.h"
#include "crmpi_status.h"
#include "filem_fs.h"
#include "filem_partner.h"
#include "log.h"
#include "param.h"
#include "test_capture.h"

#define PAGES_BYTES (3u << 20) /* a few MiB: several chunks of the transfer */

static const uint8_t test_key[32] = "0123456789abcdef0123456789abcde";
static const uint8_t wrong_key[32] = "0123456789abcdef0123456789abcdX";

typedef struct fixture {
    char *top;   /* mkdtemp'ed, removed in teardown */
    char *local; /* <top>/local: filem_local_dir, where the server stores */
    crmpi_filem_partner_server_t *srv;
    char addr[64]; /* the server's */
} fixture_t;

/* ---- files ------------------------------------------------------------------------------ */

static void path_write(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
}

static bool path_exists(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool path_exists(const char *fmt, ...)
{
    char path[4096];
    struct stat st;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    return lstat(path, &st) == 0;
}

/* What is under `dir`, recursively: its regular files, or (with dirs) its files and
 * directories; -1 when dir is not there. */
static int tree_walk(const char *dir, bool dirs)
{
    struct dirent *entry;
    DIR *d = opendir(dir);
    int count = 0;

    if (!d)
        return -1;
    while ((entry = readdir(d))) {
        char path[4096];
        struct stat st;

        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name);
        assert_int_equal(lstat(path, &st), 0);
        if (S_ISDIR(st.st_mode))
            count += (dirs ? 1 : 0) + tree_walk(path, dirs);
        else
            count++;
    }
    closedir(d);
    return count;
}

static int tree_count(const char *dir)
{
    return tree_walk(dir, false);
}

static int tree_entries(const char *dir)
{
    return tree_walk(dir, true);
}

static void file_assert_equal(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int ca, cb;

    assert_non_null(fa);
    assert_non_null(fb);
    do {
        ca = fgetc(fa);
        cb = fgetc(fb);
        assert_int_equal(ca, cb);
    } while (ca != EOF);
    fclose(fa);
    fclose(fb);
}

/* The files make_src creates, relative to its directory. */
static const char *const src_files[] = {"criu/pages-1.img", "criu/core.img", "criu/empty.img",
                                        "criu/sub/deep.img", "rank.json"};

/* A rank's node-local images, as the CRS and CRCP leave them: <top>/<name>/... */
static char *make_src(fixture_t *fx, const char *name, uint64_t seed, size_t pages_bytes)
{
    uint8_t *pages = malloc(pages_bytes ? pages_bytes : 1);
    char *dir, path[4096];
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

    assert_non_null(pages);
    for (size_t i = 0; i < pages_bytes; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        pages[i] = (uint8_t)x;
    }
    assert_true(asprintf(&dir, "%s/%s", fx->top, name) > 0);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof(path), "%s/criu", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/criu/sub", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/criu/pages-1.img", dir);
    path_write(path, pages, pages_bytes);
    snprintf(path, sizeof(path), "%s/criu/core.img", dir);
    path_write(path, "core of the rank", 16);
    snprintf(path, sizeof(path), "%s/criu/empty.img", dir);
    path_write(path, "", 0);
    snprintf(path, sizeof(path), "%s/criu/sub/deep.img", dir);
    path_write(path, &seed, sizeof(seed));
    snprintf(path, sizeof(path), "%s/rank.json", dir);
    path_write(path, "{\"rank\": 0}\n", 12);
    free(pages);
    return dir;
}

/* <local>/4711.ckpt/<seq>/rank.<rank> (malloc'ed). */
static char *stored_dir(fixture_t *fx, unsigned seq, int rank)
{
    char *dir;

    assert_true(asprintf(&dir, "%s/4711.ckpt/%u/rank.%d", fx->local, seq, rank) > 0);
    return dir;
}

static void stored_assert_equal(fixture_t *fx, const char *src, unsigned seq, int rank)
{
    char *dir = stored_dir(fx, seq, rank);

    assert_int_equal(tree_count(dir), (int)(sizeof(src_files) / sizeof(src_files[0])));
    for (size_t i = 0; i < sizeof(src_files) / sizeof(src_files[0]); i++) {
        char a[4096], b[4096];

        snprintf(a, sizeof(a), "%s/%s", src, src_files[i]);
        snprintf(b, sizeof(b), "%s/%s", dir, src_files[i]);
        file_assert_equal(a, b);
    }
    assert_false(path_exists("%s/4711.ckpt/%u/rank.%d.partial", fx->local, seq, rank));
    free(dir);
}

/* ---- a forged client: the wire protocol spoken by hand ------------------------------------ */

typedef struct raw {
    int fd;
    uint8_t nonce[32];
    struct hmac_sha256_ctx end; /* the end MAC's transcript */
} raw_t;

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void raw_write(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;

    while (len) {
        ssize_t put = send(fd, p, len, MSG_NOSIGNAL);

        assert_true(put > 0);
        p += put;
        len -= (size_t)put;
    }
}

static void raw_read(int fd, void *data, size_t len)
{
    uint8_t *p = data;

    while (len) {
        ssize_t got = recv(fd, p, len, 0);

        assert_true(got > 0);
        p += got;
        len -= (size_t)got;
    }
}

static int tcp_connect(const char *addr)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    const char *colon = strrchr(addr, ':');
    char ip[32];
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    snprintf(ip, sizeof(ip), "%.*s", (int)(colon - addr), addr);
    assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
    sin.sin_port = htons((uint16_t)atoi(colon + 1));
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    return fd;
}

/* Connect and read the server's greeting (its nonce). */
static void raw_connect(raw_t *raw, const char *addr)
{
    uint8_t hello[40];

    raw->fd = tcp_connect(addr);
    raw_read(raw->fd, hello, sizeof(hello));
    assert_int_equal(get32(hello), 0x43525050u);
    assert_int_equal(get32(hello + 4), 1);
    memcpy(raw->nonce, hello + 8, sizeof(raw->nonce));
}

/* The header with a valid MAC under `key`. */
static void raw_header(raw_t *raw, const uint8_t *key, const char *name, unsigned seq, int rank)
{
    static const char label[] = "crmpi partner copy", end_label[] = "crmpi partner copy end";
    size_t name_len = strlen(name), len = 24 + name_len;
    uint8_t msg[4 + 24 + 256 + SHA256_DIGEST_SIZE];
    struct hmac_sha256_ctx ctx;

    put32(msg, (uint32_t)len);
    put32(msg + 4, 0x43525050u);
    put32(msg + 8, 1);
    put32(msg + 12, seq);
    put32(msg + 16, (uint32_t)rank);
    put32(msg + 20, (uint32_t)name_len);
    memcpy(msg + 24, name, name_len);
    put32(msg + 24 + name_len, 0);
    hmac_sha256_set_key(&ctx, 32, key);
    hmac_sha256_update(&ctx, sizeof(label) - 1, (const uint8_t *)label);
    hmac_sha256_update(&ctx, 32, raw->nonce);
    hmac_sha256_update(&ctx, len, msg + 4);
    hmac_sha256_digest(&ctx, SHA256_DIGEST_SIZE, msg + 4 + len);
    hmac_sha256_set_key(&raw->end, 32, key);
    hmac_sha256_update(&raw->end, sizeof(end_label) - 1, (const uint8_t *)end_label);
    hmac_sha256_update(&raw->end, 32, raw->nonce);
    hmac_sha256_update(&raw->end, len, msg + 4);
    raw_write(raw->fd, msg, 4 + len + SHA256_DIGEST_SIZE);
}

/* One file's record; `damage` sends a sha256 of other bytes. */
static void raw_file(raw_t *raw, const char *rel, const void *data, size_t len, bool damage)
{
    uint8_t fields[16 + 4096], digest[SHA256_DIGEST_SIZE];
    size_t rel_len = strlen(rel);
    struct sha256_ctx sha;

    put32(fields, 1);
    put32(fields + 4, (uint32_t)rel_len);
    memcpy(fields + 8, rel, rel_len);
    put64(fields + 8 + rel_len, len);
    raw_write(raw->fd, fields, 16 + rel_len);
    raw_write(raw->fd, data, len);
    sha256_init(&sha);
    sha256_update(&sha, len, data);
    if (damage)
        sha256_update(&sha, 1, (const uint8_t *)"!");
    sha256_digest(&sha, sizeof(digest), digest);
    raw_write(raw->fd, digest, sizeof(digest));
    hmac_sha256_update(&raw->end, 4, fields + 4);
    hmac_sha256_update(&raw->end, rel_len, (const uint8_t *)rel);
    hmac_sha256_update(&raw->end, 8, fields + 8 + rel_len);
    hmac_sha256_update(&raw->end, sizeof(digest), digest);
}

static void raw_end(raw_t *raw)
{
    uint8_t end[4 + SHA256_DIGEST_SIZE];

    put32(end, 2);
    hmac_sha256_digest(&raw->end, SHA256_DIGEST_SIZE, end + 4);
    raw_write(raw->fd, end, sizeof(end));
}

/* The server's reply: its status; `message` (>= 1025 bytes) gets its text. */
static uint32_t raw_reply(raw_t *raw, char *message)
{
    uint8_t head[8];
    uint32_t len;

    raw_read(raw->fd, head, sizeof(head));
    len = get32(head + 4);
    assert_true(len <= 1024);
    raw_read(raw->fd, message, len);
    message[len] = '\0';
    return get32(head);
}

/* ---- fixture ------------------------------------------------------------------------------ */

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    char *pattern = test_tmp_name("crmpi-test-partner-XXXXXX");

    assert_non_null(fx);
    fx->top = mkdtemp(pattern);
    assert_non_null(fx->top);
    assert_true(asprintf(&fx->local, "%s/local", fx->top) > 0);
    test_env_clear_mca();
    setenv("CRMPI_PARAM_FILE", "", 1);
    setenv("CRMPI_MCA_filem_local_dir", fx->local, 1);
    assert_int_equal(crmpi_catalog_register_all(), CRMPI_OK);
    assert_int_equal(crmpi_filem_partner_serve("127.0.0.1", test_key, sizeof(test_key), &fx->srv,
                                               fx->addr, sizeof(fx->addr)),
                     CRMPI_OK);
    assert_true(strncmp(fx->addr, "127.0.0.1:", 10) == 0 && atoi(fx->addr + 10) > 0);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;

    capture_abandon();
    crmpi_filem_partner_stop(fx->srv);
    crmpi_param_finalize();
    unsetenv("CRMPI_MCA_filem_local_dir");
    unsetenv("CRMPI_PARAM_FILE");
    crmpi_filem_tree_remove(fx->top);
    free(fx->top);
    free(fx->local);
    free(fx);
    return 0;
}

static int send_copy(fixture_t *fx, const uint8_t *key, unsigned seq, int rank, const char *src,
                     const uint32_t *keep, uint32_t num_keep, char *why, size_t why_len)
{
    char jobdir[4200];

    snprintf(jobdir, sizeof(jobdir), "%s/global/4711.ckpt", fx->top);
    return crmpi_filem_partner_send(fx->addr, key, 32, jobdir, seq, rank, src, keep, num_keep, why,
                                    why_len);
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_round_trip(void **state)
{
    fixture_t *fx = *state;
    char *src = make_src(fx, "src", 1, PAGES_BYTES);
    char why[512] = "";

    assert_int_equal(send_copy(fx, test_key, 2, 3, src, NULL, 0, why, sizeof(why)), CRMPI_OK);
    stored_assert_equal(fx, src, 2, 3);
    /* 4711.ckpt, 2, rank.3, criu, criu/sub and the 5 files: nothing else. */
    assert_int_equal(tree_entries(fx->local), 10);

    /* Sent again (a retried copy): replaced, still identical. */
    assert_int_equal(send_copy(fx, test_key, 2, 3, src, NULL, 0, why, sizeof(why)), CRMPI_OK);
    stored_assert_equal(fx, src, 2, 3);
    free(src);
}

static void test_wrong_key(void **state)
{
    fixture_t *fx = *state;
    char *src = make_src(fx, "src", 2, 4096);
    char why[512] = "", *text;

    capture_begin();
    assert_int_equal(send_copy(fx, wrong_key, 1, 0, src, NULL, 0, why, sizeof(why)),
                     CRMPI_ERR_PROTO);
    text = capture_end();
    assert_non_null(strstr(why, "refused"));
    assert_non_null(strstr(why, "key"));
    assert_non_null(strstr(why, fx->addr));
    /* One warning on the server's side, naming the client. */
    assert_int_equal(count_lines(text), 1);
    assert_non_null(strstr(text, "warning"));
    assert_non_null(strstr(text, "from 127.0.0.1:"));
    free(text);
    assert_int_equal(tree_entries(fx->local), -1);

    assert_int_equal(send_copy(fx, test_key, 1, 0, src, NULL, 0, why, sizeof(why)), CRMPI_OK);
    stored_assert_equal(fx, src, 1, 0);
    free(src);
}

static void test_forged(void **state)
{
    fixture_t *fx = *state;
    char message[1025], *text;
    raw_t raw;

    capture_begin();
    /* A snapshot name with '/': refused at the header, before anything is created. */
    raw_connect(&raw, fx->addr);
    raw_header(&raw, test_key, "../4711.ckpt", 1, 0);
    assert_int_equal(raw_reply(&raw, message), 2);
    assert_non_null(strstr(message, "name"));
    close(raw.fd);
    raw_connect(&raw, fx->addr);
    raw_header(&raw, test_key, "x/4711.ckpt", 1, 0);
    assert_int_equal(raw_reply(&raw, message), 2);
    close(raw.fd);
    assert_int_equal(tree_entries(fx->local), -1);
    assert_int_equal(tree_entries(fx->top), 0);

    /* A path with "..", after a good file. */
    raw_connect(&raw, fx->addr);
    raw_header(&raw, test_key, "4711.ckpt", 1, 0);
    assert_int_equal(raw_reply(&raw, message), 0);
    raw_file(&raw, "rank.json", "{}", 2, false);
    raw_file(&raw, "criu/../../../escape.img", "evil", 4, false);
    assert_int_equal(raw_reply(&raw, message), 2);
    assert_non_null(strstr(message, "escape.img"));
    close(raw.fd);

    /* An absolute path. */
    raw_connect(&raw, fx->addr);
    raw_header(&raw, test_key, "4711.ckpt", 1, 0);
    assert_int_equal(raw_reply(&raw, message), 0);
    raw_file(&raw, "/escape.img", "evil", 4, false);
    assert_int_equal(raw_reply(&raw, message), 2);
    close(raw.fd);

    /* A file whose sha256 does not match its bytes. */
    raw_connect(&raw, fx->addr);
    raw_header(&raw, test_key, "4711.ckpt", 1, 0);
    assert_int_equal(raw_reply(&raw, message), 0);
    raw_file(&raw, "rank.json", "{}", 2, false);
    raw_file(&raw, "criu/pages-1.img", "pages", 5, true);
    raw_end(&raw);
    assert_int_equal(raw_reply(&raw, message), 2);
    assert_non_null(strstr(message, "criu/pages-1.img"));
    assert_non_null(strstr(message, "sha256"));
    close(raw.fd);
    text = capture_end();
    assert_int_equal(count_lines(text), 5);
    free(text);

    /* Nothing stored, nothing outside, no .partial: only the (empty) sequence directory. */
    assert_false(path_exists("%s/escape.img", fx->top));
    assert_false(path_exists("%s/escape.img", fx->local));
    assert_false(path_exists("/escape.img"));
    assert_int_equal(tree_entries(fx->local), 2);
    assert_true(path_exists("%s/4711.ckpt/1", fx->local));

    /* The same forged client, honest, is stored: the refusals above were the content's. */
    raw_connect(&raw, fx->addr);
    raw_header(&raw, test_key, "4711.ckpt", 1, 0);
    assert_int_equal(raw_reply(&raw, message), 0);
    raw_file(&raw, "rank.json", "{}", 2, false);
    raw_file(&raw, "criu/pages-1.img", "pages", 5, false);
    raw_end(&raw);
    assert_int_equal(raw_reply(&raw, message), 0);
    close(raw.fd);
    assert_int_equal(tree_count(fx->local), 2);
    assert_true(path_exists("%s/4711.ckpt/1/rank.0/criu/pages-1.img", fx->local));
}

/* A relay between a client and the server that records what the client sent. */
typedef struct proxy {
    int listen_fd;
    char addr[64];
    const char *server;
    uint8_t *sent;
    size_t sent_len;
    pthread_t thread;
} proxy_t;

static void *proxy_run(void *arg)
{
    proxy_t *p = arg;
    int client = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    int server = tcp_connect(p->server);
    bool client_open = true, server_open = true;
    uint8_t buf[65536];

    while (client_open || server_open) {
        struct pollfd fds[2] = {{.fd = client_open ? client : -1, .events = POLLIN},
                                {.fd = server_open ? server : -1, .events = POLLIN}};

        if (poll(fds, 2, 10000) <= 0)
            break;
        if (fds[0].revents) {
            ssize_t got = recv(client, buf, sizeof(buf), 0);

            if (got <= 0) {
                client_open = false;
                shutdown(server, SHUT_WR);
            } else {
                p->sent = realloc(p->sent, p->sent_len + (size_t)got);
                memcpy(p->sent + p->sent_len, buf, (size_t)got);
                p->sent_len += (size_t)got;
                send(server, buf, (size_t)got, MSG_NOSIGNAL);
            }
        }
        if (fds[1].revents) {
            ssize_t got = recv(server, buf, sizeof(buf), 0);

            if (got <= 0) {
                server_open = false;
                shutdown(client, SHUT_WR);
            } else {
                send(client, buf, (size_t)got, MSG_NOSIGNAL);
            }
        }
    }
    close(client);
    close(server);
    return NULL;
}

static void test_replay(void **state)
{
    fixture_t *fx = *state;
    char *src = make_src(fx, "src", 3, 100000), *saved_addr, why[512] = "", message[1025];
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sin_len = sizeof(sin);
    proxy_t p = {0};
    uint8_t hello[40];
    char *text;
    int fd;

    p.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal(bind(p.listen_fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(listen(p.listen_fd, 1), 0);
    assert_int_equal(getsockname(p.listen_fd, (struct sockaddr *)&sin, &sin_len), 0);
    snprintf(p.addr, sizeof(p.addr), "127.0.0.1:%u", ntohs(sin.sin_port));
    saved_addr = strdup(fx->addr);
    p.server = saved_addr;
    assert_int_equal(pthread_create(&p.thread, NULL, proxy_run, &p), 0);
    snprintf(fx->addr, sizeof(fx->addr), "%s", p.addr);
    assert_int_equal(send_copy(fx, test_key, 1, 0, src, NULL, 0, why, sizeof(why)), CRMPI_OK);
    snprintf(fx->addr, sizeof(fx->addr), "%s", saved_addr);
    pthread_join(p.thread, NULL);
    free(saved_addr);
    close(p.listen_fd);
    stored_assert_equal(fx, src, 1, 0);
    assert_true(p.sent_len > 100000);
    crmpi_filem_tree_remove(fx->local);

    /* The same bytes on a new connection: the header's MAC is of the old nonce. */
    capture_begin();
    fd = tcp_connect(fx->addr);
    raw_read(fd, hello, sizeof(hello));
    raw_write(fd, p.sent, p.sent_len);
    {
        raw_t raw = {.fd = fd};

        assert_int_equal(raw_reply(&raw, message), 1);
    }
    assert_non_null(strstr(message, "key"));
    close(fd);
    text = capture_end();
    assert_int_equal(count_lines(text), 1);
    free(text);
    assert_int_equal(tree_entries(fx->local), -1);
    free(p.sent);
    free(src);
}

static void test_prune(void **state)
{
    fixture_t *fx = *state;
    char *src = make_src(fx, "src", 4, 1000), why[512] = "", *other, *other_rank;
    const uint32_t all[] = {1, 2, 3}, keep[] = {3};

    for (unsigned seq = 1; seq <= 3; seq++)
        for (int rank = 0; rank <= 1; rank++)
            assert_int_equal(send_copy(fx, test_key, seq, rank, src, all, seq, why, sizeof(why)),
                             CRMPI_OK);
    for (unsigned seq = 1; seq <= 3; seq++)
        for (int rank = 0; rank <= 1; rank++)
            stored_assert_equal(fx, src, seq, rank);
    /* Not a sequence: never touched. */
    assert_true(asprintf(&other, "%s/4711.ckpt/notes", fx->local) > 0);
    assert_int_equal(mkdir(other, 0700), 0);
    assert_true(asprintf(&other_rank, "%s/rank.0", other) > 0);
    assert_int_equal(mkdir(other_rank, 0700), 0);

    assert_int_equal(send_copy(fx, test_key, 4, 0, src, keep, 1, why, sizeof(why)), CRMPI_OK);
    assert_false(path_exists("%s/4711.ckpt/1/rank.0", fx->local));
    assert_false(path_exists("%s/4711.ckpt/2/rank.0", fx->local));
    stored_assert_equal(fx, src, 3, 0);
    stored_assert_equal(fx, src, 4, 0);
    for (unsigned seq = 1; seq <= 3; seq++)
        stored_assert_equal(fx, src, seq, 1);
    assert_false(path_exists("%s/4711.ckpt/4/rank.1", fx->local));

    /* Rank 1 leaves 1 and 2 too: their directories go with the last copy. */
    assert_int_equal(send_copy(fx, test_key, 4, 1, src, keep, 1, why, sizeof(why)), CRMPI_OK);
    assert_false(path_exists("%s/4711.ckpt/1", fx->local));
    assert_false(path_exists("%s/4711.ckpt/2", fx->local));
    stored_assert_equal(fx, src, 3, 1);
    stored_assert_equal(fx, src, 4, 1);
    assert_true(path_exists("%s", other_rank));
    free(other);
    free(other_rank);
    free(src);
}

/* The server fails in the middle of a file (a file-size limit of 1 MiB: EFBIG, as a full
 * disk would): it answers at once, the client stops sending and says why. */
static void test_failure_midway(void **state)
{
    fixture_t *fx = *state;
    char *src = make_src(fx, "src", 6, PAGES_BYTES), why[512] = "", *text;
    struct rlimit saved, small;
    int rc;

    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    small = saved;
    small.rlim_cur = 1u << 20;
    signal(SIGXFSZ, SIG_IGN);
    capture_begin();
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    rc = send_copy(fx, test_key, 1, 0, src, NULL, 0, why, sizeof(why));
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    text = capture_end();
    signal(SIGXFSZ, SIG_DFL);
    assert_int_equal(rc, CRMPI_ERR_IO);
    assert_non_null(strstr(why, "could not store the copy"));
    assert_non_null(strstr(why, "criu/pages-1.img"));
    assert_int_equal(count_lines(text), 1);
    assert_non_null(strstr(text, "could not store a copy from 127.0.0.1:"));
    free(text);
    assert_false(path_exists("%s/4711.ckpt/1/rank.0.partial", fx->local));
    assert_false(path_exists("%s/4711.ckpt/1/rank.0", fx->local));

    assert_int_equal(send_copy(fx, test_key, 1, 0, src, NULL, 0, why, sizeof(why)), CRMPI_OK);
    stored_assert_equal(fx, src, 1, 0);
    free(src);
}

static void test_unreachable(void **state)
{
    fixture_t *fx = *state;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sin_len = sizeof(sin);
    char *src = make_src(fx, "src", 5, 10), why[512] = "", addr[64];
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    /* A port nobody listens on: bound, then closed. */
    assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sin_len), 0);
    close(fd);
    snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(sin.sin_port));
    snprintf(fx->addr, sizeof(fx->addr), "%s", addr);
    assert_int_equal(send_copy(fx, test_key, 1, 0, src, NULL, 0, why, sizeof(why)),
                     CRMPI_ERR_UNREACH);
    assert_non_null(strstr(why, "cannot connect to"));
    assert_non_null(strstr(why, addr));
    assert_int_equal(tree_entries(fx->local), -1);
    free(src);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_stop(void **state)
{
    fixture_t *fx = *state;
    uint8_t fields[32];
    char message[1025], *text;
    double start;
    raw_t raw;

    /* Idle. */
    start = now_s();
    crmpi_filem_partner_stop(fx->srv);
    fx->srv = NULL;
    assert_true(now_s() - start < 1.0);
    crmpi_filem_partner_stop(NULL);

    /* In the middle of a copy: the client's 1000 bytes never all come. */
    assert_int_equal(crmpi_filem_partner_serve("127.0.0.1", test_key, sizeof(test_key), &fx->srv,
                                               fx->addr, sizeof(fx->addr)),
                     CRMPI_OK);
    raw_connect(&raw, fx->addr);
    raw_header(&raw, test_key, "4711.ckpt", 1, 0);
    assert_int_equal(raw_reply(&raw, message), 0);
    put32(fields, 1);
    put32(fields + 4, 9);
    memcpy(fields + 8, "rank.json", 9);
    put64(fields + 17, 1000);
    raw_write(raw.fd, fields, 25);
    raw_write(raw.fd, "0123456789", 10);
    assert_true(path_exists("%s/4711.ckpt/1/rank.0.partial", fx->local));
    capture_begin();
    start = now_s();
    crmpi_filem_partner_stop(fx->srv);
    fx->srv = NULL;
    assert_true(now_s() - start < 1.0);
    text = capture_end();
    free(text);
    assert_false(path_exists("%s/4711.ckpt/1/rank.0.partial", fx->local));
    assert_false(path_exists("%s/4711.ckpt/1/rank.0", fx->local));
    close(raw.fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prune, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failure_midway, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop, setup, teardown),
    };

    crmpi_log_set_who("test_filem_partner");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
