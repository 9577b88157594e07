/*
 * test_snapc_local.c: unit tests of the local coordinator's copy to stable storage
 * (snapc_local.h), without an agent, a rank or CRIU: mpirun and the rank are socketpairs,
 * the images are fake files. The copy runs in its own thread while the caller keeps going;
 * steps that arrive meanwhile (an abort of the copied checkpoint, a new checkpoint) are
 * handled as the header says; an ending agent reports nothing; a prune after a commit
 * removes the node's copies mpirun no longer lists. An application checkpoint:
 * the rank's request passed up, its backup file stored by the dump, mpirun's answers passed
 * down.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "component.h"
#include "crmpi_status.h"
#include "ctl.h"
#include "fault.h"
#include "filem.h"
#include "filem_partner.h"
#include "log.h"
#include "param.h"
#include "snapc.h"
#include "snapc_local.h"
#include "snapshot_entry.h"
#include "filem_fs.h"
#include "test_capture.h"

/* The checkpoint the tests copy. */
#define TEST_SEQ 7

/* A local coordinator whose mpirun and rank are this test. */
typedef struct fixture {
    char *top;                 /* mkdtemp'ed directory, removed in teardown */
    char *images;              /* <top>/ckpt/7/rank.0: the node-local images */
    char *dest;                /* <top>/global/7.partial/rank.0: where they go */
    int hnp_peer;              /* mpirun's end of local.hnp_fd */
    int rank_peer;             /* the rank's end of local.rank_fd */
    crmpi_snapc_local_t local; /* under test */
} fixture_t;

static void file_write(const char *dir, const char *name, const char *text)
{
    char *path;
    int fd;

    assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    free(path);
}

static bool path_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

static int snapc_test_mkdirs(const char *path)
{
    char tmp[4400];

    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(tmp, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/* The images as the dump leaves them, and <seq>.partial as mpirun's crmpi_filem_seq_begin. */
static void setup_images(fixture_t *fx)
{
    char criu[4200], partial[4200];

    snprintf(criu, sizeof(criu), "%s/criu", fx->images);
    snprintf(partial, sizeof(partial), "%s/global/%d.partial", fx->top, TEST_SEQ);
    assert_int_equal(snapc_test_mkdirs(criu), 0);
    assert_int_equal(snapc_test_mkdirs(partial), 0);
    file_write(criu, "core-1.img", "core");
    file_write(criu, "pages-1.img", "the rank's memory");
    file_write(fx->images, "rank.json", "{}");
}

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    int hnp[2], rank[2];

    assert_non_null(fx);
    fx->top = test_tmp_name("crmpi-test-snapc-XXXXXX");
    assert_non_null(mkdtemp(fx->top));
    assert_true(asprintf(&fx->images, "%s/ckpt/%d/rank.0", fx->top, TEST_SEQ) > 0);
    assert_true(asprintf(&fx->dest, "%s/global/%d.partial/rank.0", fx->top, TEST_SEQ) > 0);
    setup_images(fx);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, hnp), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rank), 0);
    fx->hnp_peer = hnp[1];
    fx->rank_peer = rank[1];
    fx->local = (crmpi_snapc_local_t){
        .hnp_fd = hnp[0],
        .rank_fd = rank[0],
        .rank = 0,
        .local_base = fx->top,
        .rank_ready = true,
        .images_pending = true, /* dumped */
    };
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *fx = *state;

    capture_abandon();
    crmpi_fault_configure(NULL);
    assert_null(fx->local.copy); /* every test waits for its copy */
    close(fx->local.hnp_fd);
    close(fx->local.rank_fd);
    close(fx->hnp_peer);
    close(fx->rank_peer);
    crmpi_filem_tree_remove(fx->top);
    free(fx->top);
    free(fx->images);
    free(fx->dest);
    free(fx);
    return 0;
}

/* mpirun sends `type` for checkpoint `seq`, with `text` as its payload (or none). */
static void from_hnp(fixture_t *fx, crmpi_ctl_type_t type, uint32_t seq, const char *text)
{
    crmpi_ctl_msg_t msg = {.hdr = {.type = type, .seq = seq}};
    crmpi_buf_t buf;

    crmpi_buf_init(&buf);
    if (text)
        crmpi_buf_put_str(&buf, text);
    else if (type == CRMPI_CTL_CKPT_BEGIN || type == CRMPI_CTL_CKPT_DUMP)
        crmpi_buf_put_u32(&buf, 0); /* flags */
    if (text && type == CRMPI_CTL_CKPT_STORE) {
        crmpi_buf_put_u32(&buf, 0);  /* no committed sequence to keep at the local level */
        crmpi_buf_put_str(&buf, ""); /* no partner */
        crmpi_buf_put_str(&buf, "");
    }
    if (!text && type == CRMPI_CTL_CKPT_DUMP) {
        crmpi_buf_put_u32(&buf, 0); /* no parent: a full dump */
        crmpi_buf_put_str(&buf, "");
        crmpi_buf_put_u32(&buf, CRMPI_FILEM_LEVEL_GLOBAL);
        crmpi_buf_put_str(&buf, fx->dest);
    }
    msg.payload = buf.data;
    msg.hdr.len = (uint32_t)buf.len;
    crmpi_snapc_local_from_hnp(&fx->local, &msg);
    /* A held message is the agent's now (its payload taken, as from the agent's loop). */
    crmpi_ctl_msg_free(&msg);
}

/* Has the agent sent mpirun anything (within `timeout_ms`)? */
static bool hnp_has_message(fixture_t *fx, int timeout_ms)
{
    struct pollfd pfd = {.fd = fx->hnp_peer, .events = POLLIN};

    return poll(&pfd, 1, timeout_ms) == 1;
}

/* The next message to mpirun: its type, seq and status; `text_out` gets its string payload. */
static void hnp_expect(fixture_t *fx, crmpi_ctl_type_t type, uint32_t seq, int status,
                       char **text_out)
{
    crmpi_ctl_msg_t msg;
    crmpi_buf_t buf;
    const char *text = NULL;

    assert_true(hnp_has_message(fx, 10000));
    assert_int_equal(crmpi_ctl_recv(fx->hnp_peer, &msg), CRMPI_OK);
    assert_int_equal(msg.hdr.type, type);
    assert_int_equal(msg.hdr.seq, seq);
    assert_int_equal(msg.hdr.status, status);
    crmpi_buf_init_read(&buf, msg.payload, msg.hdr.len);
    assert_int_equal(crmpi_buf_get_str(&buf, &text), CRMPI_OK);
    *text_out = strdup(text);
    crmpi_ctl_msg_free(&msg);
}

/* What the agent's loop does: wait until the copy's fd is readable, then hand it over. */
static void copy_wait(fixture_t *fx)
{
    struct pollfd pfd = {.fd = crmpi_snapc_local_copy_fd(&fx->local), .events = POLLIN};

    assert_true(pfd.fd >= 0);
    assert_int_equal(poll(&pfd, 1, 30000), 1);
    crmpi_snapc_local_copy_done(&fx->local);
    assert_int_equal(crmpi_snapc_local_copy_fd(&fx->local), -1);
    assert_false(fx->local.images_pending);
    assert_false(path_exists(fx->images));
}

/* The copy runs while the caller goes on; steps that would start another checkpoint are
 * refused meanwhile; then CKPT_STORED carries the rank's files. */
static void test_store_in_thread(void **state)
{
    fixture_t *fx = *state;
    crmpi_filem_rank_entry_t entry = {0};
    char *text;

    assert_int_equal(crmpi_snapc_local_copy_fd(&fx->local), -1);
    assert_int_equal(crmpi_fault_configure("filem_copy_pause"), CRMPI_OK);
    from_hnp(fx, CRMPI_CTL_CKPT_STORE, TEST_SEQ, fx->dest);
    /* Back at once (the copy waits 3 s), nothing reported yet. */
    assert_true(crmpi_snapc_local_copy_fd(&fx->local) >= 0);
    assert_true(fx->local.images_pending);
    assert_false(hnp_has_message(fx, 0));

    from_hnp(fx, CRMPI_CTL_CKPT_BEGIN, TEST_SEQ + 1, NULL);
    hnp_expect(fx, CRMPI_CTL_CKPT_BOOKMARKS, TEST_SEQ + 1, CRMPI_ERR_RESOURCE_BUSY, &text);
    assert_string_equal(text, "its agent is still copying the images of checkpoint 7 to "
                              "stable storage");
    free(text);
    assert_false(fx->local.in_checkpoint);
    from_hnp(fx, CRMPI_CTL_CKPT_DUMP, TEST_SEQ + 1, NULL);
    hnp_expect(fx, CRMPI_CTL_CKPT_DUMPED, TEST_SEQ + 1, CRMPI_ERR_RESOURCE_BUSY, &text);
    free(text);
    from_hnp(fx, CRMPI_CTL_CKPT_STORE, TEST_SEQ + 1, fx->dest);
    hnp_expect(fx, CRMPI_CTL_CKPT_STORED, TEST_SEQ + 1, CRMPI_ERR_RESOURCE_BUSY, &text);
    free(text);
    /* Nothing reached the rank. */
    struct pollfd rank = {.fd = fx->rank_peer, .events = POLLIN};
    assert_int_equal(poll(&rank, 1, 0), 0);

    copy_wait(fx);
    hnp_expect(fx, CRMPI_CTL_CKPT_STORED, TEST_SEQ, CRMPI_OK, &text);
    assert_int_equal(crmpi_filem_rank_entry_decode(text, &entry), CRMPI_OK);
    free(text);
    assert_int_equal(entry.rank, 0);
    assert_int_equal(entry.num_files, 3);
    assert_string_equal(entry.files[1].path, "criu/pages-1.img");
    crmpi_filem_rank_entry_clear(&entry);
    assert_true(path_exists(fx->dest));
    assert_false(hnp_has_message(fx, 0));
}

/* An ABORT of the checkpoint being copied leaves the images to the copy's thread, which
 * does not copy; CKPT_STORED still follows (mpirun, done with that checkpoint, only
 * cleans up after it). An ABORT of another checkpoint keeps the agent waiting. */
static void test_abort_during_copy(void **state)
{
    fixture_t *fx = *state;
    char *text;

    assert_int_equal(crmpi_fault_configure("filem_copy_pause"), CRMPI_OK);
    from_hnp(fx, CRMPI_CTL_CKPT_STORE, TEST_SEQ, fx->dest);
    from_hnp(fx, CRMPI_CTL_CKPT_ABORT, TEST_SEQ, NULL);
    assert_true(path_exists(fx->images));
    assert_true(fx->local.images_pending);
    from_hnp(fx, CRMPI_CTL_CKPT_ABORT, TEST_SEQ + 1, NULL);
    assert_true(path_exists(fx->images));
    assert_true(fx->local.images_pending);
    assert_false(hnp_has_message(fx, 0));

    copy_wait(fx);
    hnp_expect(fx, CRMPI_CTL_CKPT_STORED, TEST_SEQ, CRMPI_ERR_CKPT_ABORTED, &text);
    free(text);
    assert_false(path_exists(fx->dest));
}

/* The next checkpoint's start, come while the aborted one's copy still runs (its thread
 * stops at the next file), is held until that copy has ended, then goes to the rank: a
 * checkpoint asked right after a failed one is taken, not refused. */
static void test_begin_held_during_aborted_copy(void **state)
{
    fixture_t *fx = *state;
    struct pollfd rank = {.fd = fx->rank_peer, .events = POLLIN};
    crmpi_ctl_msg_t msg;
    char *text;

    assert_int_equal(crmpi_fault_configure("filem_copy_pause"), CRMPI_OK);
    from_hnp(fx, CRMPI_CTL_CKPT_STORE, TEST_SEQ, fx->dest);
    from_hnp(fx, CRMPI_CTL_CKPT_ABORT, TEST_SEQ, NULL);
    from_hnp(fx, CRMPI_CTL_CKPT_BEGIN, TEST_SEQ + 1, NULL);
    assert_false(hnp_has_message(fx, 0));
    assert_int_equal(poll(&rank, 1, 0), 0);

    copy_wait(fx);
    hnp_expect(fx, CRMPI_CTL_CKPT_STORED, TEST_SEQ, CRMPI_ERR_CKPT_ABORTED, &text);
    free(text);
    assert_int_equal(poll(&rank, 1, 10000), 1);
    assert_int_equal(crmpi_ctl_recv(fx->rank_peer, &msg), CRMPI_OK);
    assert_int_equal(msg.hdr.type, CRMPI_CTL_CKPT_BEGIN);
    assert_int_equal(msg.hdr.seq, TEST_SEQ + 1);
    crmpi_ctl_msg_free(&msg);
    assert_true(fx->local.in_checkpoint);
    assert_false(hnp_has_message(fx, 0));
}

/* An agent being torn down reports no copy: mpirun would commit it. */
static void test_ending_agent_reports_nothing(void **state)
{
    fixture_t *fx = *state;

    from_hnp(fx, CRMPI_CTL_CKPT_STORE, TEST_SEQ, fx->dest);
    fx->local.ending = true;
    copy_wait(fx);
    assert_false(hnp_has_message(fx, 100));
}

/* A copy that fails says why, as the synchronous one did. */
static void test_copy_fails(void **state)
{
    fixture_t *fx = *state;
    char *text;

    assert_int_equal(crmpi_fault_configure("filem_copy_enospc"), CRMPI_OK);
    capture_begin();
    from_hnp(fx, CRMPI_CTL_CKPT_STORE, TEST_SEQ, fx->dest);
    copy_wait(fx);
    char *err = capture_end();
    assert_non_null(strstr(err, "no space left on the device"));
    free(err);
    hnp_expect(fx, CRMPI_CTL_CKPT_STORED, TEST_SEQ, CRMPI_ERR_OUT_OF_RESOURCE, &text);
    assert_non_null(strstr(text, "failed (the disk is full)"));
    free(text);
    assert_false(path_exists(fx->dest));
}

/* CKPT_STORE with the sequences to keep at the local level; the answer's file list, its
 * levels and the reason for a level that failed. */
static void store_levels(fixture_t *fx, const uint32_t *keep, uint32_t num_keep,
                         const char *partner_addr, crmpi_filem_rank_entry_t *entry_out,
                         char **why_out)
{
    crmpi_ctl_msg_t msg = {.hdr = {.type = CRMPI_CTL_CKPT_STORE, .seq = TEST_SEQ}};
    const char *json = NULL, *why = NULL;
    crmpi_buf_t buf;

    crmpi_buf_init(&buf);
    crmpi_buf_put_str(&buf, fx->dest);
    crmpi_buf_put_u32(&buf, num_keep);
    for (uint32_t i = 0; i < num_keep; i++)
        crmpi_buf_put_u32(&buf, keep[i]);
    crmpi_buf_put_str(&buf, partner_addr);
    crmpi_buf_put_str(&buf, partner_addr[0] ? "partner-node" : "");
    msg.payload = buf.data;
    msg.hdr.len = (uint32_t)buf.len;
    crmpi_snapc_local_from_hnp(&fx->local, &msg);
    crmpi_buf_free(&buf);
    copy_wait(fx);
    assert_true(hnp_has_message(fx, 10000));
    assert_int_equal(crmpi_ctl_recv(fx->hnp_peer, &msg), CRMPI_OK);
    assert_int_equal(msg.hdr.type, CRMPI_CTL_CKPT_STORED);
    assert_int_equal(msg.hdr.status, CRMPI_OK);
    crmpi_buf_init_read(&buf, msg.payload, msg.hdr.len);
    assert_int_equal(crmpi_buf_get_str(&buf, &json), CRMPI_OK);
    assert_int_equal(crmpi_buf_get_str(&buf, &why), CRMPI_OK);
    assert_int_equal(crmpi_buf_get_done(&buf), CRMPI_OK);
    assert_int_equal(crmpi_filem_rank_entry_decode(json, entry_out), CRMPI_OK);
    *why_out = strdup(why);
    crmpi_ctl_msg_free(&msg);
}

/* The local level: the images stay on this node (checksummed, renamed into place when
 * complete) and go to the global level from there; this rank's local copies of sequences
 * mpirun no longer lists go. A global copy that fails leaves the sequence held locally. */
static void test_store_levels(void **state)
{
    fixture_t *fx = *state;
    crmpi_filem_rank_entry_t entry = {0};
    char local[4200], path[4400], *why;
    const uint32_t keep[] = {5};

    setenv("TMPDIR", fx->top, 1); /* filem_local_dir's default: <TMPDIR>/crmpi-<uid>/local */
    snprintf(local, sizeof(local), "%s/crmpi-%u/local/4711.ckpt", fx->top, (unsigned)getuid());
    for (unsigned seq = 3; seq <= 5; seq += 2) {
        snprintf(path, sizeof(path), "%s/%u/rank.0/criu", local, seq);
        assert_int_equal(snapc_test_mkdirs(path), 0);
    }
    /* An interrupted copy's leftovers go with the next copy, whatever is kept. */
    snprintf(path, sizeof(path), "%s/5/rank.0.partial/criu", local);
    assert_int_equal(snapc_test_mkdirs(path), 0);
    /* With the local level due, the dump writes there (rank.0.partial), not in the session
     * directory; the copy seals it in place and renames it. */
    crmpi_filem_tree_remove(fx->images);
    free(fx->images);
    assert_true(asprintf(&fx->images, "%s/%d/rank.0.partial", local, TEST_SEQ) > 0);
    setup_images(fx);
    fx->local.dump_levels = CRMPI_FILEM_LEVEL_LOCAL | CRMPI_FILEM_LEVEL_GLOBAL;
    snprintf(fx->local.jobdir, sizeof(fx->local.jobdir), "%s/global/4711.ckpt", fx->top);
    store_levels(fx, keep, 1, "", &entry, &why);
    assert_int_equal(entry.levels, CRMPI_FILEM_LEVEL_LOCAL | CRMPI_FILEM_LEVEL_GLOBAL);
    assert_int_equal(entry.num_files, 3);
    assert_string_equal(why, "");
    free(why);
    crmpi_filem_rank_entry_clear(&entry);
    snprintf(path, sizeof(path), "%s/7/rank.0/criu/pages-1.img", local);
    assert_true(path_exists(path));
    assert_true(path_exists(fx->dest));
    snprintf(path, sizeof(path), "%s/3", local);
    assert_false(path_exists(path));
    snprintf(path, sizeof(path), "%s/5/rank.0", local);
    assert_true(path_exists(path));
    snprintf(path, sizeof(path), "%s/5/rank.0.partial", local);
    assert_false(path_exists(path));

    /* Again, the global copy failing: held locally, and said why. */
    setup_images(fx);
    crmpi_filem_tree_remove(fx->dest);
    assert_int_equal(crmpi_fault_configure("filem_global_copy_fail"), CRMPI_OK);
    capture_begin();
    store_levels(fx, keep, 1, "", &entry, &why);
    free(capture_end());
    assert_int_equal(entry.levels, CRMPI_FILEM_LEVEL_LOCAL);
    assert_non_null(strstr(why, "copying the images to"));
    free(why);
    crmpi_filem_rank_entry_clear(&entry);
    crmpi_fault_configure(NULL);

    /* The partner level, through a receiver on this node (which stores into the same local
     * directory here): held at every level, the entry naming the partner's node. */
    crmpi_filem_partner_server_t *server = NULL;
    char addr[64];
    uint8_t key[sizeof(fx->local.partner_key)];

    memset(key, 0x5a, sizeof(key));
    memcpy(fx->local.partner_key, key, sizeof(key));
    fx->local.partner_key_len = sizeof(key);
    assert_int_equal(
        crmpi_filem_partner_serve("127.0.0.1", key, sizeof(key), &server, addr, sizeof(addr)),
        CRMPI_OK);
    fx->local.dump_levels = CRMPI_FILEM_LEVELS_ALL;
    setup_images(fx);
    crmpi_filem_tree_remove(fx->dest);
    store_levels(fx, keep, 1, addr, &entry, &why);
    assert_int_equal(entry.levels, CRMPI_FILEM_LEVELS_ALL);
    assert_string_equal(entry.partner, "partner-node");
    assert_string_equal(why, "");
    free(why);
    crmpi_filem_rank_entry_clear(&entry);
    snprintf(path, sizeof(path), "%s/7/rank.0/criu/pages-1.img", local);
    assert_true(path_exists(path));
    /* A sender without the job's key is refused: held at the other levels, and said why. */
    fx->local.partner_key[0] ^= 1;
    setup_images(fx);
    crmpi_filem_tree_remove(fx->dest);
    capture_begin();
    store_levels(fx, keep, 1, addr, &entry, &why);
    free(capture_end());
    assert_int_equal(entry.levels, CRMPI_FILEM_LEVEL_LOCAL | CRMPI_FILEM_LEVEL_GLOBAL);
    assert_null(entry.partner);
    assert_non_null(strstr(why, "partner level"));
    free(why);
    crmpi_filem_rank_entry_clear(&entry);
    crmpi_filem_partner_stop(server);
    fx->local.partner_key_len = 0;
    unsetenv("TMPDIR");
}

/* mpirun's CKPT_PRUNE after committing `seq`: the `num_keep` sequences of `keep` stay; it
 * says there are `num_said` of them (malformed when they differ). */
static void prune_request(fixture_t *fx, uint32_t seq, const uint32_t *keep, uint32_t num_keep,
                          uint32_t num_said)
{
    crmpi_ctl_msg_t msg = {.hdr = {.type = CRMPI_CTL_CKPT_PRUNE, .seq = seq}};
    crmpi_buf_t buf;

    crmpi_buf_init(&buf);
    crmpi_buf_put_u32(&buf, num_said);
    for (uint32_t i = 0; i < num_keep; i++)
        crmpi_buf_put_u32(&buf, keep[i]);
    msg.payload = buf.data;
    msg.hdr.len = (uint32_t)buf.len;
    crmpi_snapc_local_from_hnp(&fx->local, &msg);
    /* A held message is the agent's now (its payload taken, as from the agent's loop). */
    crmpi_ctl_msg_free(&msg);
}

/* Does <local>/<rel> exist? */
static bool local_has(const char *local, const char *rel)
{
    char path[4400];

    snprintf(path, sizeof(path), "%s/%s", local, rel);
    return path_exists(path);
}

/* After a commit, mpirun's CKPT_PRUNE: the rank's node-local copies of the sequences it does
 * not list go at once, and so do the partner copies this agent's receiver took; the sequence
 * whose images wait for their copy stays, and so do other ranks' copies. Also after the
 * rank's CR_STOP, and without an answer; a malformed one removes nothing. */
static void test_prune_after_commit(void **state)
{
    fixture_t *fx = *state;
    char local[4200], path[4400], why[256];
    const uint32_t kept_then[] = {3}, keep[] = {5};
    crmpi_filem_partner_server_t *server = NULL;
    char addr[64];
    uint8_t key[32];

    setenv("TMPDIR", fx->top, 1); /* filem_local_dir's default: <TMPDIR>/crmpi-<uid>/local */
    snprintf(local, sizeof(local), "%s/crmpi-%u/local/4711.ckpt", fx->top, (unsigned)getuid());
    snprintf(fx->local.jobdir, sizeof(fx->local.jobdir), "%s/global/4711.ckpt", fx->top);
    const char *const dirs[] = {"3/rank.0/criu", "3/rank.1/criu", "4/rank.0.partial/criu",
                                "5/rank.0/criu", "6/rank.0.partial/criu"};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", local, dirs[i]);
        assert_int_equal(snapc_test_mkdirs(path), 0);
    }
    /* Rank 2 of another node sent its copy of sequence 3 here (the partner level). */
    memset(key, 0x5a, sizeof(key));
    assert_int_equal(
        crmpi_filem_partner_serve("127.0.0.1", key, sizeof(key), &server, addr, sizeof(addr)),
        CRMPI_OK);
    fx->local.partner = server;
    assert_int_equal(crmpi_filem_partner_send(addr, key, sizeof(key), fx->local.jobdir, 3, 2,
                                              fx->images, kept_then, 1, why, sizeof(why)),
                     CRMPI_OK);
    assert_true(local_has(local, "3/rank.2/criu/pages-1.img"));

    /* Checkpoint 6 is dumped (into the local level) and waits for its copy. */
    fx->local.seq = 6;
    fx->local.images_pending = true;
    fx->local.rank_stopped = true;
    fx->local.rank_ready = false;

    capture_begin();
    prune_request(fx, 5, keep, 1, 2); /* malformed: more sequences than it carries */
    char *err = capture_end();
    assert_non_null(strstr(err, "malformed CKPT_PRUNE"));
    free(err);
    assert_true(local_has(local, "3/rank.0"));

    prune_request(fx, 5, keep, 1, 1);
    assert_false(local_has(local, "3/rank.0"));
    assert_false(local_has(local, "3/rank.2"));
    assert_true(local_has(local, "3/rank.1/criu")); /* another agent's rank */
    assert_false(local_has(local, "4"));            /* an interrupted copy, and its directory */
    assert_true(local_has(local, "5/rank.0/criu"));
    assert_true(local_has(local, "6/rank.0.partial/criu"));
    assert_false(hnp_has_message(fx, 0));
    struct pollfd rank = {.fd = fx->rank_peer, .events = POLLIN};
    assert_int_equal(poll(&rank, 1, 0), 0);

    /* Its copy stored, 6 is not kept either at the next commit's prune. */
    fx->local.images_pending = false;
    prune_request(fx, 5, keep, 1, 1);
    assert_false(local_has(local, "6"));
    assert_true(local_has(local, "5/rank.0/criu"));

    crmpi_snapc_local_close(&fx->local);
    unsetenv("TMPDIR");
}

/* The rank's CR_APP_CKPT: the agent keeps the backup file's path and tells mpirun. */
static void app_request(fixture_t *fx, const char *path)
{
    crmpi_ctl_msg_t msg = {.hdr = {.type = CRMPI_CTL_CR_APP_CKPT}};
    crmpi_buf_t buf;

    crmpi_buf_init(&buf);
    crmpi_buf_put_str(&buf, path);
    msg.payload = buf.data;
    msg.hdr.len = (uint32_t)buf.len;
    crmpi_snapc_local_app_request(&fx->local, &msg);
    crmpi_buf_free(&buf);
}

/* A CKPT_DUMP of an application checkpoint. */
static void app_dump_request(fixture_t *fx)
{
    crmpi_ctl_msg_t msg = {.hdr = {.type = CRMPI_CTL_CKPT_DUMP, .seq = TEST_SEQ}};
    crmpi_buf_t buf;

    crmpi_buf_init(&buf);
    crmpi_buf_put_u32(&buf, CRMPI_SNAPC_APP);
    crmpi_buf_put_u32(&buf, 0);
    crmpi_buf_put_str(&buf, "");
    crmpi_buf_put_u32(&buf, CRMPI_FILEM_LEVEL_GLOBAL);
    crmpi_buf_put_str(&buf, fx->dest);
    msg.payload = buf.data;
    msg.hdr.len = (uint32_t)buf.len;
    crmpi_snapc_local_from_hnp(&fx->local, &msg);
    /* A held message is the agent's now (its payload taken, as from the agent's loop). */
    crmpi_ctl_msg_free(&msg);
}

/* What the fake application dump was given. */
static char fake_backup_path[4096], fake_dir[4096];

static int fake_app_dump(const char *backup_path, const char *dir,
                         crmpi_snapc_dump_result_t *result)
{
    snprintf(fake_backup_path, sizeof(fake_backup_path), "%s", backup_path);
    snprintf(fake_dir, sizeof(fake_dir), "%s", dir);
    file_write(dir, "backup", "the heap");
    result->image_bytes = 8;
    return CRMPI_OK;
}

static void test_app_request_passed_up(void **state)
{
    fixture_t *fx = *state;
    crmpi_ctl_msg_t msg;
    crmpi_buf_t buf;
    uint32_t rank = 99;

    app_request(fx, "/data/stencil.0.back");
    assert_string_equal(fx->local.app_backup, "/data/stencil.0.back");
    assert_true(hnp_has_message(fx, 10000));
    assert_int_equal(crmpi_ctl_recv(fx->hnp_peer, &msg), CRMPI_OK);
    assert_int_equal(msg.hdr.type, CRMPI_CTL_AGENT_APP_CKPT);
    crmpi_buf_init_read(&buf, msg.payload, msg.hdr.len);
    assert_int_equal(crmpi_buf_get_u32(&buf, &rank), CRMPI_OK);
    assert_int_equal(rank, 0);
    crmpi_ctl_msg_free(&msg);

    /* A relative path is no path: the agent keeps none, and the dump will say so. */
    app_request(fx, "stencil.0.back");
    assert_string_equal(fx->local.app_backup, "");
}

static void test_app_dump_stores_the_backup(void **state)
{
    fixture_t *fx = *state;
    crmpi_ctl_msg_t msg;
    char *pheap_dir, *rank_json;
    FILE *f;
    char json[4096] = "";

    fx->local.images_pending = false;
    fx->local.app_dump = fake_app_dump;
    app_request(fx, "/data/stencil.0.back");
    assert_int_equal(crmpi_ctl_recv(fx->hnp_peer, &msg), CRMPI_OK); /* AGENT_APP_CKPT */
    crmpi_ctl_msg_free(&msg);
    app_dump_request(fx);
    assert_true(hnp_has_message(fx, 10000));
    assert_int_equal(crmpi_ctl_recv(fx->hnp_peer, &msg), CRMPI_OK);
    assert_int_equal(msg.hdr.type, CRMPI_CTL_CKPT_DUMPED);
    assert_int_equal(msg.hdr.status, CRMPI_OK);
    crmpi_ctl_msg_free(&msg);
    assert_true(asprintf(&pheap_dir, "%s/pheap", fx->images) > 0);
    assert_string_equal(fake_backup_path, "/data/stencil.0.back");
    assert_string_equal(fake_dir, pheap_dir);
    /* rank.json says which checkpointer, and where the backup goes back at a restart. */
    assert_true(asprintf(&rank_json, "%s/rank.json", fx->images) > 0);
    assert_non_null(f = fopen(rank_json, "r"));
    assert_true(fread(json, 1, sizeof(json) - 1, f) > 0);
    fclose(f);
    assert_non_null(strstr(json, "\"pheap\""));
    assert_non_null(strstr(json, "/data/stencil.0.back"));
    assert_true(fx->local.images_pending);
    free(pheap_dir);
    free(rank_json);
}

static void test_app_dump_without_backup_fails(void **state)
{
    fixture_t *fx = *state;
    char *text;

    fx->local.images_pending = false;
    fx->local.app_dump = fake_app_dump;
    app_dump_request(fx); /* the rank never asked */
    hnp_expect(fx, CRMPI_CTL_CKPT_DUMPED, TEST_SEQ, CRMPI_ERR_NOT_FOUND, &text);
    assert_non_null(strstr(text, "named no backup file"));
    free(text);
    assert_false(path_exists(fx->images));

    fx->local.app_dump = NULL; /* a build without the crs framework */
    app_dump_request(fx);
    hnp_expect(fx, CRMPI_CTL_CKPT_DUMPED, TEST_SEQ, CRMPI_ERR_NOT_SUPPORTED, &text);
    free(text);
}

/* mpirun's news for MPIX_Checkpoint reach the rank as they are, outside any checkpoint;
 * not once the rank left checkpoints (CR_STOP, in MPI_Finalize), where it would take them
 * for the reply to its FINALIZE. */
static void test_app_answers_passed_down(void **state)
{
    fixture_t *fx = *state;
    crmpi_ctl_type_t types[] = {CRMPI_CTL_CKPT_APP_WANTED, CRMPI_CTL_CKPT_APP_DONE};

    for (size_t i = 0; i < 2; i++) {
        crmpi_ctl_msg_t msg = {.hdr = {.type = types[i], .seq = 3}}, got;

        crmpi_snapc_local_from_hnp(&fx->local, &msg);
        assert_int_equal(crmpi_ctl_recv(fx->rank_peer, &got), CRMPI_OK);
        assert_int_equal(got.hdr.type, types[i]);
        assert_int_equal(got.hdr.seq, 3);
        crmpi_ctl_msg_free(&got);
    }
    fx->local.rank_stopped = true;
    for (size_t i = 0; i < 2; i++) {
        crmpi_ctl_msg_t msg = {.hdr = {.type = types[i], .seq = 4}};

        crmpi_snapc_local_from_hnp(&fx->local, &msg);
    }
    struct pollfd rank = {.fd = fx->rank_peer, .events = POLLIN};
    assert_int_equal(poll(&rank, 1, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_app_request_passed_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_app_dump_stores_the_backup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_app_dump_without_backup_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_app_answers_passed_down, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_in_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_during_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_begin_held_during_aborted_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ending_agent_reports_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_levels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prune_after_commit, setup, teardown),
    };

    crmpi_log_set_who("test_snapc_local");
    test_env_clear_mca();
    setenv("CRMPI_PARAM_FILE", "", 1);
    unsetenv("CRMPI_FAULT");
    if (crmpi_catalog_register_all() != CRMPI_OK)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
