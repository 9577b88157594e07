/*
 * info.c: info objects, ordered (key, value) string pairs (MPI-3.1 chapter 9), and
 * MPI_INFO_ENV (section 8.2: how the process was started), filled on first use. As MPI-4.0
 * allows, the calls work before MPI is initialized and after it is finalized too.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm_internal.h"
#include "log.h"

#pragma weak MPI_Info_create = PMPI_Info_create
#pragma weak MPI_Info_create_env = PMPI_Info_create_env
#pragma weak MPI_Info_set = PMPI_Info_set
#pragma weak MPI_Info_get = PMPI_Info_get
#pragma weak MPI_Info_get_valuelen = PMPI_Info_get_valuelen
#pragma weak MPI_Info_get_string = PMPI_Info_get_string
#pragma weak MPI_Info_get_nkeys = PMPI_Info_get_nkeys
#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey
#pragma weak MPI_Info_delete = PMPI_Info_delete
#pragma weak MPI_Info_dup = PMPI_Info_dup
#pragma weak MPI_Info_free = PMPI_Info_free

typedef struct info_entry {
    char key[MPI_MAX_INFO_KEY]; /* NUL-terminated, at most MPI_MAX_INFO_KEY - 1 chars */
    char *value;                /* malloc'd, NUL-terminated */
    struct info_entry *next;    /* in order of first setting (Info_get_nthkey) */
} info_entry_t;

struct crmpi_info_s {
    info_entry_t *head; /* the pairs */
    int nkeys;          /* entries in the list */
    bool predefined;    /* MPI_INFO_ENV: never freed */
    bool filled;        /* MPI_INFO_ENV: its keys are there */
};

struct crmpi_info_s crmpi_mpi_info_env = {.predefined = true};

static int info_set(struct crmpi_info_s *info, const char *key, const char *value)
{
    info_entry_t **pos = &info->head;
    char *copy = strdup(value);

    if (!copy)
        return MPI_ERR_NO_MEM;
    while (*pos && strcmp((*pos)->key, key) != 0)
        pos = &(*pos)->next;
    if (*pos) {
        free((*pos)->value);
        (*pos)->value = copy;
        return MPI_SUCCESS;
    }
    info_entry_t *entry = calloc(1, sizeof(*entry));
    if (!entry) {
        free(copy);
        return MPI_ERR_NO_MEM;
    }
    snprintf(entry->key, sizeof(entry->key), "%s", key);
    entry->value = copy;
    *pos = entry;
    info->nkeys++;
    return MPI_SUCCESS;
}

/*
 * The keys of MPI_INFO_ENV (MPI-3.1 section 8.2) any process knows without the job: its
 * command and arguments (argv without argv[0], joined by spaces; /proc/self/cmdline when
 * argv is NULL), host, arch and working directory. MPI_Info_create_env gives these alone,
 * so that it says the same before MPI is initialized, during and after.
 */
static void info_set_process_keys(struct crmpi_info_s *info, int argc, char **argv)
{
    char value[PATH_MAX];
    char cmdline[MPI_MAX_INFO_VAL];
    size_t len = 0;

    if (argv == NULL) {
        FILE *f = fopen("/proc/self/cmdline", "r");

        if (f) {
            len = fread(cmdline, 1, sizeof(cmdline) - 1, f);
            fclose(f);
        }
        cmdline[len] = '\0';
        if (len > 0)
            info_set(info, "command", cmdline);
        /* The arguments follow the command, each ended by a NUL: spaces instead. */
        size_t first = strlen(cmdline) + 1;
        for (size_t i = first; i + 1 < len; i++) {
            if (cmdline[i] == '\0')
                cmdline[i] = ' ';
        }
        if (first < len)
            info_set(info, "argv", cmdline + first);
    } else if (argc > 0 && argv[0]) {
        info_set(info, "command", argv[0]);
        for (int i = 1; i < argc && argv[i] && len + 1 < sizeof(cmdline); i++) {
            int n =
                snprintf(cmdline + len, sizeof(cmdline) - len, "%s%s", i > 1 ? " " : "", argv[i]);
            len = n < 0 ? len : len + (size_t)n;
        }
        if (len > 0)
            info_set(info, "argv", cmdline);
    }
    if (gethostname(value, sizeof(value)) == 0) {
        value[sizeof(value) - 1] = '\0';
        info_set(info, "host", value);
    }
    if (getcwd(value, sizeof(value)))
        info_set(info, "wdir", value);
#if defined(__x86_64__)
    info_set(info, "arch", "x86_64");
#elif defined(__aarch64__)
    info_set(info, "arch", "aarch64");
#endif
}

/* MPI_INFO_ENV's keys (8.2), as far as this process knows them: the job's too. */
static void info_env_fill(void)
{
    char value[32];

    if (crmpi_mpi_info_env.filled)
        return;
    crmpi_mpi_info_env.filled = true;
    info_set_process_keys(&crmpi_mpi_info_env, 0, NULL);
    snprintf(value, sizeof(value), "%u", crmpi_rte_job()->size);
    info_set(&crmpi_mpi_info_env, "maxprocs", value);
    info_set(&crmpi_mpi_info_env, "soft", value);
    info_set(&crmpi_mpi_info_env, "thread_level",
             (const char *[]){"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                              "MPI_THREAD_MULTIPLE"}[crmpi_mpi_state.thread_level & 3]);
}

struct crmpi_info_s *crmpi_info_copy(struct crmpi_info_s *info)
{
    struct crmpi_info_s *copy = calloc(1, sizeof(*copy));

    if (!copy)
        return NULL;
    if (info == MPI_INFO_ENV)
        info_env_fill();
    for (info_entry_t *e = info ? info->head : NULL; e; e = e->next) {
        if (info_set(copy, e->key, e->value) != MPI_SUCCESS) {
            crmpi_info_destroy(copy);
            return NULL;
        }
    }
    return copy;
}

int crmpi_info_set_default(struct crmpi_info_s *info, const char *key, const char *value)
{
    for (info_entry_t *e = info->head; e; e = e->next) {
        if (strcmp(e->key, key) == 0)
            return MPI_SUCCESS;
    }
    return info_set(info, key, value);
}

void crmpi_info_destroy(struct crmpi_info_s *info)
{
    while (info->head) {
        info_entry_t *e = info->head;
        info->head = e->next;
        free(e->value);
        free(e);
    }
    if (!info->predefined)
        free(info);
}

/*
 * Start of every info call: the handle not null, MPI_INFO_ENV filled. The info calls may be
 * called before MPI is initialized and after it is finalized (MPI-4.0 section 11.4.1), but
 * MPI_INFO_ENV describes the job, which only an initialized process knows.
 */
static int info_enter(MPI_Info info, const char *func_name)
{
    crmpi_lock();
    if (info == MPI_INFO_NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_INFO, func_name,
                                           "info is MPI_INFO_NULL");
    if (info == MPI_INFO_ENV) {
        if (!crmpi_mpi_state.instance_active && !crmpi_mpi_info_env.filled)
            return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_INFO, func_name,
                                               "MPI_INFO_ENV is known once MPI is initialized");
        info_env_fill();
    }
    return MPI_SUCCESS;
}

/* A key must be non-empty and shorter than MPI_MAX_INFO_KEY (9.1). */
static int info_check_key(const char *key, const char *func_name)
{
    if (key == NULL || key[0] == '\0' || strlen(key) >= MPI_MAX_INFO_KEY)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_INFO_KEY, func_name,
                                           "the key is NULL, empty or too long");
    return MPI_SUCCESS;
}

static info_entry_t *info_find(MPI_Info info, const char *key)
{
    for (info_entry_t *e = info->head; e; e = e->next) {
        if (strcmp(e->key, key) == 0)
            return e;
    }
    return NULL;
}

int PMPI_Info_create(MPI_Info *info)
{
    static const char func_name[] = "MPI_Info_create";

    crmpi_lock();
    if (info == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, "info is NULL");
    *info = crmpi_info_copy(MPI_INFO_NULL);
    if (!*info)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* MPI-4.0 section 11.4.1: the keys of MPI_INFO_ENV this process knows by itself, whether
 * MPI is initialized or not (info_set_process_keys). */
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    static const char func_name[] = "MPI_Info_create_env";

    crmpi_lock();
    if (info == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, "info is NULL");
    *info = crmpi_info_copy(MPI_INFO_NULL);
    if (!*info)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name, NULL);
    info_set_process_keys(*info, argc, argv);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    static const char func_name[] = "MPI_Info_set";
    int err = info_enter(info, func_name);

    if (err == MPI_SUCCESS)
        err = info_check_key(key, func_name);
    if (err != MPI_SUCCESS)
        return err;
    if (value == NULL || value[0] == '\0' || strlen(value) >= MPI_MAX_INFO_VAL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, func_name,
                                           "the value is NULL, empty or too long");
    err = info_set(info, key, value);
    if (err != MPI_SUCCESS)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, err, func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}

/* Values longer than valuelen are truncated to valuelen characters, plus the NUL (9.1). */
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    static const char func_name[] = "MPI_Info_get";
    int err = info_enter(info, func_name);
    info_entry_t *e;

    if (err == MPI_SUCCESS)
        err = info_check_key(key, func_name);
    if (err != MPI_SUCCESS)
        return err;
    if (valuelen < 0 || value == NULL || flag == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "valuelen is negative or value or flag is NULL");
    e = info_find(info, key);
    *flag = e != NULL;
    if (e)
        snprintf(value, (size_t)valuelen + 1, "%s", e->value);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    static const char func_name[] = "MPI_Info_get_valuelen";
    int err = info_enter(info, func_name);
    info_entry_t *e;

    if (err == MPI_SUCCESS)
        err = info_check_key(key, func_name);
    if (err != MPI_SUCCESS)
        return err;
    if (valuelen == NULL || flag == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "valuelen or flag is NULL");
    e = info_find(info, key);
    *flag = e != NULL;
    if (e)
        *valuelen = (int)strlen(e->value);
    crmpi_unlock();
    return MPI_SUCCESS;
}

/*
 * MPI-4.0 section 9: when key is set, *flag is true, value gets at most *buflen - 1
 * characters and a null character (nothing when *buflen is 0), and *buflen becomes the
 * value's length plus one, whatever was copied; otherwise *flag is false and *buflen and
 * value are left alone.
 */
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    static const char func_name[] = "MPI_Info_get_string";
    int err = info_enter(info, func_name);
    info_entry_t *e;

    if (err == MPI_SUCCESS)
        err = info_check_key(key, func_name);
    if (err != MPI_SUCCESS)
        return err;
    if (buflen == NULL || flag == NULL || *buflen < 0 || (*buflen > 0 && value == NULL))
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "buflen or flag is NULL, *buflen is negative, or "
                                           "value is NULL with a positive *buflen");
    e = info_find(info, key);
    *flag = e != NULL;
    if (e) {
        if (*buflen > 0)
            snprintf(value, (size_t)*buflen, "%s", e->value);
        *buflen = (int)strlen(e->value) + 1;
    }
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    static const char func_name[] = "MPI_Info_get_nkeys";
    int err = info_enter(info, func_name);

    if (err != MPI_SUCCESS)
        return err;
    if (nkeys == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, "nkeys is NULL");
    *nkeys = info->nkeys;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    static const char func_name[] = "MPI_Info_get_nthkey";
    int err = info_enter(info, func_name);
    info_entry_t *e;

    if (err != MPI_SUCCESS)
        return err;
    if (key == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name, "key is NULL");
    if (n < 0 || n >= info->nkeys)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "n is not between 0 and nkeys - 1");
    e = info->head;
    for (int i = 0; i < n; i++)
        e = e->next;
    snprintf(key, MPI_MAX_INFO_KEY, "%s", e->key);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    static const char func_name[] = "MPI_Info_delete";
    int err = info_enter(info, func_name);
    info_entry_t **pos;

    if (err == MPI_SUCCESS)
        err = info_check_key(key, func_name);
    if (err != MPI_SUCCESS)
        return err;
    pos = &info->head;
    while (*pos && strcmp((*pos)->key, key) != 0)
        pos = &(*pos)->next;
    if (!*pos)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_INFO_NOKEY, func_name, key);
    info_entry_t *e = *pos;
    *pos = e->next;
    free(e->value);
    free(e);
    info->nkeys--;
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    static const char func_name[] = "MPI_Info_dup";
    int err = info_enter(info, func_name);

    if (err != MPI_SUCCESS)
        return err;
    if (newinfo == NULL)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_ARG, func_name,
                                           "newinfo is NULL");
    *newinfo = crmpi_info_copy(info);
    if (!*newinfo)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_NO_MEM, func_name, NULL);
    crmpi_unlock();
    return MPI_SUCCESS;
}

int PMPI_Info_free(MPI_Info *info)
{
    static const char func_name[] = "MPI_Info_free";
    int err;

    if (info == NULL) {
        crmpi_lock();
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_INFO, func_name, "info is NULL");
    }
    err = info_enter(*info, func_name);
    if (err != MPI_SUCCESS)
        return err;
    if ((*info)->predefined)
        return crmpi_mpi_errhandler_invoke(MPI_COMM_NULL, MPI_ERR_INFO, func_name,
                                           "MPI_INFO_ENV cannot be freed");
    crmpi_info_destroy(*info);
    *info = MPI_INFO_NULL;
    crmpi_unlock();
    return MPI_SUCCESS;
}
