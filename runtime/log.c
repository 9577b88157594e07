/*
 * log.c: crmpi's logging (log.h).
 *
 * Each line is formatted in memory and written with a single write(2), so that lines of
 * several threads or processes sharing a stderr pipe never interleave (a write of at most
 * PIPE_BUF bytes to a pipe is atomic, pipe(7)).
 */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Room for the common line; longer ones are formatted into a heap buffer. */
#define LOG_LINE_STACK 1024
/* Longest process name kept; "crmpi-agent[12345]" fits with room to spare. */
#define LOG_WHO_MAX 64

/* This process's name in every line; empty until crmpi_log_set_who(). */
static char log_who_name[LOG_WHO_MAX];

/* Error lines held back (crmpi_log_hold_errors), under log_hold_lock. */
static pthread_mutex_t log_hold_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_holding;                /* holding: error lines go to log_held */
static char *log_held;                 /* the held lines, whole, one after another (malloc'ed) */
static size_t log_held_len;            /* bytes at log_held */
static size_t log_first_offset;        /* where the first held line's message starts */
static size_t log_first_len;           /* its length, without the newline */
static char log_first[LOG_LINE_STACK]; /* the first held message, once released */

void crmpi_log_set_who(const char *who)
{
    snprintf(log_who_name, sizeof(log_who_name), "%s", who ? who : "");
}

const char *crmpi_log_who(void)
{
    /* Before set_who, the program's own name still tells the user who is talking. */
    if (log_who_name[0] == '\0')
        return program_invocation_short_name;
    return log_who_name;
}

/* Write all of `len` bytes; retries only on EINTR and short writes, which a line of at most
 * PIPE_BUF bytes to a pipe never has. Failure is ignored: there is nowhere left to report it. */
static void log_line_write(const char *line, size_t len)
{
    while (len > 0) {
        ssize_t written = write(STDERR_FILENO, line, len);
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        line += written;
        len -= (size_t)written;
    }
}

/* Format "<who>: <kind>: " + message + "\n" into `buf` of `size` bytes; returns the length the
 * whole line needs (without the final NUL), as vsnprintf does. */
static size_t log_line_format(char *buf, size_t size, const char *kind, const char *fmt,
                              va_list args)
{
    int prefix_len;
    int message_len;
    size_t used;

    if (kind)
        prefix_len = snprintf(buf, size, "%s: %s: ", crmpi_log_who(), kind);
    else
        prefix_len = snprintf(buf, size, "%s: ", crmpi_log_who());
    if (prefix_len < 0)
        prefix_len = 0;
    used = (size_t)prefix_len < size ? (size_t)prefix_len : size;
    message_len = vsnprintf(buf + used, size - used, fmt, args);
    if (message_len < 0)
        message_len = 0;
    /* One byte for the newline that ends every line. */
    return (size_t)prefix_len + (size_t)message_len + 1;
}

/* Keep an error line instead of writing it; false when not holding (or out of memory). */
static int log_line_hold(const char *kind, const char *line, size_t len)
{
    char *grown;
    int held = 0;

    if (!kind || strcmp(kind, "error") != 0)
        return 0;
    pthread_mutex_lock(&log_hold_lock);
    if (log_holding && (grown = realloc(log_held, log_held_len + len)) != NULL) {
        if (log_held_len == 0) {
            /* The message follows "<who>: error: ". */
            log_first_offset = strlen(crmpi_log_who()) + strlen(": error: ");
            log_first_len = len > log_first_offset ? len - log_first_offset - 1 : 0;
        }
        log_held = grown;
        memcpy(log_held + log_held_len, line, len);
        log_held_len += len;
        held = 1;
    }
    pthread_mutex_unlock(&log_hold_lock);
    return held;
}

void crmpi_log_hold_errors(void)
{
    pthread_mutex_lock(&log_hold_lock);
    log_holding = 1;
    log_held_len = 0;
    pthread_mutex_unlock(&log_hold_lock);
}

const char *crmpi_log_release_errors(int print)
{
    const char *first = NULL;

    pthread_mutex_lock(&log_hold_lock);
    log_holding = 0;
    if (log_held_len > 0) {
        if (print)
            log_line_write(log_held, log_held_len);
        snprintf(log_first, sizeof(log_first), "%.*s", (int)log_first_len,
                 log_held + log_first_offset);
        first = log_first;
    }
    free(log_held);
    log_held = NULL;
    log_held_len = 0;
    pthread_mutex_unlock(&log_hold_lock);
    return first;
}

void crmpi_log_emit(const char *kind, const char *fmt, ...)
{
    char stack_buf[LOG_LINE_STACK];
    char *line = stack_buf;
    size_t size = sizeof(stack_buf);
    size_t needed;
    va_list args;

    va_start(args, fmt);
    needed = log_line_format(stack_buf, size, kind, fmt, args);
    va_end(args);

    if (needed >= size) {
        char *heap_buf = malloc(needed + 1);
        if (heap_buf) {
            line = heap_buf;
            size = needed + 1;
            va_start(args, fmt);
            needed = log_line_format(heap_buf, size, kind, fmt, args);
            va_end(args);
        } else {
            /* Out of memory: a truncated line is still better than none. */
            needed = size - 1;
        }
    }
    /* A message that already ends in a newline must not produce an empty line. */
    if (needed >= 2 && line[needed - 2] == '\n')
        needed--;
    line[needed - 1] = '\n';
    if (!log_line_hold(kind, line, needed))
        log_line_write(line, needed);
    if (line != stack_buf)
        free(line);
}
