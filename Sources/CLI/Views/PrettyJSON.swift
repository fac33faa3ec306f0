/// Pretty-printed JSON written by hand, byte for byte as `JSONOutput.encode` writes the same
/// value (two spaces a level, `"key" : value`, slashes as they are), for the one value
/// written once a row: `queue --json` on 100,000 rows spent two thirds of its 3 s in
/// `JSONEncoder`'s generic machinery (boxing each value, sorting each object's keys).
///
/// The caller writes the keys of an object in sorted order, as `.sortedKeys` would.
struct PrettyJSON {
    private(set) var bytes: [UInt8] = []
    /// How deep the next line is indented, in levels.
    private var depth: Int
    /// Whether the object being written has no key yet.
    private var first = true

    /// A writer whose value starts `depth` levels in (its first line is not indented).
    init(depth: Int = 0) { self.depth = depth }

    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        first = true
    }

    mutating func openObject() {
        bytes.append(UInt8(ascii: "{"))
        depth += 1
        first = true
    }

    mutating func closeObject() {
        depth -= 1
        newLine()
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    /// `"key" : ` on a line of its own; `key` needs no escaping (the output's own names).
    mutating func key(_ key: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        newLine()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: " ")])
    }

    mutating func null() { bytes.append(contentsOf: "null".utf8) }

    mutating func bool(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }

    mutating func int<I: BinaryInteger>(_ value: I) { bytes.append(contentsOf: String(value).utf8) }

    mutating func string(_ value: String?) {
        guard let value else { return null() }
        bytes.append(UInt8(ascii: "\""))
        var text = value
        text.withUTF8 { utf8 in
            var start = 0
            for (i, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i]))
                start = i + 1
                escape(byte)
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The escape `JSONEncoder` writes for a quote, a backslash or a control character.
    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        default:
            bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 0xF)]])
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private mutating func newLine() {
        bytes.append(UInt8(ascii: "\n"))
        for _ in 0..<depth { bytes.append(contentsOf: [UInt8(ascii: " "), UInt8(ascii: " ")]) }
    }
}
