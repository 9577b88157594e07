/*
 * catalog.c: every framework built into crmpi, and the declaration of all their parameters
 * (component.h). Descriptors only: linking this pulls in no implementation.
 */
#include "config.h"

#include "component.h"

#include <stdio.h>
#include <stdlib.h>

#include "crmpi_status.h"
#include "log.h"

/* Descriptors, defined beside the code of each framework. */
extern const crmpi_framework_info_t crmpi_plm_framework_info;
extern const crmpi_framework_info_t crmpi_pml_framework_info;
extern const crmpi_framework_info_t crmpi_btl_framework_info;
extern const crmpi_framework_info_t crmpi_snapc_framework_info;
extern const crmpi_framework_info_t crmpi_crs_framework_info;
extern const crmpi_framework_info_t crmpi_filem_framework_info;
extern const crmpi_framework_info_t crmpi_coll_framework_info;

const crmpi_framework_info_t *const crmpi_catalog[] = {
    &crmpi_plm_framework_info,  &crmpi_pml_framework_info,
    &crmpi_btl_framework_info,  &crmpi_snapc_framework_info,
    &crmpi_crs_framework_info,  &crmpi_filem_framework_info,
    &crmpi_coll_framework_info, NULL,
};

/* Parameters declared per framework by the catalog itself: <fw> and <fw>_base_verbose. */
#define CATALOG_BASE_PARAMS_PER_FRAMEWORK 2

/*
 * The frameworks' base declarations, built on first use. crmpi_param_register() keeps
 * pointers to them for the life of the process, so they are never freed, and they are
 * reused when the parameters are declared again after crmpi_param_finalize().
 */
static crmpi_param_decl_t *catalog_base_decls;
/* Entries in catalog_base_decls. */
static size_t catalog_num_base_decls;

/* Build "<fw>" and "<fw>_base_verbose" for one framework into decls[0..1]. */
static int catalog_base_decls_fill(const crmpi_framework_info_t *fw, crmpi_param_decl_t *decls)
{
    char *list_help;
    char *verbose_name;
    char *verbose_help;
    char known[512] = "";
    size_t used = 0;

    for (const crmpi_component_info_t *const *c = fw->components; c && *c; c++) {
        int len =
            snprintf(known + used, sizeof(known) - used, "%s%s", used ? ", " : "", (*c)->name);
        if (len < 0 || (size_t)len >= sizeof(known) - used)
            break;
        used += (size_t)len;
    }
    if (asprintf(&list_help,
                 "Selection of %s components (%s): 'a,b' uses only those, '^a,b' all but "
                 "those; empty means all, the best available first. Known: %s.",
                 fw->name, fw->description, used ? known : "none") < 0)
        goto err_no_memory;
    if (asprintf(&verbose_name, "%s_base_verbose", fw->name) < 0)
        goto err_free_list_help;
    if (asprintf(&verbose_help,
                 "Verbosity of the %s framework's diagnostics on stderr: 0 is quiet, 10 "
                 "explains component selection, 100 shows everything.",
                 fw->name) < 0)
        goto err_free_verbose_name;

    decls[0] =
        (crmpi_param_decl_t){fw->name, CRMPI_PARAM_STRING, "", list_help, CRMPI_PARAM_LEVEL_USER};
    decls[1] = (crmpi_param_decl_t){verbose_name, CRMPI_PARAM_INT, "0", verbose_help,
                                    CRMPI_PARAM_LEVEL_DEV};
    return CRMPI_OK;

err_free_verbose_name:
    free(verbose_name);
err_free_list_help:
    free(list_help);
err_no_memory:
    crmpi_log_error("catalog: out of memory declaring the parameters of %s", fw->name);
    return CRMPI_ERR_OUT_OF_RESOURCE;
}

static int catalog_base_decls_build(void)
{
    size_t num_frameworks = 0;
    crmpi_param_decl_t *decls;
    int rc;

    if (catalog_base_decls)
        return CRMPI_OK;
    while (crmpi_catalog[num_frameworks])
        num_frameworks++;
    decls = calloc(num_frameworks * CATALOG_BASE_PARAMS_PER_FRAMEWORK + 1, sizeof(decls[0]));
    if (!decls) {
        crmpi_log_error("catalog: out of memory declaring the frameworks' parameters");
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < num_frameworks; i++) {
        rc = catalog_base_decls_fill(crmpi_catalog[i],
                                     &decls[i * CATALOG_BASE_PARAMS_PER_FRAMEWORK]);
        if (rc != CRMPI_OK)
            goto err_free_decls;
    }
    catalog_base_decls = decls;
    catalog_num_base_decls = num_frameworks * CATALOG_BASE_PARAMS_PER_FRAMEWORK;
    return CRMPI_OK;

err_free_decls:
    /* Entries before the failing framework own their strings; "<fw>" names are static. */
    for (size_t i = 0; i < num_frameworks * CATALOG_BASE_PARAMS_PER_FRAMEWORK; i++) {
        free((char *)decls[i].help);
        if (i % CATALOG_BASE_PARAMS_PER_FRAMEWORK == 1)
            free((char *)decls[i].name);
    }
    free(decls);
    return rc;
}

/* What catalog_is_registered_visit looks for. */
typedef struct catalog_probe {
    const crmpi_param_decl_t *wanted; /* a declaration only the catalog registers */
} catalog_probe_t;

static int catalog_is_registered_visit(const crmpi_param_decl_t *decl, void *arg)
{
    const catalog_probe_t *probe = arg;
    return decl == probe->wanted;
}

int crmpi_catalog_register_all(void)
{
    catalog_probe_t probe = {.wanted = &crmpi_core_params[0]};
    int rc;

    /* Already declared (since the last crmpi_param_finalize)? The registry is the truth,
     * so a finalize between two calls needs no flag here to be reset. */
    if (crmpi_param_foreach(catalog_is_registered_visit, &probe) != 0)
        return CRMPI_OK;

    rc = catalog_base_decls_build();
    if (rc != CRMPI_OK)
        return rc;
    rc = crmpi_param_register(crmpi_core_params, crmpi_core_num_params);
    if (rc != CRMPI_OK)
        return rc;
    for (size_t i = 0; crmpi_catalog[i]; i++) {
        const crmpi_framework_info_t *fw = crmpi_catalog[i];

        rc = crmpi_param_register(&catalog_base_decls[i * CATALOG_BASE_PARAMS_PER_FRAMEWORK],
                                  CATALOG_BASE_PARAMS_PER_FRAMEWORK);
        if (rc != CRMPI_OK)
            return rc;
        if (fw->num_base_params > 0) {
            rc = crmpi_param_register(fw->base_params, fw->num_base_params);
            if (rc != CRMPI_OK)
                return rc;
        }
        for (const crmpi_component_info_t *const *c = fw->components; c && *c; c++) {
            if ((*c)->num_params == 0)
                continue;
            rc = crmpi_param_register((*c)->params, (*c)->num_params);
            if (rc != CRMPI_OK)
                return rc;
        }
    }
    return CRMPI_OK;
}
