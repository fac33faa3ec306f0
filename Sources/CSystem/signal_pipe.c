#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include "CSignalPipe.h"

static volatile sig_atomic_t write_end = -1;

void csystem_signal_pipe_set(int write_fd) {
    write_end = write_fd;
}

void csystem_signal_pipe_handler(int signal) {
    int saved = errno;
    unsigned char byte = (unsigned char)signal;
    /* A full pipe already holds a wake-up; the byte may be dropped. */
    ssize_t ignored = write(write_end, &byte, 1);
    (void)ignored;
    errno = saved;
}
