
/// What the OCS capabilities (`/ocs/v1.php/cloud/capabilities?format=json`) say about uploads.
public struct ServerCapabilities: Sendable, Equatable {
    /// `dav.chunking`, e.g. `1.0`: Nextcloud's chunked upload.
    public var chunking: String?
    /// `files.tus_support`, as ownCloud Infinite Scale offers it.
    public var tus: TusSupport?
    /// `checksums.supportedTypes`, lower-cased (`sha1`, `md5`, `adler32`).
    public var checksumTypes: [String]

    /// ownCloud's tus support: uploads are created by POST to the WebDAV folder.
    public struct TusSupport: Sendable, Equatable {
        /// The tus version to speak (`1.0.0`).
        public var resumable: String
        /// `extension`, split at commas (`creation`, `creation-with-upload`, ...).
        public var extensions: [String]
        /// The largest PATCH the server takes, when it says.
        public var maxChunkSize: Int64?
    }

    public init(chunking: String? = nil, tus: TusSupport? = nil, checksumTypes: [String] = []) {
        self.chunking = chunking; self.tus = tus; self.checksumTypes = checksumTypes
    }

    /// True when `dav.chunking` is 1.0 or later.
    public var offersChunking: Bool {
        guard let chunking, let major = chunking.split(separator: ".").first.flatMap({ ServerNumber.value(of: String($0)) }) else { return false }
        return major >= 1
    }

    /// tus 1.0.0 offered with the creation extension (or without a list, as oCIS gives by default).
    public var offersTus: Bool {
        guard let tus else { return false }
        return tus.resumable == "1.0.0" && (tus.extensions.isEmpty || tus.extensions.contains("creation"))
    }

    static func parse(_ bytes: [UInt8]) throws(ProtocolViolation) -> ServerCapabilities {
        let json = try ServerJSON(bytes, source: "the server's capabilities")
        let caps = ["ocs", "data", "capabilities"]
        guard json.has(caps) else { throw ProtocolViolation("the server's capabilities reply has no ocs.data.capabilities") }
        var result = ServerCapabilities()
        result.chunking = try json.string(caps + ["dav", "chunking"], maxLength: 20)
        if json.has(caps + ["files", "tus_support"]) {
            let t = caps + ["files", "tus_support"]
            let extensions = (try json.string(t + ["extension"], maxLength: 500) ?? "")
                .split(separator: ",").map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
            result.tus = TusSupport(resumable: try json.string(t + ["resumable"], maxLength: 20) ?? "",
                                    extensions: extensions,
                                    maxChunkSize: try json.number(t + ["max_chunk_size"]).flatMap { $0 > 0 ? $0 : nil })
        }
        result.checksumTypes = (try json.strings(caps + ["checksums", "supportedTypes"]) ?? []).map { $0.lowercased() }
        return result
    }
}
