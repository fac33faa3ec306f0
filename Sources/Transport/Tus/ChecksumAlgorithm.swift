
public enum ChecksumAlgorithm: String, Sendable {
    case sha1, sha256
}
