/*
 * btl_tcp_if.c: which interfaces the tcp BTL uses, what it publishes about them, and which
 * of a peer's addresses it connects to (btl_tcp.h).
 *
 * Loopback: by default it is used, because on a single node (or a laptop without a
 * network) the ranks must reach each other over tcp even when loopback is all there is.
 * Its addresses are published with a flag, and only ranks on the same node (by the job's
 * node map) connect to them; a rank on another node would reach itself instead.
 */
#include "config.h"

#include "btl_tcp.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crmpi_status.h"
#include "log.h"

/* Longest list of interface names quoted in one message. */
#define BTL_TCP_IF_NAMES_MAX 512
/* Longest entry of an include/exclude list. */
#define BTL_TCP_IF_ENTRY_MAX 64

/* One entry of btl_tcp_if_include / btl_tcp_if_exclude. */
typedef struct btl_tcp_if_rule {
    char name[BTL_TCP_IF_ENTRY_MAX]; /* an interface name, or the entry as written (CIDR) */
    bool is_subnet;                  /* "a.b.c.d/n": match addresses, not names */
    uint32_t net;                    /* subnet address, host byte order (is_subnet) */
    uint32_t mask;                   /* subnet mask, host byte order (is_subnet) */
    bool used;                       /* some interface matched it */
} btl_tcp_if_rule_t;

static uint32_t btl_tcp_if_prefix_mask(unsigned prefix_len)
{
    return prefix_len == 0 ? 0 : 0xffffffffu << (32 - prefix_len);
}

static uint8_t btl_tcp_if_mask_prefix(uint32_t mask_host)
{
    uint8_t len = 0;

    while (len < 32 && (mask_host & (0x80000000u >> len)))
        len++;
    return len;
}

/* Split a comma-separated list into rules. `param` names the list in messages. */
static int btl_tcp_if_rules_parse(const char *param, const char *text,
                                  btl_tcp_if_rule_t **rules_out, size_t *num_out)
{
    btl_tcp_if_rule_t *rules;
    size_t num = 0;
    size_t max = 1;
    const char *cursor = text;

    for (const char *c = text; *c; c++)
        max += *c == ',';
    rules = calloc(max, sizeof(rules[0]));
    if (!rules) {
        crmpi_log_error("btl:tcp: out of memory parsing %s", param);
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    while (*cursor) {
        size_t len = strcspn(cursor, ",");
        const char *entry = cursor;
        btl_tcp_if_rule_t *rule = &rules[num];
        const char *slash;

        cursor += len + (cursor[len] == ',');
        while (len && (*entry == ' ' || *entry == '\t'))
            entry++, len--;
        while (len && (entry[len - 1] == ' ' || entry[len - 1] == '\t'))
            len--;
        if (len == 0)
            continue; /* "eth0,,eth1" or a trailing comma: nothing to match */
        if (len >= sizeof(rule->name)) {
            crmpi_log_error("btl:tcp: %s: entry \"%.*s\" is too long to be an interface name "
                            "or a subnet",
                            param, (int)len, entry);
            free(rules);
            return CRMPI_ERR_BAD_PARAM;
        }
        memcpy(rule->name, entry, len);
        rule->name[len] = '\0';
        slash = strchr(rule->name, '/');
        if (slash) {
            char addr_text[BTL_TCP_IF_ENTRY_MAX];
            struct in_addr addr;
            char *end;
            long prefix;

            snprintf(addr_text, sizeof(addr_text), "%.*s", (int)(slash - rule->name), rule->name);
            prefix = strtol(slash + 1, &end, 10);
            if (inet_pton(AF_INET, addr_text, &addr) != 1 || end == slash + 1 || *end ||
                prefix < 0 || prefix > 32) {
                crmpi_log_error("btl:tcp: %s: \"%s\" is neither an interface name nor an IPv4 "
                                "subnet (a.b.c.d/n, n from 0 to 32)",
                                param, rule->name);
                free(rules);
                return CRMPI_ERR_BAD_PARAM;
            }
            rule->is_subnet = true;
            rule->mask = btl_tcp_if_prefix_mask((unsigned)prefix);
            rule->net = ntohl(addr.s_addr) & rule->mask;
        }
        num++;
    }
    *rules_out = rules;
    *num_out = num;
    return CRMPI_OK;
}

/* Does any rule match this interface address? Marks the rules that do. */
static bool btl_tcp_if_rules_match(btl_tcp_if_rule_t *rules, size_t num, const char *name,
                                   struct in_addr addr)
{
    bool match = false;

    for (size_t i = 0; i < num; i++) {
        bool hit = rules[i].is_subnet ? (ntohl(addr.s_addr) & rules[i].mask) == rules[i].net
                                      : strcmp(rules[i].name, name) == 0;
        if (hit) {
            rules[i].used = true;
            match = true;
        }
    }
    return match;
}

/* "lo, eth0" (every interface of any family, each once) or, with `up_ipv4`, "lo 127.0.0.1/8,
 * eth0 10.0.0.2/24": what the user can choose from, for messages. */
static void btl_tcp_if_describe(const struct ifaddrs *list, bool up_ipv4, char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (const struct ifaddrs *ifa = list; ifa && used < size; ifa = ifa->ifa_next) {
        char entry[IF_NAMESIZE + INET_ADDRSTRLEN + 8];
        bool seen = false;
        int len;

        if (up_ipv4) {
            char addr_text[INET_ADDRSTRLEN];
            uint32_t mask;

            if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET || !(ifa->ifa_flags & IFF_UP))
                continue;
            inet_ntop(AF_INET, &((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr, addr_text,
                      sizeof(addr_text));
            mask = ifa->ifa_netmask
                       ? ntohl(((const struct sockaddr_in *)ifa->ifa_netmask)->sin_addr.s_addr)
                       : 0xffffffffu;
            snprintf(entry, sizeof(entry), "%s %s/%u", ifa->ifa_name, addr_text,
                     btl_tcp_if_mask_prefix(mask));
        } else {
            /* getifaddrs lists a name once per address family: show it once. */
            for (const struct ifaddrs *prev = list; prev != ifa; prev = prev->ifa_next)
                seen |= strcmp(prev->ifa_name, ifa->ifa_name) == 0;
            if (seen)
                continue;
            snprintf(entry, sizeof(entry), "%s", ifa->ifa_name);
        }
        len = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", entry);
        if (len < 0)
            break;
        used += (size_t)len;
    }
    if (buf[0] == '\0')
        snprintf(buf, size, "none");
}

static bool btl_tcp_if_name_exists(const struct ifaddrs *list, const char *name)
{
    for (const struct ifaddrs *ifa = list; ifa; ifa = ifa->ifa_next) {
        if (strcmp(ifa->ifa_name, name) == 0)
            return true;
    }
    return false;
}

int btl_tcp_if_select(const char *include, const char *exclude, btl_tcp_if_t **ifs_out,
                      size_t *num_out)
{
    const bool has_include = include && include[0];
    const bool has_exclude = exclude && exclude[0];
    const char *param = has_include ? "btl_tcp_if_include" : "btl_tcp_if_exclude";
    btl_tcp_if_rule_t *rules = NULL;
    size_t num_rules = 0;
    struct ifaddrs *list;
    btl_tcp_if_t *ifs = NULL;
    size_t num = 0;
    size_t max = 0;
    char names[BTL_TCP_IF_NAMES_MAX];
    int rc;

    if (has_include && has_exclude) {
        crmpi_log_error("btl:tcp: btl_tcp_if_include (\"%s\") and btl_tcp_if_exclude (\"%s\") "
                        "are both set; set only one of them",
                        include, exclude);
        return CRMPI_ERR_BAD_PARAM;
    }
    if (has_include || has_exclude) {
        rc = btl_tcp_if_rules_parse(param, has_include ? include : exclude, &rules, &num_rules);
        if (rc != CRMPI_OK)
            return rc;
    }
    if (getifaddrs(&list) != 0) {
        crmpi_log_error("btl:tcp: cannot list the network interfaces: getifaddrs: %s",
                        strerror(errno));
        rc = CRMPI_ERR_IO;
        goto err_free_rules;
    }

    /* A name that does not exist is a typo the user must hear about at once (an interface
     * that exists but is down or has no IPv4 address merely matches nothing, below). */
    for (size_t i = 0; has_include && i < num_rules; i++) {
        if (rules[i].is_subnet || btl_tcp_if_name_exists(list, rules[i].name))
            continue;
        btl_tcp_if_describe(list, false, names, sizeof(names));
        crmpi_log_error("btl:tcp: btl_tcp_if_include names interface \"%s\", which does not "
                        "exist on this node (interfaces here: %s); name one of those, or a subnet "
                        "(a.b.c.d/n)",
                        rules[i].name, names);
        rc = CRMPI_ERR_BAD_PARAM;
        goto err_free_list;
    }

    for (const struct ifaddrs *ifa = list; ifa; ifa = ifa->ifa_next)
        max++;
    ifs = calloc(max ? max : 1, sizeof(ifs[0]));
    if (!ifs) {
        crmpi_log_error("btl:tcp: out of memory listing interfaces");
        rc = CRMPI_ERR_OUT_OF_RESOURCE;
        goto err_free_list;
    }
    for (const struct ifaddrs *ifa = list; ifa; ifa = ifa->ifa_next) {
        struct in_addr addr;
        uint32_t mask;
        bool match;

        if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET || !(ifa->ifa_flags & IFF_UP))
            continue;
        addr = ((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
        match = btl_tcp_if_rules_match(rules, num_rules, ifa->ifa_name, addr);
        if ((has_include && !match) || (has_exclude && match))
            continue;
        mask = ifa->ifa_netmask
                   ? ntohl(((const struct sockaddr_in *)ifa->ifa_netmask)->sin_addr.s_addr)
                   : 0xffffffffu;
        snprintf(ifs[num].name, sizeof(ifs[num].name), "%s", ifa->ifa_name);
        ifs[num].addr = addr;
        ifs[num].prefix_len = btl_tcp_if_mask_prefix(mask);
        ifs[num].loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
        num++;
    }
    for (size_t i = 0; has_exclude && i < num_rules; i++) {
        /* A typo in an exclusion must not stop a job, but it should not go unnoticed. */
        if (!rules[i].used)
            crmpi_fw_verbose(&crmpi_btl_framework, 10,
                             "tcp: btl_tcp_if_exclude entry \"%s\" matches no interface that "
                             "is up with an IPv4 address",
                             rules[i].name);
    }
    if (num == 0) {
        btl_tcp_if_describe(list, true, names, sizeof(names));
        if (has_include || has_exclude) {
            crmpi_log_error("btl:tcp: %s=\"%s\" leaves no interface that is up with an IPv4 "
                            "address (up IPv4 interfaces here: %s)",
                            param, has_include ? include : exclude, names);
            rc = CRMPI_ERR_BAD_PARAM;
        } else {
            crmpi_fw_verbose(&crmpi_btl_framework, 10,
                             "tcp: no network interface is up with an IPv4 address");
            rc = CRMPI_ERR_NOT_SUPPORTED;
        }
        goto err_free_ifs;
    }
    for (size_t i = 0; i < num; i++) {
        char addr_text[INET_ADDRSTRLEN];

        inet_ntop(AF_INET, &ifs[i].addr, addr_text, sizeof(addr_text));
        crmpi_fw_verbose(&crmpi_btl_framework, 20, "tcp: using %s %s/%u%s", ifs[i].name, addr_text,
                         ifs[i].prefix_len,
                         ifs[i].loopback ? " (loopback: same-node peers only)" : "");
    }
    freeifaddrs(list);
    free(rules);
    *ifs_out = ifs;
    *num_out = num;
    return CRMPI_OK;

err_free_ifs:
    free(ifs);
err_free_list:
    freeifaddrs(list);
err_free_rules:
    free(rules);
    return rc;
}

int btl_tcp_if_choose_peer(const btl_tcp_if_t *mine, size_t num_mine, const btl_tcp_if_t *theirs,
                           size_t num_theirs, bool same_node, struct in_addr *addr_out)
{
    const btl_tcp_if_t *first = NULL;

    /* On one node, loopback is the shortest path (any local address is routed through it
     * anyway) and is there even when the other interfaces are filtered differently. */
    for (size_t j = 0; same_node && j < num_theirs; j++) {
        if (!theirs[j].loopback)
            continue;
        for (size_t i = 0; i < num_mine; i++) {
            if (mine[i].loopback) {
                *addr_out = theirs[j].addr;
                return CRMPI_OK;
            }
        }
    }
    for (size_t j = 0; j < num_theirs; j++) {
        if (theirs[j].loopback)
            continue; /* another node's loopback would be our own */
        if (!first)
            first = &theirs[j];
        /* Same subnet as one of ours: reachable without a router, and most likely the
         * network the user meant when several are up. */
        for (size_t i = 0; i < num_mine; i++) {
            uint32_t mask = btl_tcp_if_prefix_mask(mine[i].prefix_len);

            if (!mine[i].loopback &&
                (ntohl(mine[i].addr.s_addr) & mask) == (ntohl(theirs[j].addr.s_addr) & mask)) {
                *addr_out = theirs[j].addr;
                return CRMPI_OK;
            }
        }
    }
    if (!first)
        return CRMPI_ERR_UNREACH;
    *addr_out = first->addr;
    return CRMPI_OK;
}

int btl_tcp_modex_pack(const btl_tcp_module_t *module, void **blob_out, size_t *len_out)
{
    const btl_tcp_if_t *ifs = module->ifs;
    size_t num_ifs = module->num_ifs;
    size_t len = sizeof(btl_tcp_modex_hdr_t) + num_ifs * sizeof(btl_tcp_modex_addr_t);
    btl_tcp_modex_hdr_t *hdr = calloc(1, len);
    btl_tcp_modex_addr_t *addrs;

    if (!hdr) {
        crmpi_log_error("btl:tcp: out of memory for the modex data");
        return CRMPI_ERR_OUT_OF_RESOURCE;
    }
    hdr->magic = BTL_TCP_MAGIC;
    hdr->version = BTL_TCP_VERSION;
    hdr->port = htons(module->listen_port);
    hdr->num_addrs = (uint32_t)num_ifs;
    memcpy(hdr->listen_nonce, module->listen_nonce, sizeof(hdr->listen_nonce));
    addrs = (btl_tcp_modex_addr_t *)(hdr + 1);
    for (size_t i = 0; i < num_ifs; i++) {
        addrs[i].addr = ifs[i].addr.s_addr;
        addrs[i].prefix_len = ifs[i].prefix_len;
        addrs[i].loopback = ifs[i].loopback;
    }
    *blob_out = hdr;
    *len_out = len;
    return CRMPI_OK;
}

int btl_tcp_modex_unpack(const void *blob, size_t len, btl_tcp_if_t **addrs_out, size_t *num_out,
                         uint16_t *port_out, uint8_t *listen_nonce_out)
{
    btl_tcp_modex_hdr_t hdr;
    btl_tcp_if_t *addrs;

    if (len < sizeof(hdr))
        return CRMPI_ERR_PROTO;
    memcpy(&hdr, blob, sizeof(hdr));
    if (hdr.magic != BTL_TCP_MAGIC || hdr.version != BTL_TCP_VERSION ||
        (len - sizeof(hdr)) / sizeof(btl_tcp_modex_addr_t) != hdr.num_addrs ||
        (len - sizeof(hdr)) % sizeof(btl_tcp_modex_addr_t) != 0)
        return CRMPI_ERR_PROTO;
    addrs = calloc(hdr.num_addrs ? hdr.num_addrs : 1, sizeof(addrs[0]));
    if (!addrs)
        return CRMPI_ERR_OUT_OF_RESOURCE;
    for (uint32_t i = 0; i < hdr.num_addrs; i++) {
        btl_tcp_modex_addr_t wire;

        /* The blob is a malloc'ed copy, but copying keeps this independent of its alignment. */
        memcpy(&wire, (const char *)blob + sizeof(hdr) + i * sizeof(wire), sizeof(wire));
        addrs[i].addr.s_addr = wire.addr;
        addrs[i].prefix_len = wire.prefix_len > 32 ? 32 : wire.prefix_len;
        addrs[i].loopback = wire.loopback != 0;
    }
    *addrs_out = addrs;
    *num_out = hdr.num_addrs;
    *port_out = ntohs(hdr.port);
    memcpy(listen_nonce_out, hdr.listen_nonce, sizeof(hdr.listen_nonce));
    return CRMPI_OK;
}
