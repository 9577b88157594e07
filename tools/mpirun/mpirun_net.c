/*
 * mpirun_net.c: how agents on other nodes reach mpirun (mpirun.h, plm.h): a TCP listener on
 * the one interface the job uses, and the job's key that each agent's hello must carry.
 *
 * The interface: plm_base_if_include when set (a name or a subnet), else the one whose
 * route leads to the job's first node that is not this one (the kernel's choice of a
 * source address for it), else loopback when every node of the job is this one. Listening
 * there alone keeps the job's control port off every other network of the head node.
 *
 * The key: 32 bytes of the kernel's randomness, in hex, given to the agents in their
 * environment only (CRMPI_JOB_KEY: not on a command line, which every user of a node can
 * read, and in no file); compared in constant time, so that the time mpirun takes to
 * refuse a guess says nothing of how much of it was right.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "crmpi_status.h"
#include "log.h"
#include "mpirun.h"
#include "param.h"
#include "random.h"

int mpirun_key_create(mpirun_state_t *st)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char bytes[MPIRUN_KEY_HEX / 2];

    if (crmpi_random_bytes(bytes, sizeof(bytes)) != CRMPI_OK) {
        crmpi_log_error("cannot make the job's key: getrandom: %s", strerror(errno));
        return CRMPI_ERR_IO;
    }
    for (size_t i = 0; i < sizeof(bytes); i++) {
        st->job_key[2 * i] = hex[bytes[i] >> 4];
        st->job_key[2 * i + 1] = hex[bytes[i] & 0xf];
    }
    st->job_key[MPIRUN_KEY_HEX] = '\0';
    return CRMPI_OK;
}

bool mpirun_key_matches(const mpirun_state_t *st, const char *key)
{
    size_t len = strnlen(key, MPIRUN_KEY_HEX + 1);
    volatile unsigned diff = len != MPIRUN_KEY_HEX;

    /* Every byte is compared whatever the others are; only the length (not secret) is
     * looked at before. */
    for (size_t i = 0; i < MPIRUN_KEY_HEX; i++)
        diff |= (unsigned char)st->job_key[i] ^ (unsigned char)(i < len ? key[i] : 0);
    return diff == 0;
}

/* "a.b.c.d/n" into a network and mask (host byte order). @return 1 when it is one. */
static int mpirun_net_subnet(const char *text, uint32_t *net_out, uint32_t *mask_out)
{
    char addr[64];
    const char *slash = strchr(text, '/');
    struct in_addr in;
    char *end;
    long bits;

    if (!slash || (size_t)(slash - text) >= sizeof(addr))
        return 0;
    memcpy(addr, text, (size_t)(slash - text));
    addr[slash - text] = '\0';
    bits = strtol(slash + 1, &end, 10);
    if (*end || bits < 0 || bits > 32 || inet_pton(AF_INET, addr, &in) != 1)
        return 0;
    *mask_out = bits == 0 ? 0 : 0xffffffffu << (32 - bits);
    *net_out = ntohl(in.s_addr) & *mask_out;
    return 1;
}

/* The first IPv4 address of an interface that is up and matches `want` (a name or a
 * subnet). */
static int mpirun_net_if_address(const char *want, struct sockaddr_storage *addr_out,
                                 socklen_t *len_out)
{
    struct ifaddrs *list, *ifa;
    uint32_t net = 0, mask = 0;
    int is_subnet = mpirun_net_subnet(want, &net, &mask);
    int rc = CRMPI_ERR_NOT_FOUND;

    if (getifaddrs(&list) < 0) {
        crmpi_log_error("plm_base_if_include: cannot list this node's interfaces: %s",
                        strerror(errno));
        return CRMPI_ERR_IO;
    }
    for (ifa = list; ifa && rc != CRMPI_OK; ifa = ifa->ifa_next) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ifa->ifa_addr;

        if (!in || in->sin_family != AF_INET || !(ifa->ifa_flags & IFF_UP))
            continue;
        if (is_subnet ? (ntohl(in->sin_addr.s_addr) & mask) != net
                      : strcmp(ifa->ifa_name, want) != 0)
            continue;
        memcpy(addr_out, in, sizeof(*in));
        *len_out = sizeof(*in);
        rc = CRMPI_OK;
    }
    freeifaddrs(list);
    if (rc != CRMPI_OK)
        crmpi_log_error("plm_base_if_include %s: no interface of this node that is up has an "
                        "IPv4 address %s it",
                        want, is_subnet ? "in" : "named");
    return rc;
}

/* The source address the kernel would use toward `host` (no packet is sent: a UDP
 * socket's connect only picks the route). */
static int mpirun_net_route_to(const char *host, struct sockaddr_storage *addr_out,
                               socklen_t *len_out)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *found = NULL;
    int fd, rc = getaddrinfo(host, "9", &hints, &found);

    if (rc != 0) {
        crmpi_log_error("host '%s' cannot be resolved: %s; nothing was started", host,
                        gai_strerror(rc));
        return CRMPI_ERR_NOT_FOUND;
    }
    *len_out = sizeof(*addr_out);
    fd = socket(found->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, found->ai_addr, found->ai_addrlen) < 0 ||
        getsockname(fd, (struct sockaddr *)addr_out, len_out) < 0) {
        crmpi_log_error("host '%s' cannot be reached from this node: %s; nothing was started", host,
                        strerror(errno));
        rc = CRMPI_ERR_UNREACH;
    }
    if (fd >= 0)
        close(fd);
    freeaddrinfo(found);
    return rc == 0 ? CRMPI_OK : rc;
}

/* Where to listen: see the top of this file. Every other node must resolve, so that a
 * misspelt host is said here, before anything starts. */
static int mpirun_net_choose(const mpirun_state_t *st, struct sockaddr_storage *addr_out,
                             socklen_t *len_out)
{
    const char *want = NULL;
    const char *first_remote = NULL;
    char hostname[256];

    if (gethostname(hostname, sizeof(hostname)) < 0)
        snprintf(hostname, sizeof(hostname), "localhost");
    for (uint32_t node = 0; node < st->map.num_nodes; node++) {
        struct sockaddr_storage ignored;
        socklen_t ignored_len;
        int rc;

        if (mpirun_map_host_is_local(st->map.nodes[node], hostname))
            continue;
        rc = mpirun_net_route_to(st->map.nodes[node], &ignored, &ignored_len);
        if (rc != CRMPI_OK)
            return rc;
        if (!first_remote)
            first_remote = st->map.nodes[node];
    }
    if (crmpi_param_get_string("plm_base_if_include", &want) == CRMPI_OK && want && *want)
        return mpirun_net_if_address(want, addr_out, len_out);
    if (first_remote)
        return mpirun_net_route_to(first_remote, addr_out, len_out);
    struct sockaddr_in *loopback = (struct sockaddr_in *)addr_out;
    memset(loopback, 0, sizeof(*loopback));
    loopback->sin_family = AF_INET;
    loopback->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    *len_out = sizeof(*loopback);
    return CRMPI_OK;
}

int mpirun_listen_tcp(mpirun_state_t *st)
{
    struct sockaddr_storage addr;
    socklen_t len;
    char text[INET6_ADDRSTRLEN];
    int fd, one = 1, rc;

    rc = mpirun_net_choose(st, &addr, &len);
    if (rc != CRMPI_OK)
        return rc;
    /* Port 0: the kernel picks a free one, which the agents learn from hnp_uri. */
    if (addr.ss_family == AF_INET)
        ((struct sockaddr_in *)&addr)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)&addr)->sin6_port = 0;
    fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, len) < 0 || listen(fd, 128) < 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) < 0) {
        crmpi_log_error("cannot listen for the agents on TCP: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return CRMPI_ERR_IO;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (addr.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&addr;

        inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
        snprintf(st->hnp_uri, sizeof(st->hnp_uri), "tcp:%s:%u", text, ntohs(in->sin_port));
    } else {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&addr;

        inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
        snprintf(st->hnp_uri, sizeof(st->hnp_uri), "tcp:[%s]:%u", text, ntohs(in6->sin6_port));
    }
    st->tcp_fd = fd;
    return CRMPI_OK;
}
