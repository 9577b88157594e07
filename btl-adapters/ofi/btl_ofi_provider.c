/*
 * btl_ofi_provider.c: which libfabric provider, fabric and domain the module uses, and
 * which addresses reach only their node (btl_ofi.h, "Provider" and "Reachability").
 */
#include "config.h"

#include "btl_ofi.h"

#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rdma/fi_errno.h>

#include "crmpi_status.h"
#include "log.h"

/* The automatic choice, best first: both reach every node over IP and keep send order. */
static const char *const btl_ofi_auto_providers[] = {"tcp;ofi_rxm", "sockets", NULL};

/* Room for a list of provider or domain names in a message. */
#define BTL_OFI_NAMES_MAX 512

/* What the query asks libfabric for. The domain is not among it: libfabric 1.17 ignores a
 * domain name in the hints of tcp;ofi_rxm and sockets, so entries are picked by domain
 * here (btl_ofi_provider_find). */
typedef struct btl_ofi_query {
    const char *provider; /* a provider's name, or NULL for all of them */
    bool ordered;         /* FI_ORDER_SAS on send and receive */
    bool tagged;          /* FI_TAGGED as well (btl_ofi_recv_place) */
} btl_ofi_query_t;

/* What the BTL asks of a provider. */
static struct fi_info *btl_ofi_provider_hints(const btl_ofi_lib_t *lib,
                                              const btl_ofi_query_t *query)
{
    struct fi_info *hints = lib->dupinfo(NULL);

    if (!hints)
        return NULL;
    hints->caps = FI_MSG | (query->tagged ? FI_TAGGED : 0);
    hints->ep_attr->type = FI_EP_RDM;
    /* Every operation's context is a btl_ofi_buf_t whose first field is a fi_context2. */
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    /* Both pools are allocated and registered at init, so local registration is fine. */
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
    /* Every slot is called with the library lock held (btl.h). */
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    /* The module's progress slot drives the provider. */
    hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    if (query->ordered) {
        hints->tx_attr->msg_order = FI_ORDER_SAS;
        hints->rx_attr->msg_order = FI_ORDER_SAS;
    }
    /* freeinfo frees the names with the hints. */
    if (query->provider && !(hints->fabric_attr->prov_name = strdup(query->provider))) {
        lib->freeinfo(hints);
        return NULL;
    }
    return hints;
}

/*
 * fi_getinfo with our hints. @return CRMPI_OK with *list_out (NULL when nothing matched);
 * other errors logged.
 */
static int btl_ofi_provider_query(const btl_ofi_lib_t *lib, const btl_ofi_query_t *query,
                                  uint32_t my_rank, struct fi_info **list_out)
{
    struct fi_info *hints = btl_ofi_provider_hints(lib, query);
    int rc;

    if (!hints) {
        crmpi_log_error("btl:ofi: rank %u: out of memory for fi_getinfo's hints", my_rank);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    *list_out = NULL;
    rc = lib->getinfo(BTL_OFI_FI_VERSION, NULL, NULL, 0, hints, list_out);
    lib->freeinfo(hints);
    if (rc == -FI_ENODATA)
        return CRMPI_OK;
    if (rc != 0) {
        crmpi_log_error("btl:ofi: rank %u: fi_getinfo: %s (%d)", my_rank, lib->strerror(-rc), rc);
        return CRMPI_ERR_IO;
    }
    return CRMPI_OK;
}

/* The first entry of `list` from provider `prov_name` (exactly; NULL: any) in domain
 * `domain` (NULL or "": any), or NULL. */
static const struct fi_info *btl_ofi_provider_find(const struct fi_info *list,
                                                   const char *prov_name, const char *domain)
{
    for (; list; list = list->next) {
        if ((!prov_name || strcmp(list->fabric_attr->prov_name, prov_name) == 0) &&
            (!domain || !domain[0] || strcmp(list->domain_attr->name, domain) == 0))
            return list;
    }
    return NULL;
}

/* "tcp;ofi_rxm, sockets, shm": each provider of `list` once, in libfabric's order. */
static void btl_ofi_provider_names(const struct fi_info *list, char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (const struct fi_info *info = list; info; info = info->next) {
        const char *name = info->fabric_attr->prov_name;
        int len;

        if (btl_ofi_provider_find(list, name, NULL) != info)
            continue; /* listed at its first entry */
        len = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
        if (len < 0 || (size_t)len >= size - used)
            break;
        used += (size_t)len;
    }
    if (used == 0)
        snprintf(buf, size, "none");
}

/*
 * At btl_base_verbose 10: why each provider libfabric offers (an RDM endpoint with
 * FI_MSG) is not the automatic choice. `ordered` is the list that keeps send order.
 */
static void btl_ofi_provider_explain(const btl_ofi_lib_t *lib, const btl_ofi_settings_t *settings,
                                     const struct fi_info *ordered, const char *chosen,
                                     uint32_t my_rank)
{
    const btl_ofi_query_t query = {0};
    struct fi_info *all;

    if (crmpi_btl_framework.verbose < 10 ||
        btl_ofi_provider_query(lib, &query, my_rank, &all) != CRMPI_OK)
        return;
    for (const struct fi_info *info = all; info; info = info->next) {
        const char *name = info->fabric_attr->prov_name;
        bool automatic = false;

        if (btl_ofi_provider_find(all, name, NULL) != info || (chosen && strcmp(name, chosen) == 0))
            continue;
        for (const char *const *a = btl_ofi_auto_providers; *a; a++)
            automatic |= strcmp(*a, name) == 0;
        if (!btl_ofi_provider_find(ordered, name, NULL))
            crmpi_fw_verbose(&crmpi_btl_framework, 10,
                             "ofi: provider %s not usable: it cannot keep the order of sends "
                             "to a peer (no FI_ORDER_SAS), which the BTL must keep",
                             name);
        else if (!btl_ofi_provider_find(ordered, name, settings->domain))
            crmpi_fw_verbose(&crmpi_btl_framework, 10, "ofi: provider %s not usable: no domain %s",
                             name, settings->domain);
        else if (!automatic)
            crmpi_fw_verbose(&crmpi_btl_framework, 10,
                             "ofi: provider %s not chosen automatically; btl_ofi_provider=%s "
                             "would use it",
                             name, name);
        else
            crmpi_fw_verbose(&crmpi_btl_framework, 10,
                             "ofi: provider %s usable, but %s comes first", name, chosen);
    }
    lib->freeinfo(all);
}

/* Say which domains `provider` offers, as btl_ofi_domain names none of them. */
static void btl_ofi_provider_domain_error(const struct fi_info *list,
                                          const btl_ofi_settings_t *settings, const char *provider,
                                          uint32_t my_rank)
{
    char names[BTL_OFI_NAMES_MAX];
    size_t used = 0;

    names[0] = '\0';
    for (const struct fi_info *info = list; info; info = info->next) {
        const char *domain = info->domain_attr->name;
        int len;

        if (strcmp(info->fabric_attr->prov_name, provider) != 0 ||
            btl_ofi_provider_find(list, provider, domain) != info)
            continue; /* another provider, or a domain already listed */
        len = snprintf(names + used, sizeof(names) - used, "%s%s", used ? ", " : "", domain);
        if (len < 0 || (size_t)len >= sizeof(names) - used)
            break;
        used += (size_t)len;
    }
    crmpi_log_error("btl:ofi: rank %u: btl_ofi_domain=%s: provider %s has no such domain here "
                    "(its domains: %s); name one of those, or leave btl_ofi_domain empty",
                    my_rank, settings->domain, provider, used ? names : "none");
}

/* Copy `chosen` for the module. */
static int btl_ofi_provider_take(const btl_ofi_lib_t *lib, const struct fi_info *chosen,
                                 uint32_t my_rank, struct fi_info **info_out)
{
    *info_out = lib->dupinfo(chosen);
    if (!*info_out) {
        crmpi_log_error("btl:ofi: rank %u: out of memory copying the provider's description",
                        my_rank);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    return CRMPI_OK;
}

/* btl_ofi_provider is empty: the first of btl_ofi_auto_providers that keeps send order
 * (and offers btl_ofi_domain, when it names one). */
static int btl_ofi_provider_choose_auto(const btl_ofi_lib_t *lib,
                                        const btl_ofi_settings_t *settings, uint32_t my_rank,
                                        struct fi_info **info_out)
{
    const struct fi_info *chosen = NULL;
    const char *const *name;
    struct fi_info *ordered;
    char names[BTL_OFI_NAMES_MAX];
    int rc;

    rc = btl_ofi_provider_query(lib,
                                &(btl_ofi_query_t){.ordered = true, .tagged = settings->recv_place},
                                my_rank, &ordered);
    if (rc != CRMPI_OK)
        return rc;
    for (name = btl_ofi_auto_providers; *name && !chosen; name++)
        chosen = btl_ofi_provider_find(ordered, *name, settings->domain);
    btl_ofi_provider_explain(lib, settings, ordered, chosen ? chosen->fabric_attr->prov_name : NULL,
                             my_rank);
    if (chosen) {
        rc = btl_ofi_provider_take(lib, chosen, my_rank, info_out);
        lib->freeinfo(ordered);
        return rc;
    }
    /* A domain the user named that the first available automatic provider lacks is an
     * error of its own. */
    for (name = btl_ofi_auto_providers; *name; name++) {
        if (settings->domain[0] && btl_ofi_provider_find(ordered, *name, NULL)) {
            btl_ofi_provider_domain_error(ordered, settings, *name, my_rank);
            lib->freeinfo(ordered);
            return CRMPI_ERR_BAD_PARAM;
        }
    }
    btl_ofi_provider_names(ordered, names, sizeof(names));
    lib->freeinfo(ordered);
    if (settings->required)
        crmpi_log_error("btl:ofi: rank %u: none of the providers chosen automatically "
                        "(tcp;ofi_rxm, sockets) offers an RDM endpoint that keeps send "
                        "order here (usable providers: %s); name one in btl_ofi_provider",
                        my_rank, names);
    else
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "ofi: neither tcp;ofi_rxm nor sockets is usable here (usable "
                         "providers: %s)",
                         names);
    return CRMPI_ERR_NOT_SUPPORTED;
}

/* btl_ofi_provider names a provider: that one or an error. */
static int btl_ofi_provider_choose_named(const btl_ofi_lib_t *lib,
                                         const btl_ofi_settings_t *settings, uint32_t my_rank,
                                         struct fi_info **info_out)
{
    btl_ofi_query_t query = {
        .provider = settings->provider, .ordered = true, .tagged = settings->recv_place};
    const struct fi_info *chosen;
    struct fi_info *list;
    char names[BTL_OFI_NAMES_MAX];
    int rc;

    rc = btl_ofi_provider_query(lib, &query, my_rank, &list);
    if (rc != CRMPI_OK)
        return rc;
    if (list) {
        /* libfabric may complete the name ("tcp" gives "tcp;ofi_rxm"): its entries. */
        chosen = btl_ofi_provider_find(list, NULL, settings->domain);
        if (chosen)
            rc = btl_ofi_provider_take(lib, chosen, my_rank, info_out);
        else
            btl_ofi_provider_domain_error(list, settings, list->fabric_attr->prov_name, my_rank);
        lib->freeinfo(list);
        return chosen ? rc : CRMPI_ERR_BAD_PARAM;
    }
    /* Why not: no send order, or no such provider here. */
    query.ordered = false;
    rc = btl_ofi_provider_query(lib, &query, my_rank, &list);
    if (rc != CRMPI_OK)
        return rc;
    if (list) {
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "ofi: provider %s not usable: it cannot keep the order of sends to a "
                         "peer (no FI_ORDER_SAS)",
                         list->fabric_attr->prov_name);
        crmpi_log_error("btl:ofi: rank %u: btl_ofi_provider=%s cannot be used: it does not "
                        "keep the order of sends to a peer (FI_ORDER_SAS), which the BTL "
                        "guarantees; choose another provider",
                        my_rank, settings->provider);
        lib->freeinfo(list);
        return CRMPI_ERR_BAD_PARAM;
    }
    rc = btl_ofi_provider_query(lib, &(btl_ofi_query_t){.ordered = true}, my_rank, &list);
    if (rc != CRMPI_OK)
        return rc;
    btl_ofi_provider_names(list, names, sizeof(names));
    lib->freeinfo(list);
    crmpi_log_error("btl:ofi: rank %u: btl_ofi_provider=%s: libfabric has no such provider with "
                    "an RDM endpoint here (usable providers: %s); name one of those, or leave "
                    "btl_ofi_provider empty for the automatic choice",
                    my_rank, settings->provider, names);
    return CRMPI_ERR_BAD_PARAM;
}

int btl_ofi_provider_choose(const btl_ofi_lib_t *lib, const btl_ofi_settings_t *settings,
                            uint32_t my_rank, struct fi_info **info_out)
{
    int rc;

    if (settings->provider[0])
        rc = btl_ofi_provider_choose_named(lib, settings, my_rank, info_out);
    else
        rc = btl_ofi_provider_choose_auto(lib, settings, my_rank, info_out);
    if (rc == CRMPI_OK)
        crmpi_fw_verbose(&crmpi_btl_framework, 10,
                         "ofi: rank %u uses provider %s, fabric %s, domain %s", my_rank,
                         (*info_out)->fabric_attr->prov_name, (*info_out)->fabric_attr->name,
                         (*info_out)->domain_attr->name);
    return rc;
}

bool btl_ofi_provider_node_local(const struct fi_info *info, const void *addr, size_t addr_len)
{
    sa_family_t family;

    /* Shared memory reaches the processes of its node only. */
    if (strcmp(info->fabric_attr->prov_name, "shm") == 0)
        return true;
    switch (info->addr_format) {
    case FI_SOCKADDR:
    case FI_SOCKADDR_IN:
    case FI_SOCKADDR_IN6: break;
    default: return false; /* a fabric's own addressing: no loopback to speak of */
    }
    if (addr_len < sizeof(struct sockaddr))
        return false;
    /* By copies: the name is bytes from the modex, with no alignment. */
    memcpy(&family, (const char *)addr + offsetof(struct sockaddr, sa_family), sizeof(family));
    if (addr_len >= sizeof(struct sockaddr_in) && family == AF_INET) {
        struct sockaddr_in sin;

        memcpy(&sin, addr, sizeof(sin));
        return (ntohl(sin.sin_addr.s_addr) >> 24) == 127;
    }
    if (addr_len >= sizeof(struct sockaddr_in6) && family == AF_INET6) {
        struct sockaddr_in6 sin6;

        memcpy(&sin6, addr, sizeof(sin6));
        return IN6_IS_ADDR_LOOPBACK(&sin6.sin6_addr);
    }
    return false;
}
