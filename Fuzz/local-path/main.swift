// Local paths are bytes: every operation works on any bytes, and what is shown to a person
// never carries a control character.
@testable import Platform

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let path = LocalPath(bytes: bytes)
    let shown = path.display
    precondition(!shown.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f || (0x80...0x9f).contains($0.value) },
                 "a control character reaches the terminal: \(shown.debugDescription)")
    let last = path.lastComponent
    precondition(last.bytes.count <= bytes.count)
    if let slash = bytes.lastIndex(of: UInt8(ascii: "/")), slash < bytes.count - 1 {
        precondition(!last.bytes.contains(UInt8(ascii: "/")))
    }
    _ = path.parent
    precondition(path.appending(last).bytes.count >= bytes.count)
    _ = path.text
    _ = path.withCString { $0.pointee }
    return 0
}
