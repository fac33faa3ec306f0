// Content-Range: whatever the header, no trap, and a range it accepts is one a download can use.
@testable import Transport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    guard let range = ContentRange(String(decoding: bytes, as: UTF8.self)) else { return 0 }
    if let first = range.first, let last = range.last {
        precondition(first >= 0 && last >= first && last < Int64.max)
        precondition(range.count == last - first + 1)
        if let total = range.total { precondition(last < total) }
    } else {
        precondition(range.first == nil && range.last == nil && range.total != nil)
    }
    return 0
}
