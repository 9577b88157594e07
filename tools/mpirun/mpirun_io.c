/*
 * mpirun_io.c: the ranks' output (mpirun.h). Each agent's stdout and stderr (its rank's)
 * reach mpirun through the launcher's pipes, or over the agent's control connection when it
 * runs on another node (plm.h), and go to mpirun's own, as they come or, with --tag-output,
 * a whole line at a time prefixed with "[jobid,rank]<stream>:". They wait in a queue per
 * stream for mpirun's stdout or stderr to be writable, so that a reader that does not keep
 * up (or none at all) never stops the loop that checkpoints and tears down the job; past
 * MPIRUN_OUTQ_HIGH queued, the loop stops reading the agents' pipes until it drains.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#include "mpirun.h"

/* Queue `len` bytes for mpirun's stdout (fd 1) or stderr (fd 2), and write what can be
 * written at once. */
static void mpirun_write_all(mpirun_state_t *st, int fd, const char *data, size_t len)
{
    mpirun_outq_t *q = &st->outq[fd == 2];

    if (q->dropped || len == 0)
        return;
    if (q->off == q->len)
        q->off = q->len = 0;
    if (q->len + len > q->cap) {
        size_t cap = q->cap ? q->cap : 65536;
        while (cap < q->len - q->off + len)
            cap *= 2;
        if (q->off > 0) { /* compact first */
            memmove(q->data, q->data + q->off, q->len - q->off);
            q->len -= q->off;
            q->off = 0;
        }
        if (q->len + len > q->cap) {
            char *grown = realloc(q->data, cap);
            if (!grown) {
                crmpi_log_warn("out of memory queueing the ranks' output; some is lost");
                return;
            }
            q->data = grown;
            q->cap = cap;
        }
    }
    memcpy(q->data + q->len, data, len);
    q->len += len;
    mpirun_output_drain(st, fd == 2);
}

size_t mpirun_output_queued(const mpirun_state_t *st, int is_err)
{
    const mpirun_outq_t *q = &st->outq[is_err != 0];

    return q->dropped ? 0 : q->len - q->off;
}

void mpirun_output_drain(mpirun_state_t *st, int is_err)
{
    mpirun_outq_t *q = &st->outq[is_err != 0];
    struct pollfd pfd = {.fd = is_err ? 2 : 1, .events = POLLOUT};

    /* A pipe that polls writable takes PIPE_BUF bytes without blocking; a file or a
     * terminal always polls writable. The descriptor stays blocking: it is shared with
     * whatever started mpirun. */
    while (q->off < q->len && !q->dropped && poll(&pfd, 1, 0) > 0) {
        size_t chunk = q->len - q->off < PIPE_BUF ? q->len - q->off : PIPE_BUF;
        ssize_t n = write(pfd.fd, q->data + q->off, chunk);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))) {
            q->dropped = true; /* our own stdout is gone; nothing useful to do with it */
            break;
        }
        q->off += (size_t)n;
    }
}

void mpirun_output_finish(mpirun_state_t *st)
{
    for (int is_err = 0; is_err < 2; is_err++) {
        mpirun_outq_t *q = &st->outq[is_err];

        while (q->off < q->len && !q->dropped) {
            ssize_t n = write(is_err ? 2 : 1, q->data + q->off, q->len - q->off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                break;
            q->off += (size_t)n;
        }
        free(q->data);
        *q = (mpirun_outq_t){0};
    }
}

static void mpirun_emit_line(mpirun_state_t *st, int rank, int out_fd, const char *stream,
                             const char *line, size_t len)
{
    char prefix[64];
    int plen = snprintf(prefix, sizeof(prefix), "[%llu,%d]<%s>:", (unsigned long long)st->job.jobid,
                        rank, stream);
    mpirun_write_all(st, out_fd, prefix, (size_t)plen);
    mpirun_write_all(st, out_fd, line, len);
}

/* With --tag-output, whole lines only, each tagged. */
void mpirun_output(mpirun_state_t *st, int rank, int is_err, const char *data, size_t len)
{
    mpirun_agent_t *agent = &st->agents[rank];
    char *line = is_err ? agent->err_line : agent->out_line;
    size_t *line_len = is_err ? &agent->err_len : &agent->out_len;
    size_t cap = is_err ? sizeof(agent->err_line) : sizeof(agent->out_line);
    int out_fd = is_err ? 2 : 1;
    const char *stream = is_err ? "stderr" : "stdout";

    if (!st->opts->tag_output) {
        mpirun_write_all(st, out_fd, data, len);
        return;
    }
    for (size_t i = 0; i < len; i++) {
        line[(*line_len)++] = data[i];
        if (data[i] == '\n' || *line_len == cap) {
            mpirun_emit_line(st, rank, out_fd, stream, line, *line_len);
            *line_len = 0;
        }
    }
}

/* A partial line of one stream, ended. */
static void mpirun_output_flush(mpirun_state_t *st, int rank, int is_err)
{
    mpirun_agent_t *agent = &st->agents[rank];
    char *line = is_err ? agent->err_line : agent->out_line;
    size_t *line_len = is_err ? &agent->err_len : &agent->out_len;
    int out_fd = is_err ? 2 : 1;

    if (st->opts->tag_output && *line_len) {
        mpirun_emit_line(st, rank, out_fd, is_err ? "stderr" : "stdout", line, *line_len);
        mpirun_write_all(st, out_fd, "\n", 1);
        *line_len = 0;
    }
}

void mpirun_output_end(mpirun_state_t *st, int rank)
{
    mpirun_output_flush(st, rank, 0);
    mpirun_output_flush(st, rank, 1);
}

void mpirun_forward(mpirun_state_t *st, int rank, int is_err)
{
    int *fd = is_err ? &st->job.agents[rank].err_fd : &st->job.agents[rank].out_fd;
    char data[8192];

    ssize_t n = read(*fd, data, sizeof(data));
    if (n < 0 && errno == EINTR) {
        return;
    }
    if (n <= 0) {
        mpirun_output_flush(st, rank, is_err);
        close(*fd);
        *fd = -1;
        return;
    }
    mpirun_output(st, rank, is_err, data, (size_t)n);
}
