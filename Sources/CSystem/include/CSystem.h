#ifndef CSYSTEM_H
#define CSYSTEM_H
#include <sys/types.h>
#include <spawn.h>

/* Linux calls that need _GNU_SOURCE or kernel headers Glibc's module does not expose. */

/* The uid of the process on the other end of a Unix socket (SO_PEERCRED); -1 on error. */
int csystem_peer_uid(int fd, uid_t *uid);

/* accept(2) with close-on-exec set atomically. */
int csystem_accept_cloexec(int fd);

/* Adds "close every descriptor from `lowest` up" to spawn actions (glibc 2.34+); 0 or an errno. */
int csystem_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);
#endif
#include "CConnectivity.h"
