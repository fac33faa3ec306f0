import Glibc

public enum Signals {
    /// Clears the signal mask inherited from the parent. A process spawned from a thread
    /// with signals blocked (Foundation's Process does this) would otherwise never see
    /// SIGTERM, and could not stop cleanly.
    public static func unblockAll() {
        var empty = sigset_t()
        sigemptyset(&empty)
        sigprocmask(SIG_SETMASK, &empty, nil)
    }

    /// Blocks `signals` in the calling thread and every thread it starts from now on. One
    /// sent meanwhile waits, pending, for a dispatch signal source to read it, however late
    /// that source arms. Call it before the process starts any thread: a thread started
    /// earlier would still take the signal (and its default action ends the process), and
    /// setting a blocked signal to be ignored throws away the one pending.
    public static func hold(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }
}
