// HTTP dates and Retry-After: whatever the text, no trap; a date that parses formats back
// to the same moment; a Retry-After wait is always within 0...cap.
@testable import Transport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    if let ms = HTTPDate.milliseconds(text) {
        guard let formatted = HTTPDate.format(milliseconds: ms) else { preconditionFailure("a parsed date cannot be formatted: \(text)") }
        precondition(HTTPDate.milliseconds(formatted) == ms, "round trip: \(text.debugDescription) -> \(formatted)")
    }
    for now in [Int64(0), 1_700_000_000_000, -2_208_988_800_000, 253_402_300_799_000, Int64.max, Int64.min] {
        if let wait = try? RetryAfter.parse(text, now: now) {
            precondition((0...RetryAfter.cap).contains(wait.seconds), "wait out of range: \(wait)")
            _ = wait.shown
        }
    }
    return 0
}
