import CSystem
import Foundation
import Glibc
import Testing

/// The C signal handler behind the CLI's signal pipe.
@Suite("The signal pipe's handler")
struct SignalPipeHandlerTests {
    /// What the signalled thread saw, handed back to the test.
    final class Seen: @unchecked Sendable {
        // Sendable by construction: written by the thread before `done` is signalled, read after.
        var errnoAfterSignal: [Int32] = []
        let done = DispatchSemaphore(value: 0)
    }

    @Test("a signal leaves errno as the interrupted code had it, even when the pipe is full and the handler's own write fails")
    func keepsErrno() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        // Full: the handler's write will fail with EAGAIN.
        var block = [UInt8](repeating: 0, count: 4096)
        while write(fds[1], &block, block.count) > 0 {}
        try #require(errno == EAGAIN)
        csystem_signal_pipe_set(fds[1])

        var action = sigaction()
        action.__sigaction_handler.sa_handler = csystem_signal_pipe_handler
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        var previous = sigaction()
        try #require(sigaction(SIGUSR1, &action, &previous) == 0)
        defer { sigaction(SIGUSR1, &previous, nil) }

        let seen = Seen()
        Thread {
            // The test runner's threads may block signals; this one must take them.
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            // raise() runs the handler on this thread before it returns.
            errno = ENOTTY
            raise(SIGUSR1)
            seen.errnoAfterSignal.append(errno)
            errno = ERANGE
            raise(SIGUSR1)
            seen.errnoAfterSignal.append(errno)
            seen.done.signal()
        }.start()
        seen.done.wait()
        #expect(seen.errnoAfterSignal == [ENOTTY, ERANGE], "the handler's EAGAIN leaked into the code it interrupted")

        // With room in the pipe, the signal's number arrives.
        var drain = [UInt8](repeating: 0, count: 1 << 16)
        while read(fds[0], &drain, drain.count) > 0 {}
        let waker = Seen()
        Thread {
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            raise(SIGUSR1)
            waker.done.signal()
        }.start()
        waker.done.wait()
        var byte: UInt8 = 0
        #expect(read(fds[0], &byte, 1) == 1 && Int32(byte) == SIGUSR1)
    }
}
