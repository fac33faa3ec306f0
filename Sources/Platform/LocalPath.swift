import Glibc

/// A path on the local disk, kept as the bytes the kernel knows it by.
///
/// Linux file names are bytes, not text: a name that is not valid UTF-8 must still be
/// opened, stored and uploaded. `String` would replace such bytes, so paths travel as
/// bytes and are only turned into text for people (`display`) or for the server (`text`).
public struct LocalPath: Hashable, Sendable, Comparable {
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { self.bytes = Array(string.utf8) }
    public init(cString: UnsafePointer<CChar>) {
        self.bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(cString).assumingMemoryBound(to: UInt8.self), count: strlen(cString)))
    }

    public static func < (a: LocalPath, b: LocalPath) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    /// The path as text, with bytes that are not UTF-8 replaced (for the server, JSON).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The path for a terminal: control characters and invalid bytes escaped.
    public var display: String { DisplayText.escape(bytes) }

    public var isAbsolute: Bool { bytes.first == UInt8(ascii: "/") }

    /// The last component, e.g. `IMG_0042.jpg`.
    public var lastComponent: LocalPath {
        var b = bytes
        while b.count > 1, b.last == UInt8(ascii: "/") { b.removeLast() }
        if let slash = b.lastIndex(of: UInt8(ascii: "/")) { return LocalPath(bytes: Array(b[(slash + 1)...])) }
        return LocalPath(bytes: b)
    }

    public var parent: LocalPath {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return LocalPath(".") }
        return slash == 0 ? LocalPath("/") : LocalPath(bytes: Array(bytes[..<slash]))
    }

    public func appending(_ component: String) -> LocalPath { appending(LocalPath(component)) }
    public func appending(_ component: LocalPath) -> LocalPath {
        if bytes.last == UInt8(ascii: "/") { return LocalPath(bytes: bytes + component.bytes) }
        return LocalPath(bytes: bytes + [UInt8(ascii: "/")] + component.bytes)
    }

    /// Calls `body` with a NUL-terminated copy of the path.
    public func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try (bytes + [0]).withUnsafeBufferPointer { buf in
            try buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buf.count) { try body($0) }
        }
    }

    /// The absolute form of a path given relative to the working directory (not resolving links).
    public func absolute() -> LocalPath {
        if isAbsolute { return self }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return self }
        let cwd = buffer.withUnsafeBufferPointer { LocalPath(cString: $0.baseAddress!) }
        var rel = bytes
        while rel.starts(with: Array("./".utf8)) { rel.removeFirst(2) }
        return cwd.appending(LocalPath(bytes: rel))
    }
}

extension LocalPath {
    /// A name beside this one that no file can have (longer than any file system allows):
    /// where something keyed by path steps aside while names are traded.
    public var standIn: LocalPath { LocalPath(bytes: bytes + [UInt8](repeating: UInt8(ascii: "~"), count: 256)) }

    /// Swaps the names `a` and `b` in something keyed by path, by three of its own renames:
    /// `a` to a name no file can have (longer than any file system allows), `b` to `a`, then
    /// that name to `b`, so that neither lands on the other's record. For two files that
    /// swapped names in one step (`renameat2` with `RENAME_EXCHANGE`, `mv --exchange`).
    public static func exchange(_ a: LocalPath, _ b: LocalPath, by move: (LocalPath, LocalPath) throws -> Void) rethrows {
        let aside = a.standIn
        try move(a, aside)
        try move(b, a)
        try move(aside, b)
    }
}
