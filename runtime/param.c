/*
 * param.c: MCA-style run-time parameters (param.h): the registry (param_int.h says which
 * file does the rest).
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
 * The parameter file (param_file.c) is read once, on the first read of any parameter (or
 * the first crmpi_param_warn_unknown()).
 *
 * Thread safety: one mutex guards the registry, since lazy resolution writes the cache
 * from whichever thread reads first. It is never held while calling out (foreach's fn).
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

param_registry_t param_registry;
pthread_mutex_t param_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- small helpers ------------------------------------------------------------------- */

int param_array_reserve(void **array, size_t *cap, size_t needed, size_t elem_size)
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

int param_strings_add(param_strings_t *list, char *text)
{
    int rc = param_array_reserve((void **)&list->items, &list->cap, list->count + 1,
                                 sizeof(list->items[0]));
    if (rc != CRMPI_OK)
        return rc;
    list->items[list->count++] = text;
    return CRMPI_OK;
}

bool param_strings_contains(const param_strings_t *list, const char *text)
{
    for (size_t i = 0; i < list->count; i++) {
        if (strcmp(list->items[i], text) == 0)
            return true;
    }
    return false;
}

void param_strings_free(param_strings_t *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->items[i]);
    free(list->items);
    memset(list, 0, sizeof(*list));
}

bool param_name_is_valid(const char *name)
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

const char *param_skip_space(const char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    return text;
}

char *param_trim(char *text)
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

/* ---- the registry -------------------------------------------------------------------- */

param_entry_t *param_entry_find(const char *name)
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
