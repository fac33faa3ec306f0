// ServerNumber against a reference: Swift's own Int64(String) on text already known to be
// nothing but ASCII digits. Any disagreement, or a trap, is a finding.
@testable import Transport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    let reading = ServerNumber.read(text)

    var trimmed = Substring(text).utf8[...]
    while let b = trimmed.first, b == 0x20 || b == 0x09 { trimmed.removeFirst() }
    while let b = trimmed.last, b == 0x20 || b == 0x09 { trimmed.removeLast() }
    let allDigits = !trimmed.isEmpty && trimmed.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    switch reading {
    case .value(let v):
        precondition(allDigits && Int64(String(decoding: Array(trimmed), as: UTF8.self)) == v, "value disagrees: \(text.debugDescription)")
    case .tooLarge:
        precondition(allDigits && Int64(String(decoding: Array(trimmed), as: UTF8.self)) == nil, "tooLarge disagrees: \(text.debugDescription)")
    case .notANumber:
        precondition(!allDigits, "notANumber disagrees: \(text.debugDescription)")
    }

    // A range from the first bytes: parse stays within it or throws.
    let low = Int64(bytes.first ?? 0), high = low + Int64(bytes.dropFirst().first ?? 0) * 1_000_000
    do {
        let v = try ServerNumber.parse(text, field: "X", in: low...high)
        precondition((low...high).contains(v))
    } catch {
        precondition(!error.message.isEmpty)
    }
    _ = ServerNumber.quoted(text)
    return 0
}
