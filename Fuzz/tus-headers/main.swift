// tus replies: the input is header lines (`Name: value`); every reader either throws a
// ProtocolViolation or returns numbers consistent with the exchange.
@testable import Transport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    var headers: [(String, String)] = []
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers.append((line[..<colon].lowercased(), String(line[line.index(after: colon)...].drop(while: { $0 == " " }))))
    }
    let response = HTTPResponse(status: 204, headers: headers, body: [])
    _ = try? TusReply.serverInfo(response)
    if let status = try? TusReply.uploadStatus(response) {
        precondition(status.offset >= 0)
        if let length = status.length { precondition(status.offset <= length) }
    }
    for (from, length) in [(Int64(0), Int64(100)), (Int64.max - 5, Int64(10)), (1 << 40, 1 << 20)] {
        if let confirmed = try? TusReply.patchOffset(response, sentFrom: from, length: length) {
            precondition(confirmed.offset >= from && confirmed.offset - from <= length)
        }
    }
    _ = try? TusReply.expiresAt(response)
    let client = TusClient(endpoint: "http://127.0.0.1:8080/files/", credentials: nil)
    if let location = headers.first(where: { $0.0 == "location" })?.1, let url = try? client.resolve(location) {
        precondition(url.hasPrefix("http://127.0.0.1:8080/"), "resolved to another origin: \(url)")
    }
    return 0
}
