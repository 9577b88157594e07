/*
 * mpirun_io.c: the ranks' output (mpirun.h). Each agent's stdout and stderr (its rank's)
 * reach mpirun through the launcher's pipes and go to mpirun's own, as they come or, with
 * --tag-output, a whole line at a time prefixed with "[jobid,rank]<stream>:".
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
void mpirun_forward(mpirun_state_t *st, int rank, int is_err)
{
    mpirun_agent_t *agent = &st->agents[rank];
    int *fd = is_err ? &st->job.agents[rank].err_fd : &st->job.agents[rank].out_fd;
    char *line = is_err ? agent->err_line : agent->out_line;
    size_t *line_len = is_err ? &agent->err_len : &agent->out_len;
    size_t cap = is_err ? sizeof(agent->err_line) : sizeof(agent->out_line);
    int out_fd = is_err ? 2 : 1;
    const char *stream = is_err ? "stderr" : "stdout";
    char data[8192];

    ssize_t n = read(*fd, data, sizeof(data));
    if (n < 0 && errno == EINTR) {
        return;
    }
    if (n <= 0) {
        if (st->opts->tag_output && *line_len) {
            mpirun_emit_line(st, rank, out_fd, stream, line, *line_len);
            mpirun_write_all(out_fd, "\n", 1);
            *line_len = 0;
        }
        close(*fd);
        *fd = -1;
        return;
    }
    if (!st->opts->tag_output) {
        mpirun_write_all(out_fd, data, (size_t)n);
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        line[(*line_len)++] = data[i];
        if (data[i] == '\n' || *line_len == cap) {
            mpirun_emit_line(st, rank, out_fd, stream, line, *line_len);
            *line_len = 0;
        }
    }
}
