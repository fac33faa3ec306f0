#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <sys/auxv.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
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

int csystem_malloc_trim(void) {
    return malloc_trim(0);
}

static int relocated_in_place(const struct dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr); d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL))) return 1;
    }
    return 0;
}

static int release_code(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    long *released = data;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if ((vdso && info->dlpi_addr == vdso) || relocated_in_place(info)) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_X) || (segment->p_flags & PF_W)) continue;
        /* Whole pages of the file's bytes inside the segment only: a page it shares with its
         * neighbour stays, and so does the tail the loader zeroed past the file's bytes. */
        uintptr_t start = (info->dlpi_addr + segment->p_vaddr + page - 1) & ~(page - 1);
        uintptr_t end = (info->dlpi_addr + segment->p_vaddr + segment->p_filesz) & ~(page - 1);
        if (end > start && madvise((void *)start, end - start, MADV_DONTNEED) == 0) *released += (long)(end - start);
    }
    return 0;
}

long csystem_release_code(void) {
    long released = 0;
    dl_iterate_phdr(release_code, &released);
    return released;
}

ssize_t csystem_write_nosigpipe(int fd, const void *bytes, size_t count) {
    sigset_t pipe_only, old, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    ssize_t n = write(fd, bytes, count);
    int saved = errno;
    /* The SIGPIPE this write queued, taken back before the mask is: Linux queues one when
     * the reader goes while the write waits, even for a write that returns a partial count. */
    if (!was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
        struct timespec now = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &now) < 0 && errno == EINTR) {}
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return n;
}
