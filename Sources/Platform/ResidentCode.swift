import CSystem

/// The machine code a long-running process ran while it started and never runs again.
///
/// The kernel maps code in blocks of 64 kB or more around each page a process runs, and
/// keeps them for the process's life. The agent's start-up (its config, the queue opened and
/// migrated, SQL compiled, D-Bus, the watchers) ran code in the program and in a dozen
/// libraries that its transfers never touch, about 1 MB of it. `releaseStartUp()` unmaps
/// the code of the program and of every library loaded so far from this process; the pages
/// stay in the page cache, and code is never written, so nothing is lost, and what runs
/// from then on is faulted back in (a few hundred minor faults in all).
///
/// One thing it does undo: a breakpoint written into the code before the release (a
/// debugger's, a uprobe's) is gone from this process afterwards.
public enum ResidentCode {
    /// Releases the code of the program and its libraries; the bytes released.
    @discardableResult
    public static func releaseStartUp() -> Int { csystem_release_code() }
}
