/*
 * fault.c: named fault-injection points (fault.h).
 *
 * The armed list is parsed once into a small array; each entry keeps its own hit count.
 * CRMPI_FAULT is read here directly rather than through the parameter catalog because fault
 * points must also work in processes and unit tests that never declare parameters; the
 * parameter runtime_fault_inject is read too when it is declared (mpirun's --mca).
 */
#include "config.h"

#include "fault.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"
#include "param.h"

/* The environment variable that arms fault points. */
#define FAULT_ENV "CRMPI_FAULT"
/* The parameter that arms fault points (core_params.c). */
#define FAULT_PARAM "runtime_fault_inject"
/* The environment variable naming the file whose creation ends every pause point's hold. */
#define FAULT_RELEASE_ENV "CRMPI_FAULT_RELEASE"
/* How often a held pause point looks for its release file. */
#define FAULT_RELEASE_POLL_US 10000
/* Longest point name accepted in a list. */
#define FAULT_NAME_MAX 64

const crmpi_fault_point_t crmpi_fault_points[] = {
    {"filem_global_copy_fail",
     "an agent's copy of its rank's images to the global level fails at its start (the local "
     "level, when configured, still holds them)"},
    {"filem_partner_copy_fail",
     "an agent's copy of its rank's images to its partner's node fails at its start (the "
     "other levels, when configured, still hold them)"},
    {"filem_copy_enospc",
     "FileM: a write to stable storage fails with ENOSPC (the disk is full) while a rank's "
     "files are copied"},
    {"filem_copy_pause",
     "FileM: the agent's copy of its rank's images to stable storage is held before it "
     "starts, while the rank runs (a slow copy: lets a test act while a checkpoint is being "
     "stored); see crmpi_fault_pause for how long"},
    {"filem_copy_corrupt",
     "FileM: a copied file's bytes are damaged on stable storage after their checksum was "
     "computed (restart verification must catch it)"},
    {"snapc_commit_crash",
     "SnapC: the coordinator dies after the new sequence's manifest is in place and before "
     "the commit record names it"},
    {"snapc_quiesce_crash",
     "SnapC: the rank dies during the quiesce, after it has sent its bookmarks and before its "
     "drain (its C/R thread ends the process); arm it in one rank only"},
    {"snapc_dump_pause",
     "SnapC: the agent is held before it dumps its rank, which is suspended meanwhile (a slow "
     "dump: lets a test look at the suspended rank, or act during a checkpoint)"},
    {"crs_criu_mapped_copy_fail",
     "CRS (criu): the copy of a file the rank maps shared and writable fails at CRIU's "
     "post-dump notification (an I/O error): CRIU must fail the dump"},
    {"crs_criu_dump_pause",
     "CRS (criu): CRIU is held at its post-dump notification, the rank's images written and "
     "its tasks still frozen (lets a test act while CRIU runs)"},
    {"snapc_drain_pause",
     "SnapC: the rank is held after it learnt how many messages each peer sent it and before "
     "it drains them (lets a test act during the drain)"},
    {"snapc_suspend_pause",
     "SnapC: the rank is held after its transports were released for the dump and before it "
     "answers READY (lets a test act while the ranks are suspended)"},
    {"snapc_commit_pause",
     "SnapC: the coordinator (mpirun) is held when every rank's files are durable, before it "
     "commits the sequence (lets a test act during the commit)"},
    {"snapc_dump_fail",
     "SnapC: the agent's dump of its rank fails without running the checkpointer, as a CRIU "
     "failure would"},
    {"snapc_flatten_fail",
     "SnapC: the agent cannot flatten its rank's delta with its chain (as with a parent stored "
     "compressed): the delta is stored as it is"},
    /* Fired by libcrmpi-pheap (pheap/pheap_util.c), which reads CRMPI_FAULT itself: the
     * library is used without the run-time. Listed here so that libmpi knows the names. */
    {"pheap_backup_stop_mid_write",
     "pheap: backup() stops its process with SIGSTOP when half of the new backup is written "
     "(a test kills it there: the previous backup must restore)"},
    {"pheap_backup_stop_before_rename",
     "pheap: backup() stops its process with SIGSTOP after the new backup is written and "
     "flushed, before it replaces the previous one"},
    {"agent_restore_pause",
     "Agent: it is held before it restores its rank with CRIU, as a restore on a loaded node "
     "would be: the restarted job is still starting meanwhile"},
    {"agent_hello_pause",
     "Agent: it is held before it tells mpirun who it is (AGENT_HELLO: once its rank runs, "
     "or before a restore), as an agent on a slow node would: the job is still starting "
     "meanwhile"},
    {NULL, NULL},
};

/* One armed entry of the list. */
typedef struct fault_armed {
    char name[FAULT_NAME_MAX]; /* the point's name */
    uint64_t fire_on;          /* the hit that fires (1-based), or 0: every hit */
    uint64_t hits;             /* times the point was reached (atomic) */
} fault_armed_t;

/* Protects fault_list and fault_count while the list is (re)built. */
static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
/* The armed entries, or NULL when nothing is armed. */
static fault_armed_t *fault_list;
/* Entries in fault_list. */
static size_t fault_count;
/* Has the list been read (from the environment, or set by crmpi_fault_configure)? */
static bool fault_loaded;

static bool fault_point_is_known(const char *name)
{
    for (const crmpi_fault_point_t *p = crmpi_fault_points; p->name; p++)
        if (strcmp(p->name, name) == 0)
            return true;
    return false;
}

/* Append the entries of `spec` ("a,b:2") to `*list`. Called with fault_lock held. */
static int fault_list_parse(const char *spec, const char *source, fault_armed_t **list,
                            size_t *count)
{
    const char *cursor = spec;

    while (cursor && *cursor) {
        size_t len = strcspn(cursor, ",");
        char entry[FAULT_NAME_MAX + 32];
        char *colon;
        fault_armed_t *grown;
        fault_armed_t armed = {.fire_on = 0};

        if (len == 0 || len >= sizeof(entry)) {
            crmpi_log_error("%s: malformed fault list '%s' (expected name[:N],...)", source, spec);
            return CRMPI_ERR_BAD_PARAM;
        }
        memcpy(entry, cursor, len);
        entry[len] = '\0';
        cursor += len + (cursor[len] == ',');
        colon = strchr(entry, ':');
        if (colon) {
            char *end;
            unsigned long long nth;

            *colon = '\0';
            nth = strtoull(colon + 1, &end, 10);
            if (colon[1] == '\0' || *end != '\0' || nth == 0) {
                crmpi_log_error("%s: fault '%s': the hit to fire on must be a number from 1 up",
                                source, entry);
                return CRMPI_ERR_BAD_PARAM;
            }
            armed.fire_on = nth;
        }
        if (strlen(entry) == 0 || strlen(entry) >= FAULT_NAME_MAX) {
            crmpi_log_error("%s: malformed fault list '%s' (expected name[:N],...)", source, spec);
            return CRMPI_ERR_BAD_PARAM;
        }
        if (!fault_point_is_known(entry))
            crmpi_log_warn("%s: '%s' is not a known fault point; it will never fire", source,
                           entry);
        snprintf(armed.name, sizeof(armed.name), "%s", entry);
        grown = realloc(*list, (*count + 1) * sizeof(**list));
        if (!grown) {
            crmpi_log_error("%s: out of memory reading the fault list", source);
            return CRMPI_ERR_OUT_OF_RESOURCE;
        }
        *list = grown;
        (*list)[(*count)++] = armed;
    }
    return CRMPI_OK;
}

/* Install `list` as the armed list. Called with fault_lock held. */
static void fault_list_install(fault_armed_t *list, size_t count)
{
    free(fault_list);
    fault_list = list;
    fault_count = count;
    __atomic_store_n(&fault_loaded, true, __ATOMIC_RELEASE);
}

/* Read CRMPI_FAULT and runtime_fault_inject, once. */
static void fault_list_load(void)
{
    fault_armed_t *list = NULL;
    size_t count = 0;
    const char *param_value = NULL;
    int rc = CRMPI_OK;

    pthread_mutex_lock(&fault_lock);
    if (fault_loaded) {
        pthread_mutex_unlock(&fault_lock);
        return;
    }
    rc = fault_list_parse(getenv(FAULT_ENV), FAULT_ENV, &list, &count);
    /* Not declared in this process: only the environment arms points here. */
    if (rc == CRMPI_OK && crmpi_param_get_string(FAULT_PARAM, &param_value) == CRMPI_OK)
        rc = fault_list_parse(param_value, FAULT_PARAM, &list, &count);
    if (rc != CRMPI_OK) {
        /* A malformed list arms nothing: firing half of what the test meant would mislead. */
        free(list);
        list = NULL;
        count = 0;
    }
    fault_list_install(list, count);
    pthread_mutex_unlock(&fault_lock);
}

bool crmpi_fault_hit(const char *name)
{
    bool fire = false;

    if (!__atomic_load_n(&fault_loaded, __ATOMIC_ACQUIRE))
        fault_list_load();
    pthread_mutex_lock(&fault_lock);
    if (!fault_point_is_known(name)) {
        pthread_mutex_unlock(&fault_lock);
        crmpi_log_error("fault point '%s' is not in fault.c's table (a programming error)", name);
        return false;
    }
    for (size_t i = 0; i < fault_count; i++) {
        fault_armed_t *armed = &fault_list[i];

        if (strcmp(armed->name, name) != 0)
            continue;
        armed->hits++;
        if (armed->fire_on == 0 || armed->fire_on == armed->hits)
            fire = true;
    }
    pthread_mutex_unlock(&fault_lock);
    if (fire)
        crmpi_log_warn("fault injected: %s", name);
    return fire;
}

void crmpi_fault_crash(const char *name)
{
    if (crmpi_fault_hit(name))
        _exit(CRMPI_FAULT_EXIT_STATUS);
}

bool crmpi_fault_pause(const char *name)
{
    const char *release = getenv(FAULT_RELEASE_ENV);

    if (!crmpi_fault_hit(name))
        return false;
    if (!release || !*release) {
        sleep(CRMPI_FAULT_PAUSE_S);
        return true;
    }
    while (access(release, F_OK) != 0)
        usleep(FAULT_RELEASE_POLL_US);
    return true;
}

int crmpi_fault_configure(const char *spec)
{
    fault_armed_t *list = NULL;
    size_t count = 0;
    int rc;

    pthread_mutex_lock(&fault_lock);
    rc = fault_list_parse(spec, "crmpi_fault_configure", &list, &count);
    if (rc != CRMPI_OK) {
        free(list);
        list = NULL;
        count = 0;
    }
    fault_list_install(list, count);
    pthread_mutex_unlock(&fault_lock);
    return rc;
}

void crmpi_fault_reset(void)
{
    pthread_mutex_lock(&fault_lock);
    free(fault_list);
    fault_list = NULL;
    fault_count = 0;
    __atomic_store_n(&fault_loaded, false, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&fault_lock);
}
