#ifndef CSYSTEM_H
#define CSYSTEM_H
#include <sys/types.h>
#include <spawn.h>
#include <pthread.h>
#include <stddef.h>

/* Linux calls that need _GNU_SOURCE or kernel headers Glibc's module does not expose. */

/* The uid of the process on the other end of a Unix socket (SO_PEERCRED); -1 on error. */
int csystem_peer_uid(int fd, uid_t *uid);

/* mallopt(3) M_MMAP_THRESHOLD (malloc.h is not in Glibc's module): a fixed threshold, which
 * also stops glibc from raising it as large blocks are freed. Returns 1 on success. */
int csystem_set_mmap_threshold(int bytes);

/* malloc_trim(3): the free memory of every arena given back to the kernel. Returns 1 when
 * some was. */
int csystem_malloc_trim(void);

/* Unmaps the machine code of the program and of every library loaded so far from this
 * process's page tables: madvise(MADV_DONTNEED) on each object's executable segments.
 * The pages stay in the page cache, and code is never written, so nothing is lost: what
 * runs afterwards is faulted back in. An object whose code the loader relocated in place
 * (DT_TEXTREL) is left alone, as is the kernel's vDSO. Returns the bytes released. */
long csystem_release_code(void);

/* A library loaded on first use rather than at start (libcurl, libexif): its soname, the
 * Debian package that provides it, and each function to look up with where its address goes.
 * The loader's own fields follow; `CSYSTEM_LIBRARY` sets them up. */
struct csystem_symbol {
    const char *name;
    void **slot;
};
struct csystem_library {
    const char *soname;
    const char *package;
    const struct csystem_symbol *symbols;
    size_t count;
    pthread_mutex_t lock;
    int done;
    const char *failure;
    char text[512];
};

/* A row of a library's table: the function PREFIX FIELD (`curl_` `easy_init`), whose address
 * goes to api.FIELD. */
#define CSYSTEM_SYMBOL(prefix, api, field) {#prefix #field, (void **)&(api).field}
/* A library's definition from its soname, package and table, the loader's fields ready. */
#define CSYSTEM_LIBRARY(soname_, package_, symbols_)                                            \
    {.soname = (soname_), .package = (package_), .symbols = (symbols_),                          \
     .count = sizeof(symbols_) / sizeof *(symbols_), .lock = PTHREAD_MUTEX_INITIALIZER}

/* Loads `library` and looks up its functions, the first time only (any thread may call).
 * NULL when all are there; else why not, in words naming the package to install. */
const char *csystem_library_load(struct csystem_library *library);

/* accept(2) with close-on-exec set atomically. */
int csystem_accept_cloexec(int fd);

/* Names the calling thread for `top -H`, `ps -L` and /proc/self/task/TID/comm (up to 15 bytes). */
int csystem_name_thread(const char *name);

/* setfsuid(2): file access checks on the calling thread only (not the process) use `uid`,
 * and leaving uid 0 drops that thread's CAP_DAC_OVERRIDE. Returns the previous fsuid.
 * Tests run as root use it to see a folder the way its owner's locked-out user would. */
int csystem_set_thread_fsuid(uid_t uid);

/* fcntl(2) F_SETLEASE with `type` (F_RDLCK, F_UNLCK) on `fd`. Before taking a lease it points
 * the lease-break signal at SIGURG, whose default action is to ignore it: the default
 * (SIGIO) would end the process if a writer opened the file while the lease is held.
 * Returns 0, or -1 with errno set (EAGAIN: a writer has the file open). */
int csystem_set_lease(int fd, int type);

/* posix_spawn(3) of `path` with `stdin_fd`, `stdout_fd`, `stderr_fd` as 0, 1, 2 (-1: inherit),
 * every other descriptor closed in the child (even ones another thread opened without
 * close-on-exec a moment ago), signals unblocked and at their defaults, in a process group
 * of its own, or a session of its own with `new_session`. Returns 0 or an errno value. */
int csystem_spawn(pid_t *pid, const char *path, int stdin_fd, int stdout_fd, int stderr_fd, int new_session,
                  char *const argv[], char *const envp[]);
/* write(2) that never raises SIGPIPE: to a pipe whose reader is gone it fails with EPIPE,
 * and the process (a command that is not the agent keeps SIGPIPE's default, which ends it)
 * goes on to say so. The signal is blocked on the calling thread for the call, and the one
 * the write queued is taken back. */
ssize_t csystem_write_nosigpipe(int fd, const void *bytes, size_t count);
#endif
#include "CConnectivity.h"
#include "CFiles.h"
#include "CSignalPipe.h"
