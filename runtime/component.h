/*
 * component.h: frameworks and components (Open MPI's MCA, statically linked).
 *
 *   framework  (e.g. "plm", "btl", "crs")  declares its base parameters:
 *        <fw>               selection list: "a,b" (only these) or "^a,b" (all but these)
 *        <fw>_base_verbose  verbosity of crmpi_fw_verbose() for this framework
 *   component  (e.g. plm "local")  declares its own parameters and can be queried
 *
 *   lifecycle:  crmpi_catalog_register_all() -> crmpi_framework_open()
 *                 -> crmpi_framework_select_one() | crmpi_framework_select_all()
 *                 -> (use the selected components' ops) -> crmpi_framework_close()
 *
 * Selection: a component is a candidate when the selection list allows it; its query()
 * says whether it can run here and at what priority. Every candidate that is not chosen
 * gets a verbose line saying why; when none can be chosen, one error names each candidate
 * and its reason.
 *
 * Thread safety: all of this runs during start-up and shut-down, single-threaded.
 */
#ifndef CRMPI_COMPONENT_H
#define CRMPI_COMPONENT_H

#include <stdbool.h>
#include <stddef.h>

#include "param.h"

/*
 * Descriptors vs implementations. Every framework and component has a descriptor (pure
 * data: names, description, parameters) that lives in the catalog, linked into every
 * binary, so that crmpi_info can list everything and mpirun can warn about an unknown
 * --mca name even for parameters only ranks read. The implementation (query and ops) is
 * linked only into the binary that runs it (plm into mpirun, btl into libmpi, crs into
 * the agent).
 */
typedef struct crmpi_component_info {
    const char *framework;            /* owning framework's name, e.g. "plm" */
    const char *name;                 /* component name, e.g. "local" */
    const char *description;          /* one line for crmpi_info */
    const crmpi_param_decl_t *params; /* this component's parameters (may be NULL) */
    size_t num_params;                /* entries in params */
} crmpi_component_info_t;

typedef struct crmpi_framework_info {
    const char *name;                                /* "plm", "btl", ... */
    const char *description;                         /* one line for crmpi_info */
    const crmpi_component_info_t *const *components; /* NULL-terminated, preference order */
    const crmpi_param_decl_t *base_params; /* "<fw>_base_<name>" parameters (may be NULL) */
    size_t num_base_params;                /* entries in base_params */
} crmpi_framework_info_t;

typedef struct crmpi_component crmpi_component_t;

/**
 * Can this component run here? Called once per selection.
 * @param priority_out  higher wins; set only on CRMPI_OK
 * @param reason_out    on failure, a short static or component-owned string saying why
 *                      ("no UCX transport reaches peers"); may be left NULL
 * @return CRMPI_OK (available) or an error (not available; not an error of the caller)
 */
typedef int (*crmpi_component_query_fn_t)(const crmpi_component_t *component, int *priority_out,
                                          const char **reason_out);

struct crmpi_component {
    const crmpi_component_info_t *info; /* the descriptor, from the catalog */
    crmpi_component_query_fn_t query;   /* NULL means "always available, priority 0" */
    const void *ops;                    /* the framework's op table for this component */
};

typedef struct crmpi_framework {
    const crmpi_framework_info_t *info;         /* the descriptor, from the catalog */
    const crmpi_component_t *const *components; /* implementations linked here, NULL-terminated */
    int verbose;                                /* <name>_base_verbose, read by open() */
    int is_open;                                /* set by open(), cleared by close() */
} crmpi_framework_t;

/* For crmpi_fw_verbose(): the framework's name. */
#define crmpi_framework_name(fw) ((fw)->info->name)

/** Does the selection list `selection` ("a,b", "^a") include component `name` by name (an
 *  empty list, or an exclusion list, names none)? For components chosen only so. */
bool crmpi_component_named(const char *selection, const char *name);

/** Read <fw>_base_verbose and validate the selection list (unknown names warn). */
int crmpi_framework_open(crmpi_framework_t *fw);

/** Is `component_name` allowed by the framework's selection list? */
int crmpi_framework_allows(const crmpi_framework_t *fw, const char *component_name);

/**
 * Does the selection list name `component_name` (an include list: "self,ofi")? A component
 * whose opening costs something (a fabric library, its endpoint) may stay out of a default
 * selection where it is not needed, yet run when the user names it, and must then say why
 * it cannot run instead of stepping aside quietly.
 */
int crmpi_framework_requested(const crmpi_framework_t *fw, const char *component_name);

/**
 * Choose the highest-priority available allowed component.
 * @return CRMPI_OK with *selected_out set, or CRMPI_ERR_NOT_FOUND after logging one error
 *         that names every candidate and why it was not chosen.
 */
int crmpi_framework_select_one(crmpi_framework_t *fw, const crmpi_component_t **selected_out);

/**
 * Every available allowed component, best priority first (multi-select frameworks: btl).
 * @param selected_out  array of at least `capacity` entries; filled on CRMPI_OK
 * @param count_out     number filled (may be 0: the caller decides whether that is an error)
 */
int crmpi_framework_select_all(crmpi_framework_t *fw, const crmpi_component_t **selected_out,
                               size_t capacity, size_t *count_out);

void crmpi_framework_close(crmpi_framework_t *fw);

/** Every framework descriptor built into crmpi, NULL-terminated (catalog.c). */
extern const crmpi_framework_info_t *const crmpi_catalog[];

/** Parameters that belong to no framework (mpi_*, runtime_*, ...), for the catalog. */
extern const crmpi_param_decl_t crmpi_core_params[];
extern const size_t crmpi_core_num_params;

/**
 * Declare every parameter crmpi knows: the core parameters, each framework's base
 * parameters (<fw>, <fw>_base_verbose) and each component's. Idempotent. Any binary calls
 * it first thing, so that values and unknown names are judged against the full catalog.
 */
int crmpi_catalog_register_all(void);

/**
 * Check every framework's selection list (parameter <fw>) against the catalog, as a
 * launcher does before it starts anything: a list that does not parse, or that includes a
 * name which is no component built here, is logged as one error.
 * @return CRMPI_OK, CRMPI_ERR_BAD_PARAM (a list that does not parse),
 *         CRMPI_ERR_NOT_FOUND (an included name that is no component)
 */
int crmpi_catalog_check_selections(void);

#endif /* CRMPI_COMPONENT_H */
