/*
 * param_int.h: what the files of the parameter system share (runtime/ only): the registry
 * and its lock, and small helpers.
 *
 *   param.c          the registry: declarations, overrides, resolution and the getters
 *   param_parse.c    the value syntax of ints, sizes and booleans
 *   param_file.c     the parameter file ("name = value" lines)
 *   param_unknown.c  the warning about names nobody declared, with a suggestion
 *
 * Every function here that reads or writes param_registry expects param_lock held.
 */
#ifndef CRMPI_PARAM_INT_H
#define CRMPI_PARAM_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "param.h"

/* Prefix of the environment variables that carry parameters (how mpirun reaches ranks). */
#define PARAM_ENV_PREFIX "CRMPI_MCA_"
/* Longest parameter name; longer names are refused at declaration and override. */
#define PARAM_NAME_MAX 128

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
typedef struct param_registry {
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
} param_registry_t;

/* The registry (param.c) and the mutex that guards it. */
extern param_registry_t param_registry;
extern pthread_mutex_t param_lock;

/* ---- helpers (param.c) -------------------------------------------------------------- */

/** Make room for `needed` elements of `elem_size` bytes in *array (capacity *cap). */
int param_array_reserve(void **array, size_t *cap, size_t needed, size_t elem_size);
/** Take ownership of `text` in `list`; on failure the caller still owns it. */
int param_strings_add(param_strings_t *list, char *text);
bool param_strings_contains(const param_strings_t *list, const char *text);
void param_strings_free(param_strings_t *list);
/** Names become parts of environment variable names: [A-Za-z0-9_], shorter than
 *  PARAM_NAME_MAX. */
bool param_name_is_valid(const char *name);
/** The first non-blank character of `text`. */
const char *param_skip_space(const char *text);
/** Trim `text` in place at both ends; returns the first non-blank character. */
char *param_trim(char *text);
/** The declared parameter `name`, or NULL. */
param_entry_t *param_entry_find(const char *name);

/* ---- the parameter file (param_file.c) ---------------------------------------------- */

/** Read the parameter file, once: its valid lines go to param_registry.file_entries. */
void param_file_load(void);
/** The file's entry for `name` (the last one wins), or NULL. */
const param_file_entry_t *param_file_find(const char *name);

#endif /* CRMPI_PARAM_INT_H */
