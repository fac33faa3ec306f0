#ifndef CCONNECTIVITY_H
#define CCONNECTIVITY_H
#include <stddef.h>
#include <stdint.h>

/* What the Connectivity target needs from Linux that Glibc's module does not expose:
 * rtnetlink (whose NLMSG_* and RTA_* walkers are macros Swift cannot call), setns(2),
 * eventfd(2) and pipe2(2). Kernel headers stay inside connectivity.c; the values below
 * are checked against them there at compile time. */

/* Multicast groups for csystem_netlink_open (RTMGRP_*). */
enum {
    CSYSTEM_NETLINK_GROUP_LINK = 0x1,
    CSYSTEM_NETLINK_GROUP_IPV4_ROUTE = 0x40,
    CSYSTEM_NETLINK_GROUP_IPV6_ROUTE = 0x400,
};

/* Dump requests for csystem_netlink_request_dump. */
enum {
    CSYSTEM_NETLINK_DUMP_LINKS = 1,
    CSYSTEM_NETLINK_DUMP_ROUTES = 2,
};

/* What csystem_netlink_next found. */
enum {
    CSYSTEM_NETLINK_END = 0,       /* no more messages in the buffer */
    CSYSTEM_NETLINK_LINK = 1,      /* RTM_NEWLINK / RTM_DELLINK: `link` is filled */
    CSYSTEM_NETLINK_ROUTE = 2,     /* RTM_NEWROUTE / RTM_DELROUTE: `route` is filled */
    CSYSTEM_NETLINK_DONE = 3,      /* end of a dump; `error` may be set */
    CSYSTEM_NETLINK_ERROR = 4,     /* NLMSG_ERROR; `error` is 0 for an ack */
    CSYSTEM_NETLINK_OTHER = 5,     /* anything else (addresses, noop, ...) */
};

/* An interface, from struct ifinfomsg and its IFLA_* attributes. */
struct csystem_netlink_link {
    int32_t index;
    uint8_t is_up;            /* IFF_UP: administratively up */
    uint8_t is_running;       /* IFF_RUNNING */
    uint8_t is_lower_up;      /* IFF_LOWER_UP: the driver sees a carrier */
    uint8_t is_loopback;      /* IFF_LOOPBACK */
    char name[17];            /* IFLA_IFNAME, NUL-terminated; empty when absent */
};

/* A route, from struct rtmsg and its RTA_* attributes. */
struct csystem_netlink_route {
    uint8_t family;           /* AF_INET or AF_INET6 */
    uint8_t destination_length;
    uint8_t is_unicast;       /* RTN_UNICAST: not blackhole, unreachable, local, ... */
    uint8_t is_main_table;    /* RTA_TABLE (or rtm_table) is RT_TABLE_MAIN */
    int32_t output_index;     /* RTA_OIF, else the first hop of RTA_MULTIPATH; 0 when none */
    uint32_t metric;          /* RTA_PRIORITY; 0 when absent */
    char gateway[46];         /* RTA_GATEWAY as text; empty when absent */
};

struct csystem_netlink_message {
    int kind;                 /* CSYSTEM_NETLINK_* */
    int is_delete;            /* RTM_DELLINK / RTM_DELROUTE */
    int dump_interrupted;     /* NLM_F_DUMP_INTR: the dump was inconsistent, repeat it */
    uint32_t sequence;
    int error;                /* positive errno for DONE / ERROR, else 0 */
    struct csystem_netlink_link link;
    struct csystem_netlink_route route;
};

/* A close-on-exec NETLINK_ROUTE socket joined to `groups`, in the network namespace of
 * the calling thread. -1 with errno on failure. */
int csystem_netlink_open(uint32_t groups, int receive_buffer_bytes);

/* Asks the kernel to dump links (family ignored) or routes of `family`. 0 or -1 with errno. */
int csystem_netlink_request_dump(int fd, int what, uint8_t family, uint32_t sequence);

/* Reads the message at *offset in `buffer` into *out and advances *offset.
 * Returns 1 for a message, 0 at the end, -1 for a malformed buffer. */
int csystem_netlink_next(const void *buffer, size_t length, size_t *offset,
                         struct csystem_netlink_message *out);

/* Moves the calling thread into the network namespace open at `fd` (setns, CLONE_NEWNET). */
int csystem_enter_network_namespace(int fd);

/* A nonblocking close-on-exec eventfd with a count of 0. */
int csystem_eventfd(void);

/* pipe2(fds, O_CLOEXEC). */
int csystem_pipe_cloexec(int fds[2]);
#endif
