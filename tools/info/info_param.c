/*
 * info_param.c: crmpi_info --param FRAMEWORK COMPONENT (info.h).
 *
 * Parameters are listed in catalog order, grouped the way ompi_info groups them:
 * "MCA <fw> base" for the core parameters (grouped by their prefix, mpi_* and runtime_*)
 * and each framework's own ones, "MCA <fw> <component>" for a component's.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "component.h"
#include "crmpi_status.h"
#include "info.h"
#include "log.h"
#include "param.h"

/* Longest core prefix ("runtime"). */
#define INFO_PREFIX_MAX 64

/* What the user asked for, and what was found. */
typedef struct info_param_query {
    const char *framework; /* framework, core prefix, or "all" */
    const char *component; /* component, "base", or "all" */
    int max_level;         /* show parameters at this level and below */
    size_t num_shown;      /* parameters printed */
    size_t num_hidden;     /* parameters that matched but are above max_level */
} info_param_query_t;

static const char *info_param_level_name(int level)
{
    static const char *const names[] = {
        "",          "user/basic", "user/detail", "user/all", "tuner/basic", "tuner/detail",
        "tuner/all", "dev/basic",  "dev/detail",  "dev/all"};
    return level >= 1 && level <= 9 ? names[level] : "?";
}

static const char *info_param_type_name(crmpi_param_type_t type)
{
    switch (type) {
    case CRMPI_PARAM_INT: return "int";
    case CRMPI_PARAM_BOOL: return "bool";
    case CRMPI_PARAM_STRING: return "string";
    case CRMPI_PARAM_SIZE: return "size";
    }
    return "?";
}

static void info_param_source_describe(const char *name, crmpi_param_source_t source, char *buf,
                                       size_t size)
{
    switch (source) {
    case CRMPI_PARAM_SOURCE_DEFAULT: snprintf(buf, size, "default"); return;
    case CRMPI_PARAM_SOURCE_FILE: snprintf(buf, size, "parameter file"); return;
    case CRMPI_PARAM_SOURCE_ENV: snprintf(buf, size, "environment (CRMPI_MCA_%s)", name); return;
    case CRMPI_PARAM_SOURCE_OVERRIDE: snprintf(buf, size, "command line (--mca)"); return;
    }
    snprintf(buf, size, "?");
}

/* Print `text` word-wrapped, every line indented to the value column. */
static void info_param_help_print(const char *text)
{
    const int indent = INFO_LABEL_WIDTH + 2;
    const int width = INFO_LINE_WIDTH - indent;

    while (*text) {
        int len = (int)strlen(text);
        int cut = len;

        if (len > width) {
            /* Break at the last blank that fits; a longer word is printed whole. */
            for (cut = width; cut > 0 && text[cut] != ' '; cut--)
                ;
            if (cut == 0)
                for (cut = width; text[cut] && text[cut] != ' '; cut++)
                    ;
        }
        printf("%*s%.*s\n", indent, "", cut, text);
        text += cut;
        while (*text == ' ')
            text++;
    }
}

/* Print one parameter, or count it as hidden when its level is above the one asked for. */
static void info_param_print(info_param_query_t *query, const char *framework,
                             const char *component, const char *name)
{
    const crmpi_param_decl_t *decl;
    const char *value;
    crmpi_param_source_t source;
    char label[INFO_LABEL_WIDTH + 64];
    char source_text[256];

    /* Every name printed here comes from the catalog, which declared it. */
    if (crmpi_param_lookup(name, &decl, &value, &source) != CRMPI_OK)
        return;
    if (decl->level > query->max_level) {
        query->num_hidden++;
        return;
    }
    query->num_shown++;
    snprintf(label, sizeof(label), "MCA %s %s", framework, component);
    info_param_source_describe(name, source, source_text, sizeof(source_text));
    printf("%*s: parameter \"%s\" (current value: \"%s\", data source: %s, level: %d %s, "
           "type: %s)\n",
           INFO_LABEL_WIDTH, label, name, value, source_text, decl->level,
           info_param_level_name(decl->level), info_param_type_name(decl->type));
    /* Once the value was changed, the default is no longer on screen: repeat it. */
    if (strcmp(value, decl->default_value) != 0)
        printf("%*sdefault value: \"%s\"\n", INFO_LABEL_WIDTH + 2, "", decl->default_value);
    info_param_help_print(decl->help);
}

/* The prefix of a core parameter's name ("mpi" for "mpi_param_check"). */
static void info_param_core_prefix(const char *name, char *prefix, size_t size)
{
    size_t len = strcspn(name, "_");

    if (len >= size)
        len = size - 1;
    memcpy(prefix, name, len);
    prefix[len] = '\0';
}

static bool info_param_matches(const char *wanted, const char *actual)
{
    return strcmp(wanted, "all") == 0 || strcmp(wanted, actual) == 0;
}

/* Is `framework`/`component` something the catalog has? If not, say so and what is known. */
static bool info_param_query_is_known(const info_param_query_t *query)
{
    char prefix[INFO_PREFIX_MAX];
    bool framework_known = strcmp(query->framework, "all") == 0;
    bool component_known =
        strcmp(query->component, "all") == 0 || strcmp(query->component, "base") == 0;

    for (size_t i = 0; i < crmpi_core_num_params; i++) {
        info_param_core_prefix(crmpi_core_params[i].name, prefix, sizeof(prefix));
        framework_known = framework_known || strcmp(prefix, query->framework) == 0;
    }
    for (size_t i = 0; crmpi_catalog[i]; i++) {
        const crmpi_framework_info_t *fw = crmpi_catalog[i];
        bool this_framework = info_param_matches(query->framework, fw->name);

        framework_known = framework_known || this_framework;
        for (const crmpi_component_info_t *const *c = fw->components; c && *c; c++)
            component_known =
                component_known || (this_framework && strcmp((*c)->name, query->component) == 0);
    }
    if (!framework_known) {
        char known[1024] = "";
        size_t used = 0;
        for (size_t i = 0; crmpi_catalog[i] && used < sizeof(known); i++)
            used += (size_t)snprintf(known + used, sizeof(known) - used, "%s, ",
                                     crmpi_catalog[i]->name);
        for (size_t i = 0; i < crmpi_core_num_params && used < sizeof(known); i++) {
            char earlier[INFO_PREFIX_MAX];
            bool seen = false;

            info_param_core_prefix(crmpi_core_params[i].name, prefix, sizeof(prefix));
            for (size_t j = 0; j < i && !seen; j++) {
                info_param_core_prefix(crmpi_core_params[j].name, earlier, sizeof(earlier));
                seen = strcmp(earlier, prefix) == 0;
            }
            if (!seen)
                used += (size_t)snprintf(known + used, sizeof(known) - used, "%s, ", prefix);
        }
        crmpi_log_error("unknown framework '%s'; known: %sall", query->framework, known);
        return false;
    }
    if (!component_known) {
        crmpi_log_error("framework '%s' has no component '%s'; 'crmpi_info' lists them",
                        query->framework, query->component);
        return false;
    }
    return true;
}

int info_param_list(const char *framework, const char *component, int max_level)
{
    info_param_query_t query = {
        .framework = framework, .component = component, .max_level = max_level};
    char prefix[INFO_PREFIX_MAX];

    if (!info_param_query_is_known(&query))
        return INFO_EXIT_ERROR;

    if (info_param_matches(component, "base")) {
        for (size_t i = 0; i < crmpi_core_num_params; i++) {
            info_param_core_prefix(crmpi_core_params[i].name, prefix, sizeof(prefix));
            if (info_param_matches(framework, prefix))
                info_param_print(&query, prefix, "base", crmpi_core_params[i].name);
        }
    }
    for (size_t i = 0; crmpi_catalog[i]; i++) {
        const crmpi_framework_info_t *fw = crmpi_catalog[i];
        char verbose_name[INFO_PREFIX_MAX + sizeof("_base_verbose")];

        if (!info_param_matches(framework, fw->name))
            continue;
        if (info_param_matches(component, "base")) {
            snprintf(verbose_name, sizeof(verbose_name), "%s_base_verbose", fw->name);
            info_param_print(&query, fw->name, "base", fw->name);
            info_param_print(&query, fw->name, "base", verbose_name);
            for (size_t p = 0; p < fw->num_base_params; p++)
                info_param_print(&query, fw->name, "base", fw->base_params[p].name);
        }
        for (const crmpi_component_info_t *const *c = fw->components; c && *c; c++) {
            if (!info_param_matches(component, (*c)->name))
                continue;
            for (size_t p = 0; p < (*c)->num_params; p++)
                info_param_print(&query, fw->name, (*c)->name, (*c)->params[p].name);
        }
    }
    /* Say what the level filter hid, so that an empty listing is never a mystery. */
    if (query.num_hidden > 0)
        printf("(%zu more parameter%s above level %d; use --level 9 to see %s)\n", query.num_hidden,
               query.num_hidden == 1 ? "" : "s", max_level, query.num_hidden == 1 ? "it" : "them");
    return INFO_EXIT_OK;
}
