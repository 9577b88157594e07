/*
 * plm_ompi_io.c: what Open MPI's mpirun writes on its stdout and stderr (plm_ompi.h).
 *
 * The ranks' output does not come this way (the agents send it over their control
 * connections). What comes is of two kinds, told apart by Open MPI's --tag-output: lines of
 * the agents themselves ("[1,3]<stderr>:crmpi-agent[3]: error: ..."), which go on to
 * mpirun's stderr (or stdout) without the tag, as the local component's would; and Open
 * MPI's own words (its help messages, its launcher's errors), which are kept for the one
 * line mpirun says when the launch fails, and shown as they come at plm_base_verbose 10.
 */
#include "config.h"

#include "plm_ompi.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "plm_base.h"

/* plm_base_verbose from which Open MPI's own words are shown as they come. */
#define PLM_OMPI_VERBOSE_WORDS 10

static void plm_ompi_io_write(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* mpirun's own output is gone: nothing to do with the text */
        data += n;
        len -= (size_t)n;
    }
}

/*
 * The length of Open MPI's tag at the start of `line` ("[1,3]<stderr>:"), 0 when the line
 * has none; *to_stdout_out tells the stream the tag names.
 */
static size_t plm_ompi_io_tag(const char *line, size_t len, int *to_stdout_out)
{
    static const char *const streams[] = {"<stdout>:", "<stderr>:", "<stddiag>:"};
    size_t at = 1;

    if (len < 2 || line[0] != '[')
        return 0;
    while (at < len && (isdigit((unsigned char)line[at]) || line[at] == ','))
        at++;
    if (at == 1 || at >= len || line[at] != ']')
        return 0;
    at++;
    for (size_t s = 0; s < sizeof(streams) / sizeof(streams[0]); s++) {
        size_t tag_len = strlen(streams[s]);

        if (len - at >= tag_len && memcmp(line + at, streams[s], tag_len) == 0) {
            *to_stdout_out = s == 0;
            return at + tag_len;
        }
    }
    return 0;
}

/* One whole line (with its newline, unless the stream ended without one). */
static void plm_ompi_io_line(plm_ompi_state_t *state, const char *line, size_t len)
{
    int to_stdout = 0;
    size_t tag = plm_ompi_io_tag(line, len, &to_stdout);

    if (tag) {
        plm_ompi_io_write(to_stdout ? 1 : 2, line + tag, len - tag);
        state->agent_lines++;
        return;
    }
    if (plm_base_verbose() >= PLM_OMPI_VERBOSE_WORDS) {
        plm_ompi_io_write(2, "plm:ompi: Open MPI's mpirun: ", 29);
        plm_ompi_io_write(2, line, len);
    }
    if (state->words_len < sizeof(state->words) - 1) {
        size_t room = sizeof(state->words) - 1 - state->words_len;
        size_t take = len < room ? len : room;

        memcpy(state->words + state->words_len, line, take);
        state->words_len += take;
        state->words[state->words_len] = '\0';
    }
}

void plm_ompi_io_read(plm_ompi_state_t *state, plm_ompi_stream_t *stream)
{
    char data[8192];

    while (stream->fd >= 0) {
        ssize_t n = read(stream->fd, data, sizeof(data));

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            if (stream->len)
                plm_ompi_io_line(state, stream->line, stream->len);
            stream->len = 0;
            close(stream->fd);
            stream->fd = -1;
            return;
        }
        for (ssize_t i = 0; i < n; i++) {
            stream->line[stream->len++] = data[i];
            if (data[i] == '\n' || stream->len == sizeof(stream->line)) {
                plm_ompi_io_line(state, stream->line, stream->len);
                stream->len = 0;
            }
        }
    }
}

void plm_ompi_io_first_words(const plm_ompi_state_t *state, char *buf, size_t len)
{
    const char *line = state->words;

    buf[0] = '\0';
    while (*line) {
        size_t line_len = strcspn(line, "\n");
        size_t start = 0, end = line_len;
        bool says = false;

        while (start < end && isspace((unsigned char)line[start]))
            start++;
        while (end > start && isspace((unsigned char)line[end - 1]))
            end--;
        for (size_t i = start; i < end; i++)
            says = says || isalnum((unsigned char)line[i]);
        if (says) {
            snprintf(buf, len, "%.*s", (int)(end - start), line + start);
            return;
        }
        line += line_len + (line[line_len] == '\n');
    }
}
