/*
 * param.h: MCA-style run-time parameters.
 *
 *   declare (static tables, one per framework/component)
 *      -> crmpi_param_register() at start-up
 *      -> values resolved on first read, from the highest-priority source:
 *           1. override  (crmpi_param_set_override: mpirun's --mca, tests)
 *           2. environment CRMPI_MCA_<name>  (how mpirun passes --mca to ranks)
 *           3. parameter file: $CRMPI_PARAM_FILE if set, else $HOME/.crmpi/mca-params.conf
 *              ("name = value" lines, '#' comments)
 *           4. the declared default
 *
 * Every parameter has a name, type, default, help and level, so crmpi_info can list it.
 * Names are "<framework>_<component>_<name>" or "<framework>_base_<name>"; the framework
 * selection list itself is a parameter named after the framework ("btl": "self,sm" or "^tcp").
 *
 * Thread safety: register and set_override before threads start; getters are safe after.
 */
#ifndef CRMPI_PARAM_H
#define CRMPI_PARAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    CRMPI_PARAM_INT,    /* signed 64-bit integer, decimal or 0x hex */
    CRMPI_PARAM_BOOL,   /* 1/0, true/false, yes/no, on/off (case-insensitive) */
    CRMPI_PARAM_STRING, /* any text; the empty string is a value */
    CRMPI_PARAM_SIZE,   /* byte count with optional k/m/g suffix (powers of 1024) */
} crmpi_param_type_t;

/* Levels as in Open MPI: 1-3 for users, 4-6 for tuners, 7-9 for developers. */
enum { CRMPI_PARAM_LEVEL_USER = 1, CRMPI_PARAM_LEVEL_TUNER = 4, CRMPI_PARAM_LEVEL_DEV = 7 };

typedef enum {
    CRMPI_PARAM_SOURCE_DEFAULT,
    CRMPI_PARAM_SOURCE_FILE,
    CRMPI_PARAM_SOURCE_ENV,
    CRMPI_PARAM_SOURCE_OVERRIDE,
} crmpi_param_source_t;

typedef struct crmpi_param_decl {
    const char *name;          /* full name, e.g. "btl_tcp_if_include" */
    crmpi_param_type_t type;   /* how the text value is parsed */
    const char *default_value; /* textual default; must parse as `type` */
    const char *help;          /* one or two sentences for crmpi_info */
    int level;                 /* 1..9, see above */
} crmpi_param_decl_t;

/**
 * Declare parameters. `decls` must stay valid for the life of the process (static tables).
 * @return CRMPI_OK, CRMPI_ERR_EXISTS (a name is already declared: a programming error,
 *         logged), CRMPI_ERR_BAD_PARAM (a default does not parse as its type).
 */
int crmpi_param_register(const crmpi_param_decl_t *decls, size_t count);

/**
 * Set the highest-priority value of a parameter (mpirun's --mca). The name need not be
 * declared yet; crmpi_param_warn_unknown() reports it later if it never is.
 * @return CRMPI_OK, CRMPI_ERR_OUT_OF_RESOURCE, or CRMPI_ERR_BAD_PARAM (logged: `name` is not
 *         made of letters, digits and '_', or `value` is NULL; such a name could not travel
 *         as CRMPI_MCA_<name> to a child).
 */
int crmpi_param_set_override(const char *name, const char *value);

/**
 * A tool's command line: when argv[*i] is "--mca" (or "-mca"), set NAME VALUE (the next two
 * arguments) as an override and move *i onto VALUE.
 * @return 1 when it was one, 0 when argv[*i] is something else, -1 when NAME or VALUE is
 *         missing or NAME is malformed (logged)
 */
int crmpi_param_parse_mca_arg(int argc, char **argv, int *i);

/* Typed getters. The name must be declared with that type.
 * @return CRMPI_OK; CRMPI_ERR_NOT_FOUND (not declared); CRMPI_ERR_BAD_PARAM (the winning
 *         source's text does not parse: logged once naming the source, value not set). */
int crmpi_param_get_int(const char *name, int64_t *value_out);
int crmpi_param_get_bool(const char *name, bool *value_out);
int crmpi_param_get_size(const char *name, uint64_t *value_out);
/* The string stays valid until crmpi_param_finalize(). */
int crmpi_param_get_string(const char *name, const char **value_out);

/** Where the current value of `name` comes from, and its text (for crmpi_info). */
int crmpi_param_lookup(const char *name, const crmpi_param_decl_t **decl_out,
                       const char **value_out, crmpi_param_source_t *source_out);

/** Visit every declared parameter in declaration order; stop early when fn returns non-zero. */
int crmpi_param_foreach(int (*fn)(const crmpi_param_decl_t *decl, void *arg), void *arg);

/**
 * Warn (once per name, on stderr, prefixed with `who`) about every override, CRMPI_MCA_*
 * environment variable and parameter-file entry that names no declared parameter.
 * @return the number of unknown names.
 */
int crmpi_param_warn_unknown(const char *who);

/**
 * The environment entries ("CRMPI_MCA_name=value") that carry every override to a child
 * process. NULL-terminated; free with crmpi_param_free_env().
 */
char **crmpi_param_overrides_as_env(void);
void crmpi_param_free_env(char **env);

/** Parse helpers, exposed for option parsing and tests. */
int crmpi_param_parse_bool(const char *text, bool *value_out);
int crmpi_param_parse_size(const char *text, uint64_t *value_out);
int crmpi_param_parse_int(const char *text, int64_t *value_out);

/** Drop every declaration, override and cached value (tests, finalize). */
void crmpi_param_finalize(void);

#endif /* CRMPI_PARAM_H */
