#ifndef CSYSTEM_H
#define CSYSTEM_H
#include <sys/types.h>

/* Linux calls that need _GNU_SOURCE or kernel headers Glibc's module does not expose. */

/* The uid of the process on the other end of a Unix socket (SO_PEERCRED); -1 on error. */
int csystem_peer_uid(int fd, uid_t *uid);

/* accept(2) with close-on-exec set atomically. */
int csystem_accept_cloexec(int fd);
#endif
#include "CConnectivity.h"
