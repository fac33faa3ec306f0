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
}
