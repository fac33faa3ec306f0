#ifndef CSIGNALPIPE_H
#define CSIGNALPIPE_H

/* A signal handler that writes the signal's number as one byte to a pipe, for a loop that
 * waits in poll(2). Written in C so that the handler runs no code of a language runtime,
 * only write(2), which is async-signal-safe; and it puts errno back as it found it, so the
 * code it interrupted never sees the errno of its write. */

/* The pipe's write end (non-blocking); set before the handler is installed. */
void csystem_signal_pipe_set(int write_fd);

/* The handler, for sigaction's sa_handler. */
void csystem_signal_pipe_handler(int signal);

#endif
