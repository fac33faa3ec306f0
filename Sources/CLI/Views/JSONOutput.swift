import FoundationEssentials

/// JSON for programs: sorted keys, unescaped slashes, so equal values print equal bytes.
public enum JSONOutput {
    /// Pretty-printed, for `--json`.
    public static func encode<T: Encodable>(_ value: T) -> String { encode(value, pretty: true) }

    /// One line per value, for streams such as `queue --json --follow`.
    public static func line<T: Encodable>(_ value: T) -> String { encode(value, pretty: false) }

    static func encode<T: Encodable>(_ value: T, pretty: Bool) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
                                          : [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            // The output types hold only strings, integers and booleans, which always encode.
            preconditionFailure("JSON output could not be encoded: \(error)")
        }
    }
}
