/*
 * component.c: opening frameworks and selecting their components (component.h).
 *
 * The selection list is the framework's parameter named after it ("plm", "btl"): empty
 * allows every component, "a,b" only those, "^a,b" all but those. A list that mixes the
 * two forms is refused when the framework is opened; names that match no component of
 * the framework's descriptor are warned about and otherwise ignored, as a typo in an
 * exclusion must not stop a job.
 *
 * Selection queries every allowed component once and keeps, for each linked component,
 * the reason it was not chosen, so that a failed selection can name them all in one line
 * (STYLE: users cannot act on "no component available").
 */
#include "config.h"

#include "component.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"

/* Verbosity at which opening and selection explain themselves (Open MPI's component level). */
#define COMPONENT_VERBOSE_SELECT 10
/* Longest "<framework>_base_verbose" name. */
#define COMPONENT_PARAM_NAME_MAX 128
/* Room for one candidate's reason ("query failed: ..."). */
#define COMPONENT_REASON_MAX 256

typedef enum {
    COMPONENT_LIST_ALL,     /* empty list: every component is allowed */
    COMPONENT_LIST_INCLUDE, /* "a,b": only these */
    COMPONENT_LIST_EXCLUDE, /* "^a,b": all but these */
} component_list_mode_t;

/* A parsed selection list. */
typedef struct component_list {
    component_list_mode_t mode; /* which of the three forms */
    const char *text;           /* the parameter's value as written (owned by param.c) */
    char *names_buf;            /* owned copy of the list that `names` point into */
    char **names;               /* component names in the list, in order */
    size_t num_names;           /* entries in names */
} component_list_t;

/* What selection learned about one linked component. */
typedef struct component_candidate {
    const crmpi_component_t *component; /* the implementation */
    bool available;                     /* allowed, and its query succeeded */
    int priority;                       /* from the query, when available */
    char reason[COMPONENT_REASON_MAX];  /* why it is not available, when it is not */
} component_candidate_t;

/* A growable line of text, for the one error that names every candidate. */
typedef struct component_text {
    char *buf;   /* NUL-terminated text, or NULL before the first append */
    size_t len;  /* characters in buf */
    size_t cap;  /* bytes allocated */
    bool failed; /* an allocation failed; buf holds what fit */
} component_text_t;

static void component_text_append(component_text_t *text, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void component_text_append(component_text_t *text, const char *fmt, ...)
{
    va_list args;
    int needed;

    if (text->failed)
        return;
    va_start(args, fmt);
    needed = vsnprintf(NULL, 0, fmt, args);
    va_end(args);
    if (needed < 0)
        return;
    if (text->len + (size_t)needed + 1 > text->cap) {
        size_t new_cap = (text->len + (size_t)needed + 1) * 2;
        char *grown = realloc(text->buf, new_cap);
        if (!grown) {
            text->failed = true;
            return;
        }
        text->buf = grown;
        text->cap = new_cap;
    }
    va_start(args, fmt);
    vsnprintf(text->buf + text->len, text->cap - text->len, fmt, args);
    va_end(args);
    text->len += (size_t)needed;
}

static void component_list_free(component_list_t *list)
{
    free(list->names);
    free(list->names_buf);
}

static char *component_trim(char *text)
{
    char *end;

    while (*text == ' ' || *text == '\t')
        text++;
    end = text + strlen(text);
    while (end > text && (end[-1] == ' ' || end[-1] == '\t'))
        *--end = '\0';
    return text;
}

/* Read and parse the framework's selection list; errors are logged here. */
static int component_list_parse(const crmpi_framework_info_t *info, component_list_t *list_out)
{
    const char *fw_name = info->name;
    component_list_t list = {.mode = COMPONENT_LIST_ALL};
    char *cursor;
    char *token;
    size_t max_names = 1;
    int rc;

    rc = crmpi_param_get_string(fw_name, &list.text);
    if (rc == CRMPI_ERR_NOT_FOUND) {
        crmpi_log_error("%s: the framework's parameters are not declared; "
                        "crmpi_catalog_register_all() must run first",
                        fw_name);
        return rc;
    }
    if (rc != CRMPI_OK)
        return rc;

    list.names_buf = strdup(list.text);
    if (!list.names_buf)
        goto err_no_memory;
    cursor = component_trim(list.names_buf);
    if (*cursor == '\0') {
        *list_out = list;
        return CRMPI_OK;
    }
    list.mode = COMPONENT_LIST_INCLUDE;
    if (*cursor == '^') {
        list.mode = COMPONENT_LIST_EXCLUDE;
        cursor++;
    }
    for (const char *p = cursor; *p; p++)
        max_names += *p == ',';
    list.names = calloc(max_names, sizeof(list.names[0]));
    if (!list.names)
        goto err_no_memory;

    for (token = strsep(&cursor, ","); token; token = strsep(&cursor, ",")) {
        token = component_trim(token);
        /* "a,,b" and a trailing comma are harmless slips; skip the empty names. */
        if (*token == '\0')
            continue;
        if (*token == '^') {
            crmpi_log_error("%s: selection list '%s' mixes included and excluded components; "
                            "use '%s=a,b' to choose components or '%s=^a,b' to exclude them",
                            fw_name, list.text, fw_name, fw_name);
            rc = CRMPI_ERR_BAD_PARAM;
            goto err_free_list;
        }
        list.names[list.num_names++] = token;
    }
    if (list.num_names == 0) {
        crmpi_log_error("%s: selection list '%s' names no component; leave it empty to allow "
                        "every component",
                        fw_name, list.text);
        rc = CRMPI_ERR_BAD_PARAM;
        goto err_free_list;
    }
    *list_out = list;
    return CRMPI_OK;

err_no_memory:
    crmpi_log_error("%s: out of memory parsing the selection list", fw_name);
    rc = CRMPI_ERR_OUT_OF_RESOURCE;
err_free_list:
    component_list_free(&list);
    return rc;
}

static bool component_list_names(const component_list_t *list, const char *component_name)
{
    for (size_t i = 0; i < list->num_names; i++) {
        if (strcmp(list->names[i], component_name) == 0)
            return true;
    }
    return false;
}

static bool component_list_allows(const component_list_t *list, const char *component_name)
{
    switch (list->mode) {
    case COMPONENT_LIST_ALL: return true;
    case COMPONENT_LIST_INCLUDE: return component_list_names(list, component_name);
    case COMPONENT_LIST_EXCLUDE: return !component_list_names(list, component_name);
    }
    return false;
}

/* Is `component_name` one of the framework's components (descriptor, linked or not)? */
static bool component_info_knows(const crmpi_framework_info_t *info, const char *component_name)
{
    for (const crmpi_component_info_t *const *c = info->components; c && *c; c++) {
        if (strcmp((*c)->name, component_name) == 0)
            return true;
    }
    return false;
}

/* The first name in the list that is no component of this framework, or NULL. */
static const char *component_list_unknown(const crmpi_framework_info_t *info,
                                          const component_list_t *list, size_t *from)
{
    for (; *from < list->num_names; (*from)++) {
        if (!component_info_knows(info, list->names[*from]))
            return list->names[(*from)++];
    }
    return NULL;
}

/* "self, sm, tcp": the framework's components, for messages; the caller frees it. */
static char *component_info_names(const crmpi_framework_info_t *info)
{
    component_text_t known = {0};

    for (const crmpi_component_info_t *const *c = info->components; c && *c; c++)
        component_text_append(&known, "%s%s", known.buf ? ", " : "", (*c)->name);
    return known.buf;
}

/* Warn once per open about names in the list that are no component of this framework. */
static void component_list_warn_unknown(const crmpi_framework_t *fw, const component_list_t *list)
{
    char *known = NULL;
    size_t from = 0;

    /* An excluded name that is not built here excludes nothing: nothing to say. */
    if (list->mode != COMPONENT_LIST_INCLUDE)
        return;
    for (const char *name; (name = component_list_unknown(fw->info, list, &from));) {
        if (!known)
            known = component_info_names(fw->info);
        crmpi_log_warn("%s: unknown component '%s' in selection list %s='%s' is ignored "
                       "(known: %s)",
                       fw->info->name, name, fw->info->name, list->text, known ? known : "none");
    }
    free(known);
}

int crmpi_catalog_check_selections(void)
{
    for (const crmpi_framework_info_t *const *info = crmpi_catalog; *info; info++) {
        component_list_t list;
        size_t from = 0;
        const char *name;
        int rc = component_list_parse(*info, &list);

        if (rc != CRMPI_OK)
            return rc;
        /* A portable "^ofi" must not fail where libfabric is absent. */
        name = list.mode == COMPONENT_LIST_INCLUDE ? component_list_unknown(*info, &list, &from)
                                                   : NULL;
        if (name) {
            char *known = component_info_names(*info);

            crmpi_log_error("%s: no component '%s' here (selection list %s='%s'); the %s "
                            "components are %s",
                            (*info)->name, name, (*info)->name, list.text, (*info)->name,
                            known ? known : "none");
            free(known);
            component_list_free(&list);
            return CRMPI_ERR_NOT_FOUND;
        }
        component_list_free(&list);
    }
    return CRMPI_OK;
}

bool crmpi_component_named(const char *selection, const char *name)
{
    size_t len = strlen(name);

    if (!selection || selection[0] == '^')
        return false;
    for (const char *p = selection; (p = strstr(p, name)) != NULL; p += len) {
        bool starts = p == selection || p[-1] == ',';
        bool ends = p[len] == '\0' || p[len] == ',';
        if (starts && ends)
            return true;
    }
    return false;
}

int crmpi_framework_open(crmpi_framework_t *fw)
{
    char verbose_name[COMPONENT_PARAM_NAME_MAX];
    component_list_t list;
    int64_t verbose;
    int rc;

    if (fw->is_open)
        return CRMPI_OK;
    snprintf(verbose_name, sizeof(verbose_name), "%s_base_verbose", fw->info->name);
    rc = crmpi_param_get_int(verbose_name, &verbose);
    if (rc == CRMPI_ERR_NOT_FOUND)
        crmpi_log_error("%s: parameter %s is not declared; crmpi_catalog_register_all() must "
                        "run first",
                        fw->info->name, verbose_name);
    if (rc != CRMPI_OK)
        return rc;
    rc = component_list_parse(fw->info, &list);
    if (rc != CRMPI_OK)
        return rc;
    component_list_warn_unknown(fw, &list);

    fw->verbose = verbose > INT_MAX ? INT_MAX : verbose < INT_MIN ? INT_MIN : (int)verbose;
    fw->is_open = 1;
    crmpi_fw_verbose(fw, COMPONENT_VERBOSE_SELECT, "open (selection list '%s')", list.text);
    component_list_free(&list);
    return CRMPI_OK;
}

int crmpi_framework_allows(const crmpi_framework_t *fw, const char *component_name)
{
    component_list_t list;
    bool allowed;

    /* A list that does not parse allows nothing; open() has already said why. */
    if (component_list_parse(fw->info, &list) != CRMPI_OK)
        return 0;
    allowed = component_list_allows(&list, component_name);
    component_list_free(&list);
    return allowed;
}

int crmpi_framework_requested(const crmpi_framework_t *fw, const char *component_name)
{
    component_list_t list;
    bool named;

    if (component_list_parse(fw->info, &list) != CRMPI_OK)
        return 0;
    named = list.mode == COMPONENT_LIST_INCLUDE && component_list_names(&list, component_name);
    component_list_free(&list);
    return named;
}

/*
 * Query every linked component the list allows; fill one candidate per linked component.
 * On CRMPI_OK, *candidates_out (malloc'ed, *count_out entries) belongs to the caller.
 */
static int component_candidates_evaluate(const crmpi_framework_t *fw,
                                         component_candidate_t **candidates_out, size_t *count_out)
{
    component_list_t list;
    component_candidate_t *candidates;
    size_t count = 0;
    int rc;

    if (!fw->is_open) {
        /* A programming error: open() reads the verbosity and validates the list. */
        crmpi_log_error("%s: component selection before crmpi_framework_open()", fw->info->name);
        return CRMPI_ERR_BAD_PARAM;
    }
    rc = component_list_parse(fw->info, &list);
    if (rc != CRMPI_OK)
        return rc;
    for (const crmpi_component_t *const *c = fw->components; c && *c; c++)
        count++;
    /* One extra entry so that an empty framework still gets a valid allocation. */
    candidates = calloc(count + 1, sizeof(candidates[0]));
    if (!candidates) {
        crmpi_log_error("%s: out of memory selecting a component", fw->info->name);
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out_free_list;
    }

    for (size_t i = 0; i < count; i++) {
        component_candidate_t *candidate = &candidates[i];
        const crmpi_component_t *component = fw->components[i];
        const char *name = component->info->name;
        const char *reason = NULL;
        int priority = 0;
        int query_rc;

        candidate->component = component;
        if (!component_list_allows(&list, name)) {
            snprintf(candidate->reason, sizeof(candidate->reason), "%s by %s='%s'",
                     list.mode == COMPONENT_LIST_EXCLUDE ? "excluded" : "not listed",
                     fw->info->name, list.text);
            continue;
        }
        query_rc = component->query ? component->query(component, &priority, &reason) : CRMPI_OK;
        if (query_rc != CRMPI_OK) {
            snprintf(candidate->reason, sizeof(candidate->reason), "unavailable: %s",
                     reason ? reason : crmpi_strerror(query_rc));
            continue;
        }
        candidate->available = true;
        candidate->priority = priority;
    }
    *candidates_out = candidates;
    *count_out = count;
out_free_list:
    component_list_free(&list);
    return rc;
}

/* One line naming every candidate and why it was not chosen, plus what the user can do. */
static void component_select_report_none(const crmpi_framework_t *fw,
                                         const component_candidate_t *candidates, size_t count)
{
    component_text_t text = {0};

    for (size_t i = 0; i < count; i++) {
        component_text_append(&text, "%s%s (%s)", i ? "; " : "",
                              candidates[i].component->info->name, candidates[i].reason);
    }
    /* A listed component that is described but not linked was left out of this build. */
    for (const crmpi_component_info_t *const *c = fw->info->components; c && *c; c++) {
        bool linked = false;
        for (size_t i = 0; i < count; i++)
            linked = linked || candidates[i].component->info == *c;
        if (!linked && crmpi_framework_allows(fw, (*c)->name))
            component_text_append(&text, "%s%s (not built into this program)", text.len ? "; " : "",
                                  (*c)->name);
    }
    if (text.len == 0)
        component_text_append(&text, "no component is built into this program");
    crmpi_log_error("%s: no component can be selected: %s; see 'crmpi_info --param %s all' "
                    "and the %s parameter",
                    fw->info->name, text.buf ? text.buf : "(out of memory listing them)",
                    fw->info->name, fw->info->name);
    free(text.buf);
}

int crmpi_framework_select_one(crmpi_framework_t *fw, const crmpi_component_t **selected_out)
{
    component_candidate_t *candidates;
    const component_candidate_t *best = NULL;
    size_t count;
    int rc;

    rc = component_candidates_evaluate(fw, &candidates, &count);
    if (rc != CRMPI_OK)
        return rc;
    /* Strictly greater: on equal priority the earlier (preferred) component wins. */
    for (size_t i = 0; i < count; i++) {
        if (candidates[i].available && (!best || candidates[i].priority > best->priority))
            best = &candidates[i];
    }
    if (!best) {
        component_select_report_none(fw, candidates, count);
        free(candidates);
        return CRMPI_ERR_NOT_FOUND;
    }
    for (size_t i = 0; i < count; i++) {
        const component_candidate_t *candidate = &candidates[i];
        if (candidate == best)
            continue;
        if (candidate->available)
            crmpi_fw_verbose(fw, COMPONENT_VERBOSE_SELECT,
                             "%s not selected: priority %d is below %s's %d",
                             candidate->component->info->name, candidate->priority,
                             best->component->info->name, best->priority);
        else
            crmpi_fw_verbose(fw, COMPONENT_VERBOSE_SELECT, "%s not selected: %s",
                             candidate->component->info->name, candidate->reason);
    }
    crmpi_fw_verbose(fw, COMPONENT_VERBOSE_SELECT, "selected %s (priority %d)",
                     best->component->info->name, best->priority);
    *selected_out = best->component;
    free(candidates);
    return CRMPI_OK;
}

/*
 * @return CRMPI_OK; CRMPI_ERR_BAD_PARAM (logged) when more components are available than
 *         `capacity`: the caller sized its array wrongly, and dropping some silently would
 *         hide a transport the user asked for.
 */
int crmpi_framework_select_all(crmpi_framework_t *fw, const crmpi_component_t **selected_out,
                               size_t capacity, size_t *count_out)
{
    component_candidate_t *candidates;
    const component_candidate_t **ranked;
    size_t count;
    size_t num_available = 0;
    int rc;

    rc = component_candidates_evaluate(fw, &candidates, &count);
    if (rc != CRMPI_OK)
        return rc;
    ranked = calloc(count + 1, sizeof(ranked[0]));
    if (!ranked) {
        crmpi_log_error("%s: out of memory selecting components", fw->info->name);
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto out_free_candidates;
    }
    /* Stable insertion by priority, so that equal priorities keep the preference order. */
    for (size_t i = 0; i < count; i++) {
        const component_candidate_t *candidate = &candidates[i];
        size_t slot = num_available;

        if (!candidate->available) {
            crmpi_fw_verbose(fw, COMPONENT_VERBOSE_SELECT, "%s not selected: %s",
                             candidate->component->info->name, candidate->reason);
            continue;
        }
        while (slot > 0 && ranked[slot - 1]->priority < candidate->priority) {
            ranked[slot] = ranked[slot - 1];
            slot--;
        }
        ranked[slot] = candidate;
        num_available++;
    }
    if (num_available > capacity) {
        crmpi_log_error("%s: %zu components are available but the caller has room for %zu",
                        fw->info->name, num_available, capacity);
        rc = CRMPI_ERR_BAD_PARAM;
        goto out_free_ranked;
    }
    for (size_t i = 0; i < num_available; i++) {
        crmpi_fw_verbose(fw, COMPONENT_VERBOSE_SELECT, "selected %s (priority %d)",
                         ranked[i]->component->info->name, ranked[i]->priority);
        selected_out[i] = ranked[i]->component;
    }
    *count_out = num_available;
out_free_ranked:
    free(ranked);
out_free_candidates:
    free(candidates);
    return rc;
}

void crmpi_framework_close(crmpi_framework_t *fw)
{
    if (!fw->is_open)
        return;
    crmpi_fw_verbose(fw, COMPONENT_VERBOSE_SELECT, "close");
    fw->is_open = 0;
    fw->verbose = 0;
}
