import Platform

/// One word from the command line, kept as the bytes the kernel passed.
///
/// A file name on Linux need not be UTF-8, and `CommandLine.arguments` would replace such
/// bytes before the parser saw them; the file could then never be opened. Arguments stay
/// bytes until someone asks for text (`text`, for options and IDs) or a path (`path`).
public struct Argument: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var bytes: [UInt8]

    /// An argument exactly as these bytes.
    public init(bytes: [UInt8]) { self.bytes = bytes }
    /// An argument from text (tests, or callers that already hold a `String`).
    public init(_ text: String) { self.bytes = Array(text.utf8) }
    public init(stringLiteral text: String) { self.init(text) }

    /// The argument as text; bytes that are not UTF-8 become U+FFFD.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The argument as a local path, byte for byte.
    public var path: LocalPath { LocalPath(bytes: bytes) }

    /// The argument for a terminal or an error message: control characters and bad bytes escaped.
    public var display: String { DisplayText.escape(bytes) }

    public var description: String { display }

    /// The process's arguments without the program name, read from `argv` as bytes.
    public static func commandLine() -> [Argument] {
        let argv = CommandLine.unsafeArgv
        return (1..<Int(CommandLine.argc)).compactMap { index in
            argv[index].map { Argument(path: LocalPath(cString: $0)) }
        }
    }

    init(path: LocalPath) { self.bytes = path.bytes }

    var startsWithDash: Bool { bytes.first == UInt8(ascii: "-") }
    var isDoubleDash: Bool { bytes == [UInt8(ascii: "-"), UInt8(ascii: "-")] }
}
