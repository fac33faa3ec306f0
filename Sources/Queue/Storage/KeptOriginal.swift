import Platform

/// An original that stayed where it was although its rule moves originals to the trash.
public struct KeptOriginal: Sendable, Equatable {
    public var path: LocalPath
    public var reason: String

    public init(path: LocalPath, reason: String) {
        self.path = path
        self.reason = reason
    }
}
