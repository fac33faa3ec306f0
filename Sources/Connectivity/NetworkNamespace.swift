import CSystem
import Glibc
import Platform

/// A network namespace named by a file, such as `/var/run/netns/NAME` (what `ip netns add`
/// creates) or `/proc/PID/ns/net`.
///
/// Netlink sockets belong to the namespace of the thread that opens them, so code that
/// watches a namespace enters it on a dedicated thread first, then opens its sockets.
struct NetworkNamespace: Sendable, Equatable {
    var path: String

    init(path: String) { self.path = path }

    /// The namespace `ip netns add NAME` created.
    init(named name: String) { self.path = "/var/run/netns/" + name }

    /// Moves the calling thread into the namespace. Only ever on a thread of our own.
    func enterOnCurrentThread() throws(SystemError) {
        let fd = try valueOrErrno("open", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        try valueOrErrno("setns", path: path) { csystem_enter_network_namespace(fd) }
    }
}
