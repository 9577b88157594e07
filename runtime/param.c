/*
 * param.c: MCA-style run-time parameters (param.h).
 *
 * The registry is an array of declared parameters in declaration order. A parameter's
 * value is resolved on its first read (override, then CRMPI_MCA_<name>, then the parameter
 * file, then the default), parsed once, and cached with its source; a value that does not
 * parse is logged once, naming where it came from, at that first read. An override set
 * after a read drops the cached value, so the next read sees it.
 *
 * Strings handed out by crmpi_param_get_string() and crmpi_param_lookup() stay valid until
 * crmpi_param_finalize(): a value replaced by a later override is kept on a retired list
 * rather than freed.
 *
 * The parameter file is read once, on the first read of any parameter (or the first
 * crmpi_param_warn_unknown()). $CRMPI_PARAM_FILE names it; set to the empty string, it
 * disables the file. Lines are "name = value"; blank lines and lines whose first non-blank
 * character is '#' are ignored; '#' elsewhere is part of the value, so paths may contain
 * it. A malformed line is reported once with its file and line number and skipped.
 *
 * Thread safety: one mutex guards the registry, since lazy resolution writes the cache
 * from whichever thread reads first. It is never held while calling out (foreach's fn).
 */
#include "config.h"

#include "param.h"

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

/* Prefix of the environment variables that carry parameters (how mpirun reaches ranks). */
#define PARAM_ENV_PREFIX "CRMPI_MCA_"
/* Longest parameter name; longer names are refused at declaration and override. */
#define PARAM_NAME_MAX 128
/* Names closer than this edit distance to an unknown name are suggested to the user. */
#define PARAM_SUGGEST_DISTANCE 2

/* A declared parameter and its cached value. */
typedef struct param_entry {
    const crmpi_param_decl_t *decl; /* the caller's declaration (static, never freed) */
    bool resolved;                  /* source, value, parse_status and parsed are current */
    crmpi_param_source_t source;    /* where value comes from */
    char *value;                    /* owned copy of the winning text */
    int parse_status;               /* CRMPI_OK, or CRMPI_ERR_BAD_PARAM (already logged) */
    union {
        int64_t int_value;   /* CRMPI_PARAM_INT */
        bool bool_value;     /* CRMPI_PARAM_BOOL */
        uint64_t size_value; /* CRMPI_PARAM_SIZE */
    } parsed;                /* the value as its type, when parse_status is CRMPI_OK */
} param_entry_t;

/* A value set with crmpi_param_set_override(). */
typedef struct param_override {
    char *name;  /* parameter name, possibly never declared */
    char *value; /* text, owned */
} param_override_t;

/* One "name = value" line of the parameter file. */
typedef struct param_file_entry {
    char *name;  /* parameter name as written, possibly never declared */
    char *value; /* text after '=', trimmed, owned */
    int line;    /* line number in the file, for messages */
} param_file_entry_t;

/* A growable array of pointers to strings this module owns. */
typedef struct param_strings {
    char **items; /* owned strings */
    size_t count; /* entries used */
    size_t cap;   /* entries allocated */
} param_strings_t;

/* Everything the registry holds; crmpi_param_finalize() frees it all and zeroes it. */
static struct {
    param_entry_t *entries;           /* declared parameters, in declaration order */
    size_t num_entries;               /* entries used */
    size_t cap_entries;               /* entries allocated */
    param_override_t *overrides;      /* overrides, in the order first set */
    size_t num_overrides;             /* overrides used */
    size_t cap_overrides;             /* overrides allocated */
    bool file_loaded;                 /* the parameter file was looked for (found or not) */
    char *file_path;                  /* the file read, for messages; NULL when none */
    param_file_entry_t *file_entries; /* its valid lines, in file order */
    size_t num_file_entries;          /* file entries used */
    size_t cap_file_entries;          /* file entries allocated */
    param_strings_t retired;          /* values replaced after being handed out */
    param_strings_t warned_unknown;   /* unknown names already warned about */
} param_registry;

static pthread_mutex_t param_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- small helpers ------------------------------------------------------------------- */

/* Make room for `needed` elements of `elem_size` bytes in *array (capacity *cap). */
static int param_array_reserve(void **array, size_t *cap, size_t needed, size_t elem_size)
{
    size_t new_cap;
    void *grown;

    if (needed <= *cap)
        return CRMPI_OK;
    new_cap = *cap ? *cap * 2 : 16;
    while (new_cap < needed)
        new_cap *= 2;
    grown = realloc(*array, new_cap * elem_size);
    if (!grown) {
        crmpi_log_error("parameters: out of memory growing a table to %zu entries", new_cap);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    *array = grown;
    *cap = new_cap;
    return CRMPI_OK;
}

/* Take ownership of `text` in `list`; on failure the caller still owns it. */
static int param_strings_add(param_strings_t *list, char *text)
{
    int rc = param_array_reserve((void **)&list->items, &list->cap, list->count + 1,
                                 sizeof(list->items[0]));
    if (rc != CRMPI_OK)
        return rc;
    list->items[list->count++] = text;
    return CRMPI_OK;
}

static bool param_strings_contains(const param_strings_t *list, const char *text)
{
    for (size_t i = 0; i < list->count; i++) {
        if (strcmp(list->items[i], text) == 0)
            return true;
    }
    return false;
}

static void param_strings_free(param_strings_t *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->items[i]);
    free(list->items);
    memset(list, 0, sizeof(*list));
}

/* Names become parts of environment variable names, so they are limited to [A-Za-z0-9_]. */
static bool param_name_is_valid(const char *name)
{
    size_t len;

    if (!name || name[0] == '\0')
        return false;
    for (len = 0; name[len] != '\0'; len++) {
        if (!isalnum((unsigned char)name[len]) && name[len] != '_')
            return false;
    }
    return len < PARAM_NAME_MAX;
}

static const char *param_skip_space(const char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    return text;
}

/* Trim `text` in place at both ends; returns the first non-blank character. */
static char *param_trim(char *text)
{
    char *end;

    while (isspace((unsigned char)*text))
        text++;
    end = text + strlen(text);
    while (end > text && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return text;
}

static const char *param_type_name(crmpi_param_type_t type)
{
    switch (type) {
    case CRMPI_PARAM_INT: return "int";
    case CRMPI_PARAM_BOOL: return "bool";
    case CRMPI_PARAM_STRING: return "string";
    case CRMPI_PARAM_SIZE: return "size";
    }
    return "unknown type";
}

/* What a value of `type` must look like, for "... is not <this>" messages. */
static const char *param_type_expectation(crmpi_param_type_t type)
{
    switch (type) {
    case CRMPI_PARAM_INT: return "an integer (decimal, or hexadecimal with 0x)";
    case CRMPI_PARAM_BOOL: return "a boolean (1/0, true/false, yes/no, on/off)";
    case CRMPI_PARAM_SIZE: return "a size (a byte count with an optional k, m or g suffix)";
    case CRMPI_PARAM_STRING: break;
    }
    return "valid";
}

/* ---- parse helpers ------------------------------------------------------------------- */

/* Parse an unsigned number at `text` (decimal, or hex after 0x) into *value_out; *end_out is
 * where parsing stopped. The text must start with a digit: no blank, no sign. */
static int param_parse_unsigned(const char *text, uint64_t *value_out, const char **end_out)
{
    int base = 10;
    unsigned long long value;
    char *end;

    if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        base = 16;
        text += 2;
    }
    /* strtoull itself would accept blanks and a sign here; "-1" would wrap to 2^64-1. */
    if (base == 16 ? !isxdigit((unsigned char)*text) : !isdigit((unsigned char)*text))
        return CRMPI_ERR_BAD_PARAM;
    errno = 0;
    value = strtoull(text, &end, base);
    if (errno == ERANGE)
        return CRMPI_ERR_BAD_PARAM;
    *value_out = value;
    *end_out = end;
    return CRMPI_OK;
}

int crmpi_param_parse_int(const char *text, int64_t *value_out)
{
    bool negative = false;
    uint64_t magnitude;
    const char *end;

    if (!text)
        return CRMPI_ERR_BAD_PARAM;
    text = param_skip_space(text);
    if (*text == '+' || *text == '-') {
        negative = *text == '-';
        text++;
    }
    if (param_parse_unsigned(text, &magnitude, &end) != CRMPI_OK)
        return CRMPI_ERR_BAD_PARAM;
    if (*param_skip_space(end) != '\0')
        return CRMPI_ERR_BAD_PARAM;
    if (negative) {
        if (magnitude > (uint64_t)INT64_MAX + 1)
            return CRMPI_ERR_BAD_PARAM;
        /* -(2^63) has no positive counterpart in int64_t; negate in unsigned arithmetic. */
        *value_out = (int64_t)(0 - magnitude);
    } else {
        if (magnitude > (uint64_t)INT64_MAX)
            return CRMPI_ERR_BAD_PARAM;
        *value_out = (int64_t)magnitude;
    }
    return CRMPI_OK;
}

int crmpi_param_parse_size(const char *text, uint64_t *value_out)
{
    uint64_t count;
    unsigned shift = 0;
    const char *end;

    if (!text)
        return CRMPI_ERR_BAD_PARAM;
    text = param_skip_space(text);
    if (param_parse_unsigned(text, &count, &end) != CRMPI_OK)
        return CRMPI_ERR_BAD_PARAM;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    }
    if (*param_skip_space(end) != '\0')
        return CRMPI_ERR_BAD_PARAM;
    if (count > (UINT64_MAX >> shift))
        return CRMPI_ERR_BAD_PARAM;
    *value_out = count << shift;
    return CRMPI_OK;
}

int crmpi_param_parse_bool(const char *text, bool *value_out)
{
    static const char *const true_words[] = {"1", "true", "yes", "on"};
    static const char *const false_words[] = {"0", "false", "no", "off"};
    size_t len;

    if (!text)
        return CRMPI_ERR_BAD_PARAM;
    text = param_skip_space(text);
    len = strlen(text);
    while (len > 0 && isspace((unsigned char)text[len - 1]))
        len--;
    for (size_t i = 0; i < sizeof(true_words) / sizeof(true_words[0]); i++) {
        if (strlen(true_words[i]) == len && strncasecmp(text, true_words[i], len) == 0) {
            *value_out = true;
            return CRMPI_OK;
        }
        if (strlen(false_words[i]) == len && strncasecmp(text, false_words[i], len) == 0) {
            *value_out = false;
            return CRMPI_OK;
        }
    }
    return CRMPI_ERR_BAD_PARAM;
}

/* ---- the registry -------------------------------------------------------------------- */

static param_entry_t *param_entry_find(const char *name)
{
    for (size_t i = 0; i < param_registry.num_entries; i++) {
        if (strcmp(param_registry.entries[i].decl->name, name) == 0)
            return &param_registry.entries[i];
    }
    return NULL;
}

static param_override_t *param_override_find(const char *name)
{
    for (size_t i = 0; i < param_registry.num_overrides; i++) {
        if (strcmp(param_registry.overrides[i].name, name) == 0)
            return &param_registry.overrides[i];
    }
    return NULL;
}

/* The last entry of the file for `name` wins, as a later line overrides an earlier one. */
static const param_file_entry_t *param_file_find(const char *name)
{
    for (size_t i = param_registry.num_file_entries; i > 0; i--) {
        if (strcmp(param_registry.file_entries[i - 1].name, name) == 0)
            return &param_registry.file_entries[i - 1];
    }
    return NULL;
}

/* Parse one line of the parameter file; malformed lines are reported and skipped. */
static int param_file_parse_line(char *line, int line_number)
{
    char *text = param_trim(line);
    char *equals;
    char *name;
    char *value;
    param_file_entry_t *entry;
    int rc;

    if (text[0] == '\0' || text[0] == '#')
        return CRMPI_OK;
    equals = strchr(text, '=');
    if (!equals) {
        crmpi_log_warn("%s:%d: ignoring '%s': expected 'name = value'", param_registry.file_path,
                       line_number, text);
        return CRMPI_OK;
    }
    *equals = '\0';
    name = param_trim(text);
    value = param_trim(equals + 1);
    if (!param_name_is_valid(name)) {
        crmpi_log_warn("%s:%d: ignoring this line: '%s' is not a parameter name (letters, "
                       "digits and '_' only)",
                       param_registry.file_path, line_number, name);
        return CRMPI_OK;
    }
    rc = param_array_reserve((void **)&param_registry.file_entries,
                             &param_registry.cap_file_entries, param_registry.num_file_entries + 1,
                             sizeof(param_registry.file_entries[0]));
    if (rc != CRMPI_OK)
        return rc;
    entry = &param_registry.file_entries[param_registry.num_file_entries];
    entry->name = strdup(name);
    entry->value = strdup(value);
    entry->line = line_number;
    if (!entry->name || !entry->value) {
        free(entry->name);
        free(entry->value);
        crmpi_log_error("%s:%d: out of memory", param_registry.file_path, line_number);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    param_registry.num_file_entries++;
    return CRMPI_OK;
}

/*
 * Read the parameter file once. A missing or unreadable file is not an error of the read
 * that triggered the load: it is reported (unless it is the default file and simply does
 * not exist) and the parameters fall back to their defaults.
 */
static void param_file_load(void)
{
    const char *explicit_path = getenv("CRMPI_PARAM_FILE");
    const char *home;
    FILE *file;
    char *line = NULL;
    size_t line_cap = 0;
    int line_number = 0;

    if (param_registry.file_loaded)
        return;
    param_registry.file_loaded = true;

    if (explicit_path) {
        if (explicit_path[0] == '\0')
            return;
        param_registry.file_path = strdup(explicit_path);
    } else {
        home = getenv("HOME");
        if (!home || home[0] == '\0')
            return;
        if (asprintf(&param_registry.file_path, "%s/.crmpi/mca-params.conf", home) < 0)
            param_registry.file_path = NULL;
    }
    if (!param_registry.file_path) {
        crmpi_log_error("parameters: out of memory; the parameter file is ignored");
        return;
    }

    file = fopen(param_registry.file_path, "r");
    if (!file) {
        /* Only a file the user named explicitly is expected to exist. */
        if (explicit_path || errno != ENOENT)
            crmpi_log_warn("cannot read parameter file %s%s: %s; its settings are ignored",
                           param_registry.file_path, explicit_path ? " (CRMPI_PARAM_FILE)" : "",
                           strerror(errno));
        goto err_forget_path;
    }
    while (getline(&line, &line_cap, file) >= 0) {
        line_number++;
        if (param_file_parse_line(line, line_number) != CRMPI_OK)
            break;
    }
    if (ferror(file))
        crmpi_log_warn("error reading parameter file %s after line %d: %s",
                       param_registry.file_path, line_number, strerror(errno));
    free(line);
    fclose(file);
    return;

err_forget_path:
    free(param_registry.file_path);
    param_registry.file_path = NULL;
}

/* Describe where a value comes from, for messages: "CRMPI_MCA_x", "file:12", "--mca x". */
static void param_origin_describe(const param_entry_t *entry, char *buf, size_t size)
{
    const char *name = entry->decl->name;
    const param_file_entry_t *file_entry;

    switch (entry->source) {
    case CRMPI_PARAM_SOURCE_OVERRIDE: snprintf(buf, size, "--mca %s", name); break;
    case CRMPI_PARAM_SOURCE_ENV: snprintf(buf, size, "%s%s", PARAM_ENV_PREFIX, name); break;
    case CRMPI_PARAM_SOURCE_FILE:
        file_entry = param_file_find(name);
        snprintf(buf, size, "%s:%d", param_registry.file_path, file_entry ? file_entry->line : 0);
        break;
    case CRMPI_PARAM_SOURCE_DEFAULT: snprintf(buf, size, "its declared default"); break;
    }
}

/* Parse `text` as `type` into `entry->parsed`. */
static int param_value_parse(param_entry_t *entry, const char *text)
{
    switch (entry->decl->type) {
    case CRMPI_PARAM_INT: return crmpi_param_parse_int(text, &entry->parsed.int_value);
    case CRMPI_PARAM_BOOL: return crmpi_param_parse_bool(text, &entry->parsed.bool_value);
    case CRMPI_PARAM_SIZE: return crmpi_param_parse_size(text, &entry->parsed.size_value);
    case CRMPI_PARAM_STRING: return CRMPI_OK;
    }
    return CRMPI_ERR_BAD_PARAM;
}

/* Find the winning source of `entry`, copy and parse its text, and log a bad value once. */
static int param_entry_resolve(param_entry_t *entry)
{
    const char *name = entry->decl->name;
    const param_override_t *override = param_override_find(name);
    const param_file_entry_t *file_entry;
    char env_name[sizeof(PARAM_ENV_PREFIX) + PARAM_NAME_MAX];
    char origin[PARAM_NAME_MAX + 4096];
    const char *text = NULL;
    crmpi_param_source_t source = CRMPI_PARAM_SOURCE_DEFAULT;
    char *copy;

    if (entry->resolved)
        return CRMPI_OK;
    if (override) {
        text = override->value;
        source = CRMPI_PARAM_SOURCE_OVERRIDE;
    }
    if (!text) {
        snprintf(env_name, sizeof(env_name), "%s%s", PARAM_ENV_PREFIX, name);
        text = getenv(env_name);
        source = CRMPI_PARAM_SOURCE_ENV;
    }
    if (!text) {
        param_file_load();
        file_entry = param_file_find(name);
        if (file_entry) {
            text = file_entry->value;
            source = CRMPI_PARAM_SOURCE_FILE;
        }
    }
    if (!text) {
        text = entry->decl->default_value;
        source = CRMPI_PARAM_SOURCE_DEFAULT;
    }

    /* A copy: the environment can change under us, and get_string's result must not. */
    copy = strdup(text);
    if (!copy) {
        crmpi_log_error("parameter %s: out of memory", name);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    free(entry->value);
    entry->value = copy;
    entry->source = source;
    entry->resolved = true;
    entry->parse_status = param_value_parse(entry, copy);
    if (entry->parse_status != CRMPI_OK) {
        param_origin_describe(entry, origin, sizeof(origin));
        crmpi_log_error("parameter %s: '%s' from %s is not %s", name, copy, origin,
                        param_type_expectation(entry->decl->type));
    }
    return CRMPI_OK;
}

/*
 * Forget the cached value of `name` (its override changed). The old text may have been
 * handed out by get_string, which promises it lives until finalize, so it is retired.
 */
static int param_entry_invalidate(const char *name)
{
    param_entry_t *entry = param_entry_find(name);
    int rc;

    if (!entry || !entry->resolved)
        return CRMPI_OK;
    /* Without memory to retire it, the old text is leaked rather than left dangling. */
    rc = param_strings_add(&param_registry.retired, entry->value);
    entry->value = NULL;
    entry->resolved = false;
    return rc;
}

/* Validate a declaration; `batch` and `index` let duplicates within one call be found. */
static int param_decl_check(const crmpi_param_decl_t *batch, size_t index)
{
    const crmpi_param_decl_t *decl = &batch[index];
    param_entry_t probe = {.decl = decl};

    if (!param_name_is_valid(decl->name)) {
        crmpi_log_error("parameter '%s': invalid name (letters, digits and '_', at most %d)",
                        decl->name ? decl->name : "(null)", PARAM_NAME_MAX - 1);
        return CRMPI_ERR_BAD_PARAM;
    }
    if (param_entry_find(decl->name)) {
        crmpi_log_error("parameter %s is declared twice", decl->name);
        return CRMPI_ERR_EXISTS;
    }
    for (size_t i = 0; i < index; i++) {
        if (strcmp(batch[i].name, decl->name) == 0) {
            crmpi_log_error("parameter %s is declared twice in one table", decl->name);
            return CRMPI_ERR_EXISTS;
        }
    }
    if (decl->type != CRMPI_PARAM_INT && decl->type != CRMPI_PARAM_BOOL &&
        decl->type != CRMPI_PARAM_STRING && decl->type != CRMPI_PARAM_SIZE) {
        crmpi_log_error("parameter %s: unknown type %d", decl->name, (int)decl->type);
        return CRMPI_ERR_BAD_PARAM;
    }
    if (!decl->help || decl->level < 1 || decl->level > 9) {
        crmpi_log_error("parameter %s: needs a help text and a level from 1 to 9", decl->name);
        return CRMPI_ERR_BAD_PARAM;
    }
    if (!decl->default_value || param_value_parse(&probe, decl->default_value) != CRMPI_OK) {
        crmpi_log_error("parameter %s: default '%s' is not %s", decl->name,
                        decl->default_value ? decl->default_value : "(null)",
                        param_type_expectation(decl->type));
        return CRMPI_ERR_BAD_PARAM;
    }
    return CRMPI_OK;
}

int crmpi_param_register(const crmpi_param_decl_t *decls, size_t count)
{
    int rc = CRMPI_OK;

    pthread_mutex_lock(&param_lock);
    /* Check the whole table first, so that a failed call declares nothing. */
    for (size_t i = 0; i < count; i++) {
        rc = param_decl_check(decls, i);
        if (rc != CRMPI_OK)
            goto out_unlock;
    }
    rc = param_array_reserve((void **)&param_registry.entries, &param_registry.cap_entries,
                             param_registry.num_entries + count, sizeof(param_registry.entries[0]));
    if (rc != CRMPI_OK)
        goto out_unlock;
    for (size_t i = 0; i < count; i++) {
        param_registry.entries[param_registry.num_entries++] = (param_entry_t){.decl = &decls[i]};
    }
out_unlock:
    pthread_mutex_unlock(&param_lock);
    return rc;
}

int crmpi_param_set_override(const char *name, const char *value)
{
    param_override_t *override;
    char *value_copy;
    char *name_copy;
    int rc;

    if (!param_name_is_valid(name)) {
        crmpi_log_error("--mca '%s': not a parameter name (letters, digits and '_' only)",
                        name ? name : "(null)");
        return CRMPI_ERR_BAD_PARAM;
    }
    if (!value) {
        crmpi_log_error("--mca %s: no value given", name);
        return CRMPI_ERR_BAD_PARAM;
    }
    value_copy = strdup(value);
    if (!value_copy) {
        crmpi_log_error("--mca %s: out of memory", name);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }

    pthread_mutex_lock(&param_lock);
    override = param_override_find(name);
    if (override) {
        free(override->value);
        override->value = value_copy;
    } else {
        rc = param_array_reserve((void **)&param_registry.overrides, &param_registry.cap_overrides,
                                 param_registry.num_overrides + 1,
                                 sizeof(param_registry.overrides[0]));
        if (rc != CRMPI_OK)
            goto err_free_value;
        name_copy = strdup(name);
        if (!name_copy) {
            crmpi_log_error("--mca %s: out of memory", name);
            rc = CRMPI_ERR_OUT_OF_RESOURCE;
            goto err_free_value;
        }
        param_registry.overrides[param_registry.num_overrides++] =
            (param_override_t){.name = name_copy, .value = value_copy};
    }
    rc = param_entry_invalidate(name);
    pthread_mutex_unlock(&param_lock);
    return rc;

err_free_value:
    pthread_mutex_unlock(&param_lock);
    free(value_copy);
    return rc;
}

/*
 * Resolve `name` for a getter of `type`. Called and returns with param_lock held.
 * On CRMPI_OK, *entry_out is resolved and its value parses.
 */
static int param_entry_get(const char *name, crmpi_param_type_t type, param_entry_t **entry_out)
{
    param_entry_t *entry;
    int rc;

    if (!name)
        return CRMPI_ERR_NOT_FOUND;
    entry = param_entry_find(name);
    if (!entry)
        return CRMPI_ERR_NOT_FOUND;
    if (entry->decl->type != type) {
        /* A programming error: the caller and the declaration disagree. */
        crmpi_log_error("parameter %s is declared as %s but read as %s", name,
                        param_type_name(entry->decl->type), param_type_name(type));
        return CRMPI_ERR_BAD_PARAM;
    }
    rc = param_entry_resolve(entry);
    if (rc != CRMPI_OK)
        return rc;
    if (entry->parse_status != CRMPI_OK)
        return entry->parse_status;
    *entry_out = entry;
    return CRMPI_OK;
}

int crmpi_param_get_int(const char *name, int64_t *value_out)
{
    param_entry_t *entry;
    int rc;

    pthread_mutex_lock(&param_lock);
    rc = param_entry_get(name, CRMPI_PARAM_INT, &entry);
    if (rc == CRMPI_OK)
        *value_out = entry->parsed.int_value;
    pthread_mutex_unlock(&param_lock);
    return rc;
}

int crmpi_param_get_bool(const char *name, bool *value_out)
{
    param_entry_t *entry;
    int rc;

    pthread_mutex_lock(&param_lock);
    rc = param_entry_get(name, CRMPI_PARAM_BOOL, &entry);
    if (rc == CRMPI_OK)
        *value_out = entry->parsed.bool_value;
    pthread_mutex_unlock(&param_lock);
    return rc;
}

int crmpi_param_get_size(const char *name, uint64_t *value_out)
{
    param_entry_t *entry;
    int rc;

    pthread_mutex_lock(&param_lock);
    rc = param_entry_get(name, CRMPI_PARAM_SIZE, &entry);
    if (rc == CRMPI_OK)
        *value_out = entry->parsed.size_value;
    pthread_mutex_unlock(&param_lock);
    return rc;
}

int crmpi_param_get_string(const char *name, const char **value_out)
{
    param_entry_t *entry;
    int rc;

    pthread_mutex_lock(&param_lock);
    rc = param_entry_get(name, CRMPI_PARAM_STRING, &entry);
    if (rc == CRMPI_OK)
        *value_out = entry->value;
    pthread_mutex_unlock(&param_lock);
    return rc;
}

/* Any output pointer may be NULL. A value that does not parse is still returned: crmpi_info
 * shows what the user wrote (the error was logged when it was resolved). */
int crmpi_param_lookup(const char *name, const crmpi_param_decl_t **decl_out,
                       const char **value_out, crmpi_param_source_t *source_out)
{
    param_entry_t *entry;
    int rc = CRMPI_ERR_NOT_FOUND;

    pthread_mutex_lock(&param_lock);
    entry = name ? param_entry_find(name) : NULL;
    if (!entry)
        goto out_unlock;
    rc = param_entry_resolve(entry);
    if (rc != CRMPI_OK)
        goto out_unlock;
    if (decl_out)
        *decl_out = entry->decl;
    if (value_out)
        *value_out = entry->value;
    if (source_out)
        *source_out = entry->source;
out_unlock:
    pthread_mutex_unlock(&param_lock);
    return rc;
}

/* Returns CRMPI_OK after visiting everything, or the first non-zero value of fn. */
int crmpi_param_foreach(int (*fn)(const crmpi_param_decl_t *decl, void *arg), void *arg)
{
    for (size_t i = 0;; i++) {
        const crmpi_param_decl_t *decl = NULL;
        int rc;

        /* Re-read the count each time: fn may look parameters up (and so take the lock). */
        pthread_mutex_lock(&param_lock);
        if (i < param_registry.num_entries)
            decl = param_registry.entries[i].decl;
        pthread_mutex_unlock(&param_lock);
        if (!decl)
            return CRMPI_OK;
        rc = fn(decl, arg);
        if (rc != 0)
            return rc;
    }
}

/* ---- unknown names ------------------------------------------------------------------- */

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

/* ---- passing overrides on, and teardown ---------------------------------------------- */

char **crmpi_param_overrides_as_env(void)
{
    char **env;
    size_t count;

    pthread_mutex_lock(&param_lock);
    count = param_registry.num_overrides;
    env = calloc(count + 1, sizeof(env[0]));
    if (!env)
        goto err_unlock;
    for (size_t i = 0; i < count; i++) {
        const param_override_t *override = &param_registry.overrides[i];
        if (asprintf(&env[i], "%s%s=%s", PARAM_ENV_PREFIX, override->name, override->value) < 0) {
            env[i] = NULL;
            goto err_free_env;
        }
    }
    pthread_mutex_unlock(&param_lock);
    return env;

err_free_env:
    crmpi_param_free_env(env);
err_unlock:
    pthread_mutex_unlock(&param_lock);
    crmpi_log_error("parameters: out of memory building the environment of a child process");
    return NULL;
}

void crmpi_param_free_env(char **env)
{
    if (!env)
        return;
    for (char **entry = env; *entry; entry++)
        free(*entry);
    free(env);
}

void crmpi_param_finalize(void)
{
    pthread_mutex_lock(&param_lock);
    for (size_t i = 0; i < param_registry.num_entries; i++)
        free(param_registry.entries[i].value);
    free(param_registry.entries);
    for (size_t i = 0; i < param_registry.num_overrides; i++) {
        free(param_registry.overrides[i].name);
        free(param_registry.overrides[i].value);
    }
    free(param_registry.overrides);
    for (size_t i = 0; i < param_registry.num_file_entries; i++) {
        free(param_registry.file_entries[i].name);
        free(param_registry.file_entries[i].value);
    }
    free(param_registry.file_entries);
    free(param_registry.file_path);
    param_strings_free(&param_registry.retired);
    param_strings_free(&param_registry.warned_unknown);
    memset(&param_registry, 0, sizeof(param_registry));
    pthread_mutex_unlock(&param_lock);
}

int crmpi_param_parse_mca_arg(int argc, char **argv, int *i)
{
    const char *arg = argv[*i];

    if (strcmp(arg, "--mca") != 0 && strcmp(arg, "-mca") != 0)
        return 0;
    if (*i + 2 >= argc) {
        crmpi_log_error("%s needs a name and a value", arg);
        return -1;
    }
    if (crmpi_param_set_override(argv[*i + 1], argv[*i + 2]) != CRMPI_OK)
        return -1;
    *i += 2;
    return 1;
}
