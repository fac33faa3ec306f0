/// Which way the bytes go.
public enum Direction: String, Sendable, Codable, CaseIterable {
    case upload, download
}
