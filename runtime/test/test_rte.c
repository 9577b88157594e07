/*
 * test_rte.c: the rank's side of the modex (rte.c), the job facts' encoding (job_info.c)
 * and the control framing (ctl.c), against a fake agent thread on a socketpair. The real
 * agent, with PMIx behind it, is exercised by the integration tests.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "crmpi_status.h"
#include "ctl.h"
#include "rte.h"

#define FAKE_MAX_KEYS 16

/* What the fake agent knows: the job facts it hands out and one rank's published keys,
 * which it answers for every peer rank + its index (enough to check the round trip). */
typedef struct fake_agent {
    int fd;                         /* agent's end of the socketpair */
    crmpi_rte_job_info_t info;      /* sent in reply to HELLO */
    char keys[FAKE_MAX_KEYS][64];   /* published keys */
    char values[FAKE_MAX_KEYS][64]; /* and their values */
    size_t lens[FAKE_MAX_KEYS];
    int num_keys;
    int fences;    /* FENCE requests seen */
    int finalized; /* FINALIZE seen */
    int cr_stops;  /* CR_STOP seen */
    int cr_starts; /* CR_START seen */
    int cr_tracks; /* CR_TRACK seen with a userfaultfd after it */
} fake_agent_t;

/* Command types of the reader-thread test (any type but REPLY is a command). */
enum { TEST_CMD_START = 250, TEST_CMD_ANSWER, TEST_CMD_NEXT };

static void *fake_agent_main(void *arg)
{
    fake_agent_t *agent = arg;
    crmpi_ctl_msg_t msg;
    while (crmpi_ctl_recv(agent->fd, &msg) == CRMPI_OK) {
        crmpi_buf_t req, reply;
        int status = CRMPI_OK;
        crmpi_buf_init_read(&req, msg.payload, msg.hdr.len);
        crmpi_buf_init(&reply);
        if (msg.hdr.type == CRMPI_CTL_HELLO) {
            crmpi_rte_job_info_pack(&agent->info, &reply);
        } else if (msg.hdr.type == CRMPI_CTL_MODEX_PUT) {
            const char *key;
            const void *data;
            size_t len;
            crmpi_buf_get_str(&req, &key);
            crmpi_buf_get_bytes(&req, &data, &len);
            status = crmpi_buf_get_done(&req);
            /* The reader test: a command overtakes the reply the main thread waits for. */
            if (status == CRMPI_OK && strcmp(key, "trigger") == 0)
                crmpi_ctl_send(agent->fd, (crmpi_ctl_type_t)TEST_CMD_START, 77, CRMPI_OK, NULL, 0);
            if (status == CRMPI_OK && agent->num_keys < FAKE_MAX_KEYS && len <= 64) {
                snprintf(agent->keys[agent->num_keys], 64, "%s", key);
                memcpy(agent->values[agent->num_keys], data, len);
                agent->lens[agent->num_keys++] = len;
            }
        } else if (msg.hdr.type == CRMPI_CTL_FENCE) {
            agent->fences++;
        } else if (msg.hdr.type == CRMPI_CTL_MODEX_GET) {
            uint32_t peer;
            const char *key;
            crmpi_buf_get_u32(&req, &peer);
            crmpi_buf_get_str(&req, &key);
            status = crmpi_buf_get_done(&req) == CRMPI_OK ? CRMPI_ERR_NOT_FOUND : CRMPI_ERR_PROTO;
            for (int k = 0; k < agent->num_keys && peer < agent->info.size; k++) {
                if (strcmp(agent->keys[k], key) == 0) {
                    crmpi_buf_put_bytes(&reply, agent->values[k], agent->lens[k]);
                    status = CRMPI_OK;
                }
            }
        } else if (msg.hdr.type == CRMPI_CTL_FINALIZE) {
            agent->finalized = 1;
        } else if (msg.hdr.type == CRMPI_CTL_CR_STOP) {
            agent->cr_stops++;
        } else if (msg.hdr.type == CRMPI_CTL_CR_START) {
            agent->cr_starts++;
        } else if (msg.hdr.type == CRMPI_CTL_CR_TRACK) {
            /* No reply: the descriptor follows; an agent takes it (here: counted, closed). */
            int uffd;
            char target[64] = "";
            char link[64];
            if (crmpi_ctl_recv_fd(agent->fd, &uffd) == CRMPI_OK) {
                snprintf(link, sizeof(link), "/proc/self/fd/%d", uffd);
                if (readlink(link, target, sizeof(target) - 1) > 0 && strstr(target, "userfaultfd"))
                    agent->cr_tracks++;
                close(uffd);
            }
            crmpi_buf_free(&reply);
            crmpi_ctl_msg_free(&msg);
            continue;
        } else if (msg.hdr.type == TEST_CMD_ANSWER) {
            /* Not a request: the rank's answer to a command; the agent sends the next. */
            crmpi_ctl_send(agent->fd, (crmpi_ctl_type_t)TEST_CMD_NEXT, msg.hdr.seq, CRMPI_OK, NULL,
                           0);
            crmpi_buf_free(&reply);
            crmpi_ctl_msg_free(&msg);
            continue;
        } else {
            status = CRMPI_ERR_PROTO;
        }
        crmpi_ctl_send(agent->fd, CRMPI_CTL_REPLY, msg.hdr.seq, status,
                       status == CRMPI_OK ? reply.data : NULL, status == CRMPI_OK ? reply.len : 0);
        crmpi_buf_free(&reply);
        crmpi_ctl_msg_free(&msg);
    }
    return NULL;
}

static void test_modex_round_trip(void **state)
{
    int sv[2];
    uint32_t node_of_rank[3] = {0, 0, 1};
    fake_agent_t agent = {.info = {.jobid = 4711,
                                   .rank = 2,
                                   .size = 3,
                                   .local_rank = 0,
                                   .local_size = 1,
                                   .node_id = 1,
                                   .num_nodes = 2,
                                   .node_of_rank = node_of_rank}};
    pthread_t thread;
    char fd_text[16];
    crmpi_rte_job_info_t info;
    void *data = NULL;
    size_t len = 0;

    snprintf(agent.info.nodename, sizeof(agent.info.nodename), "node9");
    snprintf(agent.info.session_dir, sizeof(agent.info.session_dir), "/tmp/s");
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    agent.fd = sv[0];
    assert_int_equal(pthread_create(&thread, NULL, fake_agent_main, &agent), 0);

    unsetenv("CRMPI_CTL_FD");
    assert_int_equal(crmpi_rte_init(), CRMPI_OK); /* a singleton: rank 0 of 1 */
    assert_false(crmpi_rte_connected());
    assert_int_equal(crmpi_rte_job()->rank, 0);
    assert_int_equal(crmpi_rte_job()->size, 1);
    assert_int_equal(crmpi_rte_job()->node_of_rank[0], 0);
    setenv("CRMPI_CTL_FD", "9999", 1);
    assert_int_equal(crmpi_rte_init(), CRMPI_ERR_BAD_PARAM); /* not an open fd */
    snprintf(fd_text, sizeof(fd_text), "%d", sv[1]);
    setenv("CRMPI_CTL_FD", fd_text, 1);
    assert_int_equal(crmpi_rte_init(), CRMPI_OK);
    assert_true(crmpi_rte_connected());
    info = *crmpi_rte_job();
    assert_int_equal(info.jobid, 4711);
    assert_int_equal(info.rank, 2);
    assert_int_equal(info.size, 3);
    assert_int_equal(info.num_nodes, 2);
    assert_int_equal(info.node_of_rank[2], 1);
    assert_string_equal(info.nodename, "node9");
    assert_string_equal(info.session_dir, "/tmp/s");

    assert_int_equal(crmpi_rte_modex_publish("btl.tcp", "addr:1234", 10), CRMPI_OK);
    assert_int_equal(crmpi_rte_modex_publish("empty", "", 0), CRMPI_OK);
    assert_int_equal(crmpi_rte_fence(1), CRMPI_OK);
    assert_int_equal(agent.fences, 1);
    assert_int_equal(crmpi_rte_modex_lookup(1, "btl.tcp", &data, &len), CRMPI_OK);
    assert_int_equal(len, 10);
    assert_memory_equal(data, "addr:1234", 10);
    free(data);
    /* Found but empty is not "not found". */
    assert_int_equal(crmpi_rte_modex_lookup(0, "empty", &data, &len), CRMPI_OK);
    assert_int_equal(len, 0);
    free(data);
    data = NULL;
    assert_int_equal(crmpi_rte_modex_lookup(0, "never.published", &data, &len),
                     CRMPI_ERR_NOT_FOUND);
    assert_null(data);

    assert_int_equal(crmpi_rte_finalize(), CRMPI_OK);
    assert_int_equal(agent.fences, 2); /* finalize fences without data first */
    assert_int_equal(agent.finalized, 1);
    /* After finalize the rte is disconnected. */
    assert_int_equal(crmpi_rte_fence(0), CRMPI_ERR_NOT_FOUND);

    close(sv[1]);
    pthread_join(thread, NULL);
    close(sv[0]);
    unsetenv("CRMPI_CTL_FD");
    /* The facts stay the rank's until it exits (a process initialises once); this one
     * initialises again in the next test, which would drop them unfreed (a leak report). */
    crmpi_rte_job_info_free(&info);
}

/* What the reader thread's command function saw and did (test_reader_thread). */
static struct {
    int commands;      /* TEST_CMD_START handled */
    int fence_rc;      /* of the request it made itself */
    int next_rc;       /* of waiting for TEST_CMD_NEXT */
    uint32_t next_seq; /* TEST_CMD_NEXT's seq */
    pthread_t thread;  /* where it ran */
    volatile int done; /* finished */
} reader_seen;

static void reader_command(crmpi_ctl_msg_t *msg)
{
    crmpi_ctl_msg_t next;

    reader_seen.thread = pthread_self();
    if (msg->hdr.type == TEST_CMD_START) {
        reader_seen.commands++;
        reader_seen.fence_rc = crmpi_rte_fence(0); /* the reader's own request */
        crmpi_rte_command_send(TEST_CMD_ANSWER, msg->hdr.seq, CRMPI_OK, NULL);
        do {
            reader_seen.next_rc = crmpi_rte_command_wait(5000, &next);
        } while (reader_seen.next_rc == CRMPI_ERR_RESOURCE_BUSY);
        if (reader_seen.next_rc == CRMPI_OK) {
            reader_seen.next_seq = next.hdr.type == TEST_CMD_NEXT ? next.hdr.seq : 0;
            crmpi_ctl_msg_free(&next);
        }
        __atomic_store_n(&reader_seen.done, 1, __ATOMIC_RELEASE);
    }
    crmpi_ctl_msg_free(msg);
}

/* With the reader thread, a command that arrives while the main thread waits for a reply
 * goes to the command function on the reader; the main thread still gets its reply; the
 * command function can make requests and wait for further commands; stopping tells the
 * agent and ends the thread, and requests then work as before. */
static void test_reader_thread(void **state)
{
    int sv[2];
    uint32_t node_of_rank[1] = {0};
    fake_agent_t agent = {
        .info = {
            .jobid = 1, .size = 1, .local_size = 1, .num_nodes = 1, .node_of_rank = node_of_rank}};
    pthread_t thread;
    char fd_text[16];

    (void)state;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    agent.fd = sv[0];
    assert_int_equal(pthread_create(&thread, NULL, fake_agent_main, &agent), 0);
    snprintf(fd_text, sizeof(fd_text), "%d", sv[1]);
    setenv("CRMPI_CTL_FD", fd_text, 1);
    assert_int_equal(crmpi_rte_init(), CRMPI_OK);

    assert_int_equal(crmpi_rte_reader_start(reader_command), CRMPI_OK);
    assert_int_equal(agent.cr_starts, 1);
    assert_int_equal(crmpi_rte_modex_publish("trigger", "x", 1), CRMPI_OK);
    /* After CR_START, the rank passed its userfaultfd (and the agent has read it: it
     * answered the request that followed). */
    assert_int_equal(agent.cr_tracks, 1);
    for (int i = 0; i < 5000 && !__atomic_load_n(&reader_seen.done, __ATOMIC_ACQUIRE); i++)
        usleep(1000);
    assert_int_equal(reader_seen.done, 1);
    assert_int_equal(reader_seen.commands, 1);
    assert_false(pthread_equal(reader_seen.thread, pthread_self()));
    assert_int_equal(reader_seen.fence_rc, CRMPI_OK);
    assert_int_equal(reader_seen.next_rc, CRMPI_OK);
    assert_int_equal(reader_seen.next_seq, 77);
    /* A request from the main thread while the reader runs. */
    assert_int_equal(crmpi_rte_modex_publish("after", "y", 1), CRMPI_OK);
    assert_int_equal(crmpi_rte_reader_stop(), CRMPI_OK);
    assert_int_equal(agent.cr_stops, 1);
    assert_int_equal(agent.num_keys, 2);

    assert_int_equal(crmpi_rte_finalize(), CRMPI_OK); /* no reader: direct replies again */
    assert_int_equal(agent.finalized, 1);
    close(sv[1]);
    pthread_join(thread, NULL);
    close(sv[0]);
    unsetenv("CRMPI_CTL_FD");
}

static void test_job_info_rejects_inconsistent_facts(void **state)
{
    uint32_t node_of_rank[2] = {0, 0};
    crmpi_rte_job_info_t info = {
        .rank = 2, .size = 2, .local_size = 1, .num_nodes = 1, .node_of_rank = node_of_rank};
    crmpi_rte_job_info_t out;
    crmpi_buf_t buf, rd;

    /* rank >= size */
    crmpi_buf_init(&buf);
    crmpi_rte_job_info_pack(&info, &buf);
    crmpi_buf_init_read(&rd, buf.data, buf.len);
    assert_int_equal(crmpi_rte_job_info_unpack(&rd, &out), CRMPI_ERR_PROTO);
    /* truncated */
    info.rank = 1;
    crmpi_buf_free(&buf);
    crmpi_buf_init(&buf);
    crmpi_rte_job_info_pack(&info, &buf);
    crmpi_buf_init_read(&rd, buf.data, buf.len - 1);
    assert_int_equal(crmpi_rte_job_info_unpack(&rd, &out), CRMPI_ERR_PROTO);
    /* whole */
    crmpi_buf_init_read(&rd, buf.data, buf.len);
    assert_int_equal(crmpi_rte_job_info_unpack(&rd, &out), CRMPI_OK);
    assert_int_equal(out.rank, 1);
    crmpi_rte_job_info_free(&out);
    crmpi_buf_free(&buf);
}

static void test_ctl_framing_errors(void **state)
{
    int sv[2];
    crmpi_ctl_msg_t msg;
    crmpi_ctl_hdr_t hdr = {.magic = 0xdeadbeef, .version = CRMPI_CTL_VERSION, .len = 0};

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(write(sv[0], &hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    assert_int_equal(crmpi_ctl_recv(sv[1], &msg), CRMPI_ERR_PROTO); /* bad magic */
    hdr.magic = CRMPI_CTL_MAGIC;
    hdr.version = CRMPI_CTL_VERSION + 1;
    assert_int_equal(write(sv[0], &hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    assert_int_equal(crmpi_ctl_recv(sv[1], &msg), CRMPI_ERR_PROTO); /* other version */
    hdr.version = CRMPI_CTL_VERSION;
    hdr.len = 100;
    assert_int_equal(write(sv[0], &hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    assert_int_equal(write(sv[0], "short", 5), 5);
    close(sv[0]);
    assert_int_equal(crmpi_ctl_recv(sv[1], &msg), CRMPI_ERR_PROTO);     /* closed mid-message */
    assert_int_equal(crmpi_ctl_recv(sv[1], &msg), CRMPI_ERR_PEER_GONE); /* orderly close */
    close(sv[1]);

    /* A string field must be one NUL-terminated run; a failed get is sticky. */
    crmpi_buf_t buf, rd;
    const char *text;
    uint32_t value;
    crmpi_buf_init(&buf);
    crmpi_buf_put_bytes(&buf, "ab\0cd", 5);
    crmpi_buf_init_read(&rd, buf.data, buf.len);
    assert_int_equal(crmpi_buf_get_str(&rd, &text), CRMPI_ERR_PROTO);
    assert_int_equal(crmpi_buf_get_u32(&rd, &value), CRMPI_ERR_PROTO);
    assert_int_equal(crmpi_buf_get_done(&rd), CRMPI_ERR_PROTO);
    crmpi_buf_free(&buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modex_round_trip),
        cmocka_unit_test(test_reader_thread),
        cmocka_unit_test(test_job_info_rejects_inconsistent_facts),
        cmocka_unit_test(test_ctl_framing_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
