import Glibc
import Platform

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names in lower case, in the order received (of the final response).
    public var headers: [(String, String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.last(where: { $0.0 == lower })?.1
    }

    /// The ETag of the file the request made or served: Nextcloud's `OC-ETag` where it sends
    /// one, else `ETag`. nil when absent, blank, or too long to be one (a server's nonsense is
    /// never kept as a version).
    public var fileETag: String? {
        guard let value = header("oc-etag") ?? header("etag"), !value.trimmingBlanks().isEmpty, value.utf8.count <= 1024 else { return nil }
        return value
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }
    public var isSuccess: Bool { (200..<300).contains(status) }
}
