// The PROPFIND parser, then what the client makes of each entry: whatever the reply, a
// ProtocolViolation or items whose paths stay inside the account.
@testable import Transport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    guard let responses = try? MultistatusParser.parse(bytes) else { return 0 }
    for response in responses {
        precondition(!response.href.isEmpty)
        guard let path = try? WebDAVPath.remotePath(href: response.href, rootComponents: ["dav", "alice"]),
              let item = try? RemoteItem(path: path, response: response) else { continue }
        precondition(path.hasPrefix("/") && !path.split(separator: "/").contains(".."))
        if let size = item.size { precondition(size >= 0) }
        if let validator = item.rangeValidator { precondition(!validator.hasPrefix("W/")) }
    }
    return 0
}
