/*
 * mpirun_io.c: the ranks' output (mpirun.h). Each agent's stdout and stderr (its rank's)
 * reach mpirun through the launcher's pipes, or over the agent's control connection when it
 * runs on another node (plm.h), and go to mpirun's own, as they come or, with --tag-output,
 * a whole line at a time prefixed with "[jobid,rank]<stream>:".
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "mpirun.h"

static void mpirun_write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return; /* our own stdout is gone; nothing useful to do with the output */
        }
        data += n;
        len -= (size_t)n;
    }
}

static void mpirun_emit_line(mpirun_state_t *st, int rank, int out_fd, const char *stream,
                             const char *line, size_t len)
{
    char prefix[64];
    int plen = snprintf(prefix, sizeof(prefix), "[%llu,%d]<%s>:", (unsigned long long)st->job.jobid,
                        rank, stream);
    mpirun_write_all(out_fd, prefix, (size_t)plen);
    mpirun_write_all(out_fd, line, len);
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
        mpirun_write_all(out_fd, data, len);
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
        mpirun_write_all(out_fd, "\n", 1);
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
