#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include "CConnectivity.h"

_Static_assert(CSYSTEM_NETLINK_GROUP_LINK == RTMGRP_LINK, "RTMGRP_LINK");
_Static_assert(CSYSTEM_NETLINK_GROUP_IPV4_ROUTE == RTMGRP_IPV4_ROUTE, "RTMGRP_IPV4_ROUTE");
_Static_assert(CSYSTEM_NETLINK_GROUP_IPV6_ROUTE == RTMGRP_IPV6_ROUTE, "RTMGRP_IPV6_ROUTE");

int csystem_netlink_open(uint32_t groups, int receive_buffer_bytes) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    if (receive_buffer_bytes > 0) {
        /* FORCE lifts the rmem_max cap when we have CAP_NET_ADMIN; otherwise take what we may. */
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &receive_buffer_bytes, sizeof(int)) != 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer_bytes, sizeof(int));
    }
    struct sockaddr_nl local;
    memset(&local, 0, sizeof(local));
    local.nl_family = AF_NETLINK;
    local.nl_groups = groups;
    if (bind(fd, (struct sockaddr *)&local, sizeof(local)) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int csystem_netlink_request_dump(int fd, int what, uint8_t family, uint32_t sequence) {
    struct {
        struct nlmsghdr header;
        union {
            struct ifinfomsg link;
            struct rtmsg route;
        } body;
    } request;
    memset(&request, 0, sizeof(request));
    request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    request.header.nlmsg_seq = sequence;
    switch (what) {
    case CSYSTEM_NETLINK_DUMP_LINKS:
        request.header.nlmsg_type = RTM_GETLINK;
        request.header.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
        request.body.link.ifi_family = AF_UNSPEC;
        break;
    case CSYSTEM_NETLINK_DUMP_ROUTES:
        request.header.nlmsg_type = RTM_GETROUTE;
        request.header.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
        request.body.route.rtm_family = family;
        break;
    default:
        errno = EINVAL;
        return -1;
    }
    struct sockaddr_nl kernel;
    memset(&kernel, 0, sizeof(kernel));
    kernel.nl_family = AF_NETLINK;
    ssize_t sent;
    do {
        sent = sendto(fd, &request, request.header.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
    } while (sent < 0 && errno == EINTR);
    return sent < 0 ? -1 : 0;
}

static void parse_link(const struct nlmsghdr *header, struct csystem_netlink_link *out) {
    if (header->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg))) return;
    const struct ifinfomsg *info = NLMSG_DATA(header);
    out->index = info->ifi_index;
    out->is_up = (info->ifi_flags & IFF_UP) != 0;
    out->is_running = (info->ifi_flags & IFF_RUNNING) != 0;
    out->is_lower_up = (info->ifi_flags & IFF_LOWER_UP) != 0;
    out->is_loopback = (info->ifi_flags & IFF_LOOPBACK) != 0;
    int length = (int)IFLA_PAYLOAD(header);
    for (const struct rtattr *a = IFLA_RTA(info); RTA_OK(a, length); a = RTA_NEXT(a, length)) {
        if (a->rta_type == IFLA_IFNAME) {
            size_t n = RTA_PAYLOAD(a);
            if (n > sizeof(out->name) - 1) n = sizeof(out->name) - 1;
            memcpy(out->name, RTA_DATA(a), n);
            out->name[n] = 0;
        }
    }
}

static void format_gateway(int family, const struct rtattr *a, char *out, size_t size) {
    size_t need = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
    if (need == 0 || RTA_PAYLOAD(a) < need) return;
    if (inet_ntop(family, RTA_DATA(a), out, (socklen_t)size) == NULL) out[0] = 0;
}

/* A multipath route has no RTA_OIF: its hops are a list of struct rtnexthop. The first
 * hop stands for the route; that is enough to say which interface traffic leaves by. */
static void parse_first_hop(int family, const struct rtattr *multipath, struct csystem_netlink_route *out) {
    const struct rtnexthop *hop = RTA_DATA(multipath);
    size_t length = RTA_PAYLOAD(multipath);
    if (length < sizeof(struct rtnexthop) || hop->rtnh_len < sizeof(struct rtnexthop) || hop->rtnh_len > length) return;
    if (out->output_index == 0) out->output_index = hop->rtnh_ifindex;
    int attributes = hop->rtnh_len - (int)RTNH_LENGTH(0);
    for (const struct rtattr *a = RTNH_DATA(hop); RTA_OK(a, attributes); a = RTA_NEXT(a, attributes)) {
        if (a->rta_type == RTA_GATEWAY && out->gateway[0] == 0)
            format_gateway(family, a, out->gateway, sizeof(out->gateway));
    }
}

static void parse_route(const struct nlmsghdr *header, struct csystem_netlink_route *out) {
    if (header->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg))) return;
    const struct rtmsg *route = NLMSG_DATA(header);
    out->family = route->rtm_family;
    out->destination_length = route->rtm_dst_len;
    out->is_unicast = route->rtm_type == RTN_UNICAST;
    uint32_t table = route->rtm_table;
    const struct rtattr *multipath = NULL;
    int length = (int)RTM_PAYLOAD(header);
    for (const struct rtattr *a = RTM_RTA(route); RTA_OK(a, length); a = RTA_NEXT(a, length)) {
        switch (a->rta_type) {
        case RTA_TABLE:
            if (RTA_PAYLOAD(a) >= sizeof(uint32_t)) memcpy(&table, RTA_DATA(a), sizeof(uint32_t));
            break;
        case RTA_OIF:
            if (RTA_PAYLOAD(a) >= sizeof(int32_t)) memcpy(&out->output_index, RTA_DATA(a), sizeof(int32_t));
            break;
        case RTA_PRIORITY:
            if (RTA_PAYLOAD(a) >= sizeof(uint32_t)) memcpy(&out->metric, RTA_DATA(a), sizeof(uint32_t));
            break;
        case RTA_GATEWAY:
            format_gateway(route->rtm_family, a, out->gateway, sizeof(out->gateway));
            break;
        case RTA_MULTIPATH:
            multipath = a;
            break;
        }
    }
    if (multipath != NULL) parse_first_hop(route->rtm_family, multipath, out);
    out->is_main_table = table == RT_TABLE_MAIN;
}

int csystem_netlink_next(const void *buffer, size_t length, size_t *offset,
                         struct csystem_netlink_message *out) {
    memset(out, 0, sizeof(*out));
    if (*offset >= length) return 0;
    size_t remaining = length - *offset;
    const struct nlmsghdr *header = (const struct nlmsghdr *)((const char *)buffer + *offset);
    if (remaining < sizeof(struct nlmsghdr) || !NLMSG_OK(header, remaining)) return -1;
    size_t advance = NLMSG_ALIGN(header->nlmsg_len);
    *offset += advance < remaining ? advance : remaining;

    out->sequence = header->nlmsg_seq;
    out->dump_interrupted = (header->nlmsg_flags & NLM_F_DUMP_INTR) != 0;
    switch (header->nlmsg_type) {
    case NLMSG_DONE:
        out->kind = CSYSTEM_NETLINK_DONE;
        /* A dump that failed part-way ends with DONE carrying a negative errno. */
        if (header->nlmsg_len >= NLMSG_LENGTH(sizeof(int))) {
            int status;
            memcpy(&status, NLMSG_DATA(header), sizeof(int));
            if (status < 0) out->error = -status;
        }
        break;
    case NLMSG_ERROR:
        out->kind = CSYSTEM_NETLINK_ERROR;
        if (header->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
            const struct nlmsgerr *error = NLMSG_DATA(header);
            out->error = -error->error;
        } else {
            out->error = EPROTO;
        }
        break;
    case RTM_NEWLINK:
    case RTM_DELLINK:
        out->kind = CSYSTEM_NETLINK_LINK;
        out->is_delete = header->nlmsg_type == RTM_DELLINK;
        parse_link(header, &out->link);
        break;
    case RTM_NEWROUTE:
    case RTM_DELROUTE:
        out->kind = CSYSTEM_NETLINK_ROUTE;
        out->is_delete = header->nlmsg_type == RTM_DELROUTE;
        parse_route(header, &out->route);
        break;
    default:
        out->kind = CSYSTEM_NETLINK_OTHER;
        break;
    }
    return 1;
}

int csystem_enter_network_namespace(int fd) {
    return setns(fd, CLONE_NEWNET);
}

int csystem_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int csystem_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}
