
/// Reads the headers of tus replies: every number through `ServerNumber`, every date
/// through `HTTPDate`, and every offset checked against what the exchange makes possible.
/// Pure functions of a response, so each hostile header is a one-line test and a fuzz input.
public enum TusReply {
    /// What OPTIONS says about the server. A `Tus-Max-Size` that is not a plain number is
    /// a violation, never "no limit".
    public static func serverInfo(_ response: HTTPResponse) throws(ProtocolViolation) -> TusServerInfo {
        func list(_ h: String) -> [String] {
            (response.header(h) ?? "").split(separator: ",").map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
        }
        let versions = list("tus-version")
        return TusServerInfo(versions: versions.isEmpty ? [response.header("tus-version") ?? ""] : versions,
                             extensions: Set(list("tus-extension")),
                             maxSize: try ServerNumber.parseOptional(response.header("tus-max-size"), field: "Tus-Max-Size"),
                             checksumAlgorithms: list("tus-checksum-algorithm"))
    }

    /// What HEAD says about one upload: an offset never beyond its length. An offset behind
    /// what the server confirmed before is the server's word too (restored from a backup):
    /// the upload policy decides what it means.
    public static func uploadStatus(_ response: HTTPResponse) throws(ProtocolViolation) -> TusUploadStatus {
        guard let offsetText = response.header("upload-offset") else {
            throw ProtocolViolation("the server's answer about an upload has no Upload-Offset")
        }
        let length = try ServerNumber.parseOptional(response.header("upload-length"), field: "Upload-Length")
        let offset = try ServerNumber.parse(offsetText, field: "Upload-Offset", in: 0...(length ?? Int64.max))
        return TusUploadStatus(offset: offset, length: length, expiresAt: try expiresAt(response))
    }

    /// The offset a PATCH reply confirms: at least where the chunk started, at most where it ended.
    public static func patchOffset(_ response: HTTPResponse, sentFrom offset: Int64, length: Int64) throws(ProtocolViolation) -> (offset: Int64, expiresAt: Int64?) {
        guard let text = response.header("upload-offset") else {
            throw ProtocolViolation("the server confirmed a chunk without an Upload-Offset")
        }
        let (end, overflow) = offset.addingReportingOverflow(max(0, length))
        let confirmed = try ServerNumber.parse(text, field: "Upload-Offset", in: offset...(overflow ? Int64.max : end))
        return (confirmed, try expiresAt(response))
    }

    /// `Upload-Expires` in milliseconds since the epoch; nil when absent.
    public static func expiresAt(_ response: HTTPResponse) throws(ProtocolViolation) -> Int64? {
        guard let text = response.header("upload-expires") else { return nil }
        guard let at = HTTPDate.milliseconds(text) else {
            throw ProtocolViolation("the server sent Upload-Expires `\(ServerNumber.quoted(text))`, which is not a date",
                                    said: "Upload-Expires: \(text)")
        }
        return at
    }
}
