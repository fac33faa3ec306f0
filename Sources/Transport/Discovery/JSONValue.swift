
/// Any JSON value, as `JSONDecoder` reads it: for replies whose shape is checked field by
/// field (`ServerJSON`) rather than declared up front.
enum JSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    /// A number, as the text of its value: `1.0` and `1e3` are read as `1` and `1000`, a
    /// fraction or anything beyond `UInt64` as the shortest text of its `Double`.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let bool = try? c.decode(Bool.self) {
            self = .bool(bool)
        } else if let whole = try? c.decode(Int64.self) {
            self = .number(String(whole))
        } else if let whole = try? c.decode(UInt64.self) {
            self = .number(String(whole))
        } else if let real = try? c.decode(Double.self) {
            self = .number("\(real)")
        } else if let text = try? c.decode(String.self) {
            self = .string(text)
        } else if let list = try? c.decode([JSONValue].self) {
            self = .array(list)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }
}
