#define _GNU_SOURCE
#include <stddef.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include "CSystem.h"

int csystem_peer_uid(int fd, uid_t *uid) {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *uid = cred.uid;
    return 0;
}

int csystem_accept_cloexec(int fd) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC);
}

int csystem_set_thread_fsuid(uid_t uid) {
    return setfsuid(uid);
}

int csystem_name_thread(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}
