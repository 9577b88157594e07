/*
 * test_snapc_global.c: the coordinator's steps driven by hand, the agents' answers given by
 * the test: a checkpoint's way to the continue, and an agent's refusal (CKPT_ABORT) at that
 * step, which must end the checkpoint rather than leave the coordinator waiting for an
 * answer that never comes.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "crmpi_status.h"
#include "ctl.h"
#include "filem.h"
#include "filem_fs.h"
#include "snapc.h"
#include "snapc_global.h"

#define TST_NP 2

/* What the coordinator sent each agent last. */
static crmpi_ctl_type_t tst_sent[TST_NP];
static uint32_t tst_seq;

static int tst_send(void *arg, int rank, crmpi_ctl_type_t type, uint32_t seq,
                    const crmpi_buf_t *payload)
{
    (void)arg;
    (void)payload;
    assert_true(rank >= 0 && rank < TST_NP);
    tst_sent[rank] = type;
    tst_seq = seq;
    return CRMPI_OK;
}

static void tst_manifest(void *arg, struct crmpi_filem_manifest *manifest)
{
    (void)arg;
    (void)manifest;
}

/* An agent's answer to the current step. */
static void tst_answer(crmpi_snapc_global_t *global, int rank, crmpi_ctl_type_t type, int status,
                       const crmpi_buf_t *payload)
{
    crmpi_ctl_msg_t msg = {
        .hdr = {.type = (uint16_t)type,
                .seq = tst_seq,
                .status = status,
                .len = payload ? (uint32_t)payload->len : 0},
        .payload = payload ? payload->data : NULL,
    };
    crmpi_snapc_global_agent_msg(global, rank, &msg);
}

/* Every agent answers `type`, with an empty payload or the given one. */
static void tst_all_answer(crmpi_snapc_global_t *global, crmpi_ctl_type_t type,
                           const crmpi_buf_t *payload)
{
    for (int rank = 0; rank < TST_NP; rank++)
        tst_answer(global, rank, type, CRMPI_OK, payload);
}

/* A coordinator whose checkpoint, asked for through tool_fd, has dumped every rank and
 * sent them CKPT_CONTINUE. */
static crmpi_snapc_global_t *tst_checkpoint_to_continue(const char *jobdir, int tool_fd)
{
    crmpi_snapc_global_params_t params = {
        .np = TST_NP,
        .jobid = 4242,
        .program = "tst",
        .enabled = true,
        .jobdir = jobdir,
        .keep = 2,
        .timeout_s = 60,
        .send_fn = tst_send,
        .manifest_fn = tst_manifest,
    };
    crmpi_snapc_global_t *global = NULL;
    crmpi_buf_t buf;

    assert_int_equal(crmpi_snapc_global_create(&params, &global), CRMPI_OK);
    crmpi_buf_init(&buf);
    crmpi_buf_put_u32(&buf, 0); /* flags */
    crmpi_ctl_msg_t request = {
        .hdr = {.type = CRMPI_CTL_TOOL_CKPT, .len = (uint32_t)buf.len},
        .payload = buf.data,
    };
    crmpi_snapc_global_tool(global, tool_fd, &request);
    crmpi_buf_free(&buf);
    assert_int_equal(tst_sent[0], CRMPI_CTL_CKPT_BEGIN);

    crmpi_buf_init(&buf);
    crmpi_snapc_marks_put(&buf, NULL, 0); /* no peer was sent anything */
    tst_all_answer(global, CRMPI_CTL_CKPT_BOOKMARKS, &buf);
    crmpi_buf_free(&buf);
    assert_int_equal(tst_sent[1], CRMPI_CTL_CKPT_EXPECT);
    tst_all_answer(global, CRMPI_CTL_CKPT_DRAINED, NULL);
    assert_int_equal(tst_sent[1], CRMPI_CTL_CKPT_SUSPEND);
    tst_all_answer(global, CRMPI_CTL_CKPT_READY, NULL);
    assert_int_equal(tst_sent[1], CRMPI_CTL_CKPT_DUMP);
    crmpi_buf_init(&buf);
    crmpi_buf_put_u64(&buf, 4096); /* image bytes */
    crmpi_buf_put_u64(&buf, 1000); /* dump ns */
    tst_all_answer(global, CRMPI_CTL_CKPT_DUMPED, &buf);
    crmpi_buf_free(&buf);
    assert_int_equal(tst_sent[0], CRMPI_CTL_CKPT_CONTINUE);
    assert_int_equal(tst_sent[1], CRMPI_CTL_CKPT_CONTINUE);
    assert_int_not_equal(crmpi_snapc_global_state(global), CRMPI_SNAPC_IDLE);
    return global;
}

/* A rank killed after its dump: its agent cannot pass CKPT_CONTINUE on and refuses with
 * CKPT_ABORT. The checkpoint ends there (not committed), the tool is told why, and every
 * agent is sent the abort; the coordinator once ignored the refusal and waited forever. */
static void test_abort_at_continue(void **state)
{
    (void)state;
    char top[] = "/tmp/test_snapc_global.XXXXXX", jobdir[64];
    int tool[2];

    assert_non_null(mkdtemp(top));
    snprintf(jobdir, sizeof(jobdir), "%s/4242.ckpt", top);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, tool), 0);
    crmpi_snapc_global_t *global = tst_checkpoint_to_continue(jobdir, tool[0]);

    tst_answer(global, 0, CRMPI_CTL_CKPT_CONTINUED, CRMPI_OK, NULL);
    crmpi_buf_t why;
    crmpi_buf_init(&why);
    crmpi_buf_put_str(&why, "the rank is gone");
    tst_answer(global, 1, CRMPI_CTL_CKPT_ABORT, CRMPI_ERR_PEER_GONE, &why);
    crmpi_buf_free(&why);

    assert_int_equal(crmpi_snapc_global_state(global), CRMPI_SNAPC_IDLE);
    assert_int_equal(tst_sent[0], CRMPI_CTL_CKPT_ABORT);
    assert_int_equal(tst_sent[1], CRMPI_CTL_CKPT_ABORT);
    crmpi_ctl_msg_t reply;
    for (;;) { /* progress lines, then the reply */
        assert_int_equal(crmpi_ctl_recv(tool[1], &reply), CRMPI_OK);
        if (reply.hdr.type == CRMPI_CTL_REPLY)
            break;
        crmpi_ctl_msg_free(&reply);
    }
    assert_int_equal(reply.hdr.status, CRMPI_ERR_CKPT_ABORTED);
    assert_non_null(memmem(reply.payload, reply.hdr.len, "rank 1: the rank is gone", 24));
    assert_non_null(memmem(reply.payload, reply.hdr.len, "mpirun ends the job", 19));
    crmpi_ctl_msg_free(&reply);

    crmpi_snapc_global_destroy(global); /* the reply closed tool[0] */
    close(tool[1]);
    crmpi_filem_tree_remove(top);
}

static void tst_partners_are(const char *const *nodes, int np, const int *expected)
{
    int partners[8];

    assert_int_equal(crmpi_snapc_global_partners(nodes, np, partners), CRMPI_OK);
    for (int r = 0; r < np; r++)
        assert_int_equal(partners[r], expected[r]);
}

/* The partner level's choice: the next node, cyclically, spreading a node's copies over the
 * next node's ranks; none when the job has one node. */
static void test_partner_choice(void **state)
{
    (void)state;
    static const char *const ring[] = {"a", "b", "c"};
    static const char *const pairs[] = {"a", "a", "b", "b"};
    static const char *const uneven[] = {"a", "b", "a", "b", "a", "c"};
    static const char *const one[] = {"a", "a", "a"};
    static const int ring_to[] = {1, 2, 0}, pairs_to[] = {2, 3, 0, 1},
                     uneven_to[] = {1, 5, 3, 5, 1, 0}, one_to[] = {-1, -1, -1};

    tst_partners_are(ring, 3, ring_to);
    tst_partners_are(pairs, 4, pairs_to);
    /* a: 0, 2, 4 -> b's 1, 3, 1; b: 1, 3 -> c's 5; c: 5 -> a's 0. */
    tst_partners_are(uneven, 6, uneven_to);
    tst_partners_are(one, 3, one_to);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_abort_at_continue),
        cmocka_unit_test(test_partner_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
