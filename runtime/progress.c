/*
 * progress.c: the progress engine and the library lock (progress.h).
 *
 * Registration happens while a layer opens or closes, with the library lock held or before
 * any other thread exists; crmpi_progress() runs with the lock held. The lock therefore
 * guards the function array too, and nothing here takes it itself.
 */
#include "config.h"

#include "progress.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"

/* Registered functions, in registration order. */
static crmpi_progress_fn_t *progress_fns;
/* Entries used in progress_fns. */
static size_t progress_num_fns;
/* Entries allocated in progress_fns. */
static size_t progress_cap_fns;

/* The library lock (progress.h): one mutex, not recursive. */
static pthread_mutex_t progress_library_lock = PTHREAD_MUTEX_INITIALIZER;

int crmpi_progress_register(crmpi_progress_fn_t fn)
{
    for (size_t i = 0; i < progress_num_fns; i++) {
        if (progress_fns[i] == fn)
            return CRMPI_ERR_EXISTS;
    }
    if (progress_num_fns == progress_cap_fns) {
        size_t new_cap = progress_cap_fns ? progress_cap_fns * 2 : 8;
        crmpi_progress_fn_t *grown = realloc(progress_fns, new_cap * sizeof(grown[0]));
        if (!grown) {
            crmpi_log_error("progress: out of memory registering a progress function");
            return CRMPI_ERR_OUT_OF_RESOURCE;
        }
        progress_fns = grown;
        progress_cap_fns = new_cap;
    }
    progress_fns[progress_num_fns++] = fn;
    return CRMPI_OK;
}

int crmpi_progress_unregister(crmpi_progress_fn_t fn)
{
    for (size_t i = 0; i < progress_num_fns; i++) {
        if (progress_fns[i] != fn)
            continue;
        /* Keep the order: layers rely on being polled in the order they registered. */
        memmove(&progress_fns[i], &progress_fns[i + 1],
                (progress_num_fns - i - 1) * sizeof(progress_fns[0]));
        progress_num_fns--;
        return CRMPI_OK;
    }
    return CRMPI_ERR_NOT_FOUND;
}

int crmpi_progress(void)
{
    int events = 0;

    /* Index and count are re-read each time: a function may unregister itself (the next
     * one then waits for the next call) or register another. */
    for (size_t i = 0; i < progress_num_fns; i++)
        events += progress_fns[i]();
    return events;
}

void crmpi_lock(void)
{
    int rc = pthread_mutex_lock(&progress_library_lock);
    /* Only a corrupted mutex fails here; continuing would corrupt the library's state. */
    if (rc != 0) {
        crmpi_log_error("library lock: pthread_mutex_lock failed: %s", strerror(rc));
        abort();
    }
}

void crmpi_unlock(void)
{
    int rc = pthread_mutex_unlock(&progress_library_lock);
    if (rc != 0) {
        crmpi_log_error("library lock: pthread_mutex_unlock failed: %s", strerror(rc));
        abort();
    }
}
