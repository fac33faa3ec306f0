// Remote paths and hrefs: decoding never traps; what it accepts stays inside the account;
// a name encoded by us decodes back to itself; a server's name becomes a safe local name.
@testable import Transport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    let root = ["dav", "alice"]
    if let path = try? WebDAVPath.remotePath(href: text, rootComponents: root) {
        precondition(!path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().contains(".."), "escaped: \(path)")
    }
    _ = try? WebDAVPath.decodedComponents(ofURL: text)
    if let url = try? WebDAVPath.url(root: "http://h/dav/alice/", path: text, isFolder: false) {
        let back = try? WebDAVPath.remotePath(href: url, rootComponents: root)
        precondition(back == WebDAVPath.normalize(text), "round trip: \(text.debugDescription) -> \(url) -> \(back ?? "nil")")
    }
    let name = DownloadName.sanitize(text)
    precondition(!name.isEmpty && !name.contains("/") && !name.hasPrefix(".") && name.utf8.count <= 250, "unsafe name: \(name.debugDescription)")
    return 0
}
