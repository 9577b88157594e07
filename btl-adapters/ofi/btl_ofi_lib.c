/*
 * btl_ofi_lib.c: libfabric loaded at run time (btl_ofi.h, "The library").
 *
 * libfabric exports only its entry points (fi_getinfo, fi_fabric, fi_freeinfo, ...); every
 * other call of its API (fi_domain, fi_send, fi_cq_read, fi_close, ...) is a static inline
 * function of its headers that calls through the ops table of the object it is given. So
 * looking up these few symbols is all it takes to use the whole API without linking it.
 */
#include "config.h"

#include "btl_ofi.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"

/* A failure to load: an error when the user asked for ofi, else a verbose line. */
#define BTL_OFI_LIB_REPORT(loud, ...)                                                              \
    do {                                                                                           \
        if (loud)                                                                                  \
            crmpi_log_error(__VA_ARGS__);                                                          \
        else                                                                                       \
            crmpi_fw_verbose(&crmpi_btl_framework, 10, __VA_ARGS__);                               \
    } while (0)

int btl_ofi_lib_open(const char *name, bool loud, btl_ofi_lib_t *lib_out)
{
    btl_ofi_lib_t lib = {NULL};
    /* Casts through void **: ISO C has no conversion from object to function pointers, and
     * POSIX requires dlsym's result to be usable this way (dlsym(3)). */
    const struct {
        const char *symbol; /* libfabric's name */
        void **slot;        /* where it goes in lib */
    } symbols[] = {
        {"fi_getinfo", (void **)&lib.getinfo},   {"fi_freeinfo", (void **)&lib.freeinfo},
        {"fi_dupinfo", (void **)&lib.dupinfo},   {"fi_fabric", (void **)&lib.fabric},
        {"fi_strerror", (void **)&lib.strerror}, {"fi_version", (void **)&lib.version},
    };
    uint32_t version;

    /* libfabric pulls in libinfinipath (for its psm provider), whose constructor installs
     * handlers for SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGILL and SIGABRT to print a backtrace
     * unless IPATH_NO_BACKTRACE is set: a rank would then survive mpirun's SIGTERM, crash
     * signals would no longer reach the application's handlers, and the library's
     * destructor would reset the application's handlers at finalize. A value the user set
     * is kept. */
    setenv("IPATH_NO_BACKTRACE", "1", 0);
    /* RTLD_LOCAL: libfabric's symbols stay out of the application's namespace, and nothing
     * else can bind to them, so dlclose really unloads it. */
    lib.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib.handle) {
        BTL_OFI_LIB_REPORT(loud,
                           "btl:ofi: cannot load libfabric: %s; install it (Debian: libfabric1) "
                           "or point btl_ofi_library at it, or leave ofi out of the btl list",
                           dlerror());
        return CRMPI_ERR_NOT_SUPPORTED;
    }
    for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
        *symbols[i].slot = dlsym(lib.handle, symbols[i].symbol);
        if (!*symbols[i].slot) {
            BTL_OFI_LIB_REPORT(loud,
                               "btl:ofi: %s has no %s: it is not libfabric, or a broken one; "
                               "point btl_ofi_library at libfabric",
                               name, symbols[i].symbol);
            goto err_close;
        }
    }
    version = lib.version();
    if (FI_VERSION_LT(version, BTL_OFI_FI_VERSION)) {
        BTL_OFI_LIB_REPORT(loud, "btl:ofi: %s is libfabric %u.%u; crmpi needs %u.%u or later", name,
                           FI_MAJOR(version), FI_MINOR(version), FI_MAJOR(BTL_OFI_FI_VERSION),
                           FI_MINOR(BTL_OFI_FI_VERSION));
        goto err_close;
    }
    crmpi_fw_verbose(&crmpi_btl_framework, 20, "ofi: loaded %s (libfabric %u.%u)", name,
                     FI_MAJOR(version), FI_MINOR(version));
    *lib_out = lib;
    return CRMPI_OK;

err_close:
    dlclose(lib.handle);
    return CRMPI_ERR_NOT_SUPPORTED;
}

void btl_ofi_lib_close(btl_ofi_lib_t *lib)
{
    if (lib->handle)
        dlclose(lib->handle);
    memset(lib, 0, sizeof(*lib));
}
