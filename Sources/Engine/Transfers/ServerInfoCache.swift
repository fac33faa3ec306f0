import Glibc
import Platform
import Queue
import Transport

/// What servers said about themselves, remembered for the agent's lifetime.
public final class ServerInfoCache: Sendable {
    private let entries = Locked<[String: UploadCapabilities]>([:])
    public init() {}
    public func info(for endpoint: String, discover: () throws -> UploadCapabilities) throws -> UploadCapabilities {
        if let known = entries.withLock({ $0[endpoint] }) { return known }
        let info = try discover()
        entries.withLock { $0[endpoint] = info }
        return info
    }
    public func forget(_ endpoint: String) { _ = entries.withLock { $0.removeValue(forKey: endpoint) } }
}
