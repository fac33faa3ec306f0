#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
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

int csystem_set_lease(int fd, int type) {
    if (type != F_UNLCK && fcntl(fd, F_SETSIG, SIGURG) != 0) return -1;
    return fcntl(fd, F_SETLEASE, type);
}

int csystem_name_thread(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}

int csystem_spawn(pid_t *pid, const char *path, int stdin_fd, int stdout_fd, int stderr_fd, int new_session,
                  char *const argv[], char *const envp[]) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return rc;
    rc = posix_spawnattr_init(&attributes);
    if (rc != 0) { posix_spawn_file_actions_destroy(&actions); return rc; }
    int fds[3] = { stdin_fd, stdout_fd, stderr_fd };
    for (int target = 0; target < 3 && rc == 0; target++) {
        if (fds[target] >= 0) rc = posix_spawn_file_actions_adddup2(&actions, fds[target], target);
    }
    /* Nothing else of ours reaches the child, whatever another thread opened meanwhile. */
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attributes, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attributes, &all);
    /* A session of its own (a detached agent), or at least a process group of its own, so
     * a Ctrl-C meant for this program does not reach it. */
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (new_session ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP);
    if (rc == 0 && !new_session) rc = posix_spawnattr_setpgroup(&attributes, 0);
    if (rc == 0) rc = posix_spawnattr_setflags(&attributes, flags);
    if (rc == 0) rc = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return rc;
}

int csystem_set_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}
