/*
 * btl_ucx_lib.c: libucp loaded at run time, once per process, and UCX's log routed into
 * crmpi's (btl_ucx.h, "The library").
 */
#include "config.h"

#include "btl_ucx.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"

/* The oldest UCP with UCP_AM_SEND_FLAG_EAGER and ucp_am_send_nbx. */
#define BTL_UCX_MIN_MAJOR 1
#define BTL_UCX_MIN_MINOR 11

/* A failure to load: an error when the user asked for ucx, else a verbose line. */
#define BTL_UCX_LIB_REPORT(loud, ...)                                                              \
    do {                                                                                           \
        if (loud)                                                                                  \
            crmpi_log_error(__VA_ARGS__);                                                          \
        else                                                                                       \
            crmpi_fw_verbose(&crmpi_btl_framework, 10, __VA_ARGS__);                               \
    } while (0)

/* The library, once loaded (never unloaded: btl_ucx.h says why). */
static btl_ucx_lib_t btl_ucx_lib;
/* Collecting UCX's messages (between btl_ucx_lib_log_begin and _end). */
static bool btl_ucx_log_capturing;
/* The first warning or error UCX logged while collecting; "" if none. */
static char btl_ucx_log_first[BTL_UCX_LOG_MAX];

/*
 * UCX's log handler: every message UCX would print goes to btl_base_verbose 20, and the
 * first warning or error while a context starts is kept for the one line that says why it
 * could not. Fatal messages go on to UCX's own printing (UCX aborts after them).
 */
static ucs_log_func_rc_t btl_ucx_lib_log(const char *file, unsigned line, const char *function,
                                         ucs_log_level_t level,
                                         const ucs_log_component_config_t *comp_conf,
                                         const char *message, va_list ap)
{
    char text[BTL_UCX_LOG_MAX];

    if (level == UCS_LOG_LEVEL_FATAL)
        return UCS_LOG_FUNC_RC_CONTINUE;
    vsnprintf(text, sizeof(text), message, ap);
    if (btl_ucx_log_capturing && level <= UCS_LOG_LEVEL_WARN && !btl_ucx_log_first[0])
        snprintf(btl_ucx_log_first, sizeof(btl_ucx_log_first), "%s", text);
    crmpi_fw_verbose(&crmpi_btl_framework, 20, "ucx: UCX says (%s:%u): %s", file, line, text);
    return UCS_LOG_FUNC_RC_STOP;
}

void btl_ucx_lib_log_begin(void)
{
    btl_ucx_log_first[0] = '\0';
    btl_ucx_log_capturing = true;
}

const char *btl_ucx_lib_log_end(void)
{
    btl_ucx_log_capturing = false;
    return btl_ucx_log_first[0] ? btl_ucx_log_first : NULL;
}

int btl_ucx_lib_open(const char *name, bool loud, const btl_ucx_lib_t **lib_out)
{
    btl_ucx_lib_t lib = {NULL};
    /* Casts through void **: POSIX requires dlsym's result to be usable this way. */
    const struct {
        const char *symbol; /* UCX's name */
        void **slot;        /* where it goes in lib */
    } symbols[] = {
        {"ucp_get_version", (void **)&lib.get_version},
        {"ucp_config_read", (void **)&lib.config_read},
        {"ucp_config_modify", (void **)&lib.config_modify},
        {"ucp_config_release", (void **)&lib.config_release},
        {"ucp_init_version", (void **)&lib.init_version},
        {"ucp_cleanup", (void **)&lib.cleanup},
        {"ucp_worker_create", (void **)&lib.worker_create},
        {"ucp_worker_destroy", (void **)&lib.worker_destroy},
        {"ucp_worker_get_address", (void **)&lib.worker_get_address},
        {"ucp_worker_release_address", (void **)&lib.worker_release_address},
        {"ucp_worker_progress", (void **)&lib.worker_progress},
        {"ucp_worker_set_am_recv_handler", (void **)&lib.worker_set_am_recv_handler},
        {"ucp_worker_flush_nbx", (void **)&lib.worker_flush_nbx},
        {"ucp_ep_create", (void **)&lib.ep_create},
        {"ucp_ep_close_nbx", (void **)&lib.ep_close_nbx},
        {"ucp_am_send_nbx", (void **)&lib.am_send_nbx},
        {"ucp_am_recv_data_nbx", (void **)&lib.am_recv_data_nbx},
        {"ucp_am_data_release", (void **)&lib.am_data_release},
        {"ucp_request_check_status", (void **)&lib.request_check_status},
        {"ucp_request_free", (void **)&lib.request_free},
        {"ucs_status_string", (void **)&lib.status_string},
        {"ucs_log_push_handler", (void **)&lib.log_push_handler},
    };
    unsigned major, minor, release;

    if (btl_ucx_lib.handle) {
        *lib_out = &btl_ucx_lib;
        return CRMPI_OK;
    }
    /* libucs's constructor installs backtrace handlers for the crash signals unless
     * UCX_HANDLE_ERRORS says otherwise; they would stay for the life of the process (the
     * library is never unloaded). A value the user set is kept (both variables). */
    setenv("UCX_HANDLE_ERRORS", "none", 0);
    /* And a handler for SIGHUP, its "debug signal", unless that is 0: a rank would no longer
     * end on SIGHUP. */
    setenv("UCX_DEBUG_SIGNO", "0", 0);
    /* RTLD_LOCAL: UCX's symbols stay out of the application's namespace. */
    lib.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib.handle) {
        BTL_UCX_LIB_REPORT(loud,
                           "btl:ucx: cannot load UCX: %s; install it (Debian: libucx0) or point "
                           "btl_ucx_library at libucp, or leave ucx out of the btl list",
                           dlerror());
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
        *symbols[i].slot = dlsym(lib.handle, symbols[i].symbol);
        if (!*symbols[i].slot) {
            BTL_UCX_LIB_REPORT(loud,
                               "btl:ucx: %s has no %s: it is not UCX's libucp, or a broken one; "
                               "point btl_ucx_library at libucp",
                               name, symbols[i].symbol);
            /* Not libucp, so none of UCX's hooks: it can go. */
            dlclose(lib.handle);
            return CRMPI_ERR_NOT_SUPPORTED;
        }
    }
    lib.get_version(&major, &minor, &release);
    if (major < BTL_UCX_MIN_MAJOR || (major == BTL_UCX_MIN_MAJOR && minor < BTL_UCX_MIN_MINOR)) {
        BTL_UCX_LIB_REPORT(loud, "btl:ucx: %s is UCX %u.%u; crmpi needs %d.%d or later", name,
                           major, minor, BTL_UCX_MIN_MAJOR, BTL_UCX_MIN_MINOR);
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    lib.log_push_handler(btl_ucx_lib_log);
    crmpi_fw_verbose(&crmpi_btl_framework, 20, "ucx: loaded %s (UCX %u.%u.%u)", name, major, minor,
                     release);
    btl_ucx_lib = lib;
    *lib_out = &btl_ucx_lib;
    return CRMPI_OK;
}
