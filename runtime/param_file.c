/*
 * param_file.c: the parameter file (param_int.h).
 *
 * The parameter file is read once, on the first read of any parameter (or the first
 * crmpi_param_warn_unknown()). $CRMPI_PARAM_FILE names it; set to the empty string, it
 * disables the file. Lines are "name = value"; blank lines and lines whose first non-blank
 * character is '#' are ignored; '#' elsewhere is part of the value, so paths may contain
 * it. A malformed line is reported once with its file and line number and skipped.
 *
 * Called with param_lock held.
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

/* The last entry for `name` wins, as a later line overrides an earlier one. */
const param_file_entry_t *param_file_find(const char *name)
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
void param_file_load(void)
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
