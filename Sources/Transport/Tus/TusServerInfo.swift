
/// What a tus server said about itself in answer to OPTIONS.
public struct TusServerInfo: Sendable, Equatable {
    public var versions: [String]
    public var extensions: Set<String>
    public var maxSize: Int64?
    public var checksumAlgorithms: [String]

    public var supportsTermination: Bool { extensions.contains("termination") }
    public var supportsCreation: Bool { extensions.contains("creation") }

    /// The checksum algorithm this client will use, if the server offers one it has.
    public var checksumAlgorithm: ChecksumAlgorithm? {
        guard extensions.contains("checksum") else { return nil }
        for preferred in [ChecksumAlgorithm.sha256, .sha1] where checksumAlgorithms.contains(preferred.rawValue) {
            return preferred
        }
        return nil
    }
}
