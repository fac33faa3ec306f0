import FoundationEssentials
import Platform

/// JSON for programs: sorted keys, unescaped slashes, so equal values print equal bytes.
public enum JSONOutput {
    /// Pretty-printed, for `--json`.
    public static func encode<T: Encodable>(_ value: T) -> String { String(decoding: encoded(value, by: encoder(pretty: true)), as: UTF8.self) }

    /// One line per value, for streams such as `queue --json --follow`.
    public static func line<T: Encodable>(_ value: T) -> String { String(decoding: encoded(value, by: encoder(pretty: false)), as: UTF8.self) }

    static func encoder(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
                                          : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func encoded<T: Encodable>(_ value: T, by encoder: JSONEncoder) -> Data {
        do {
            return try encoder.encode(value)
        } catch {
            // The output types hold only strings, integers and booleans, which always encode.
            preconditionFailure("JSON output could not be encoded: \(error)")
        }
    }

    /// A pretty-printed array of transfers written an element at a time, byte for byte as
    /// `encode` writes the whole array: `queue --json` on a long queue holds its text, not
    /// every row as a value, then as JSON, then as text.
    struct ArrayText {
        private var text = "[\n"
        private var empty = true
        private var element = PrettyJSON(depth: 1)

        /// Hands the text so far to `eager` once it has gathered a piece (`EagerOutput.pass`);
        /// what follows goes on from there.
        mutating func handOn(to eager: EagerOutput?) { eager?.pass(&text) }

        mutating func add(_ item: TransferJSON) {
            text += empty ? "  " : ",\n  "
            empty = false
            element.reset()
            item.write(to: &element)
            text += String(decoding: element.bytes, as: UTF8.self)
        }

        consuming func finish() -> String {
            text += "\n]"
            return text
        }
    }
}
