// What a file manager passes as `%U`: any bytes decode or are refused with words, never
// trap, never yield a name with a NUL; and every absolute path, percent-encoded the way a
// file manager does it (or every byte but the slashes encoded), comes back as exactly its bytes.
@testable import Platform

private let hex = Array("0123456789ABCDEF".utf8)

private func encode(_ path: [UInt8], everyByte: Bool) -> [UInt8] {
    var out = Array("file://".utf8)
    for b in path {
        // The slashes are the URI's own; every other byte may be encoded.
        let plain = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
            || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "_")
        if b == UInt8(ascii: "/") || (plain && !everyByte) { out.append(b) } else { out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]] }
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    do {
        let path = try FileURI.decode(bytes)
        precondition(!path.bytes.contains(0), "a decoded name holds a NUL")
        precondition(path.bytes.first == UInt8(ascii: "/"), "a decoded path is not absolute")
    } catch {
        precondition(!error.message.isEmpty)
    }
    let path = [UInt8(ascii: "/")] + bytes.filter { $0 != 0 }
    for everyByte in [false, true] {
        let uri = encode(path, everyByte: everyByte)
        guard let back = try? FileURI.decode(uri) else { preconditionFailure("refused its own encoding: \(uri)") }
        precondition(back.bytes == path, "\(path) came back as \(back.bytes)")
    }
    return 0
}
