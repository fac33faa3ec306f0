import Glibc

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names in lower case, in the order received (of the final response).
    public var headers: [(String, String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.last(where: { $0.0 == lower })?.1
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }
    public var isSuccess: Bool { (200..<300).contains(status) }
}
