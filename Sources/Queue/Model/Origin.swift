/// Who asked for a transfer. Work a person asked for by hand goes ahead of auto-uploads.
public enum Origin: String, Sendable, Codable {
    case manual, share, auto

    /// Lower runs first.
    public var lane: Int { self == .auto ? 1 : 0 }
}
