/*
 * param_unknown.c: the names nobody declared (param.h's crmpi_param_warn_unknown): every
 * --mca override, CRMPI_MCA_* variable and parameter file line is judged against the
 * catalog, and each unknown name gets one warning per process, with the declared name it
 * most likely means.
 */
#include "config.h"

#include "param_int.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"

/* Names closer than this edit distance to an unknown name are suggested to the user. */
#define PARAM_SUGGEST_DISTANCE 2

/* Edit distance between two short names, or a large number when either is too long. */
static size_t param_name_distance(const char *a, const char *b)
{
    size_t len_a = strlen(a);
    size_t len_b = strlen(b);
    size_t row[PARAM_NAME_MAX + 1];

    if (len_a >= PARAM_NAME_MAX || len_b >= PARAM_NAME_MAX)
        return (size_t)-1;
    for (size_t j = 0; j <= len_b; j++)
        row[j] = j;
    for (size_t i = 1; i <= len_a; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= len_b; j++) {
            size_t above = row[j];
            size_t best = diagonal + (a[i - 1] != b[j - 1]);
            if (above + 1 < best)
                best = above + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[len_b];
}

/* The declared name closest to `name`, if close enough to be a likely typo. */
static const char *param_name_suggest(const char *name)
{
    const char *best_name = NULL;
    size_t best_distance = PARAM_SUGGEST_DISTANCE + 1;

    for (size_t i = 0; i < param_registry.num_entries; i++) {
        const char *candidate = param_registry.entries[i].decl->name;
        size_t distance = param_name_distance(name, candidate);
        if (distance < best_distance) {
            best_distance = distance;
            best_name = candidate;
        }
    }
    return best_name;
}

/* One warning line with a caller-chosen prefix, written with one write(2) like log.c's. */
static void param_warn_line(const char *who, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void param_warn_line(const char *who, const char *fmt, ...)
{
    char line[2048];
    int len;
    int message_len;
    va_list args;

    len = snprintf(line, sizeof(line), "%s: warning: ", who);
    if (len < 0 || (size_t)len >= sizeof(line))
        return;
    va_start(args, fmt);
    message_len = vsnprintf(line + len, sizeof(line) - (size_t)len, fmt, args);
    va_end(args);
    if (message_len < 0)
        return;
    len += message_len;
    if ((size_t)len >= sizeof(line) - 1)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    if (write(STDERR_FILENO, line, (size_t)len) < 0) {
        /* Nothing more can be done about a failed write to stderr. */
    }
}

/*
 * Judge one name: if it is unknown, count it once per call (`seen`) and warn about it once
 * per process (warned_unknown). `origin` says where it was found.
 */
static int param_unknown_check(const char *who, const char *name, const char *origin,
                               param_strings_t *seen)
{
    const char *suggestion;
    char *copy;

    if (param_entry_find(name) || param_strings_contains(seen, name))
        return 0;
    copy = strdup(name);
    if (!copy || param_strings_add(seen, copy) != CRMPI_OK) {
        free(copy);
        return 0;
    }
    if (param_strings_contains(&param_registry.warned_unknown, name))
        return 1;
    suggestion = param_name_suggest(name);
    if (suggestion)
        param_warn_line(who, "unknown MCA parameter '%s' (from %s); did you mean '%s'?", name,
                        origin, suggestion);
    else
        param_warn_line(who,
                        "unknown MCA parameter '%s' (from %s); 'crmpi_info --param all all' "
                        "lists every parameter",
                        name, origin);
    /* Without memory to remember it, the warning may repeat later: harmless. */
    copy = strdup(name);
    if (copy && param_strings_add(&param_registry.warned_unknown, copy) != CRMPI_OK)
        free(copy);
    return 1;
}

int crmpi_param_warn_unknown(const char *who)
{
    param_strings_t seen = {0};
    char origin[PARAM_NAME_MAX + 4096];
    char name[PARAM_NAME_MAX];
    int unknown = 0;

    if (!who)
        who = crmpi_log_who();
    pthread_mutex_lock(&param_lock);
    param_file_load();
    for (size_t i = 0; i < param_registry.num_overrides; i++) {
        snprintf(origin, sizeof(origin), "--mca %s", param_registry.overrides[i].name);
        unknown += param_unknown_check(who, param_registry.overrides[i].name, origin, &seen);
    }
    for (char **env = environ; env && *env; env++) {
        const char *entry = *env;
        const char *equals = strchr(entry, '=');
        size_t name_len;

        if (strncmp(entry, PARAM_ENV_PREFIX, strlen(PARAM_ENV_PREFIX)) != 0 || !equals)
            continue;
        name_len = (size_t)(equals - entry) - strlen(PARAM_ENV_PREFIX);
        if (name_len >= sizeof(name))
            name_len = sizeof(name) - 1;
        memcpy(name, entry + strlen(PARAM_ENV_PREFIX), name_len);
        name[name_len] = '\0';
        snprintf(origin, sizeof(origin), "%s%s", PARAM_ENV_PREFIX, name);
        unknown += param_unknown_check(who, name, origin, &seen);
    }
    for (size_t i = 0; i < param_registry.num_file_entries; i++) {
        const param_file_entry_t *file_entry = &param_registry.file_entries[i];
        snprintf(origin, sizeof(origin), "%s:%d", param_registry.file_path, file_entry->line);
        unknown += param_unknown_check(who, file_entry->name, origin, &seen);
    }
    pthread_mutex_unlock(&param_lock);
    param_strings_free(&seen);
    return unknown;
}
