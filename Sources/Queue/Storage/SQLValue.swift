import CSQLite
import Glibc

/// A value bound to a statement parameter.
public enum SQLValue: Sendable {
    case null, int(Int64), double(Double), text(String), blob([UInt8])

    public static func int(_ v: Int) -> SQLValue { .int(Int64(v)) }
    public static func optionalText(_ v: String?) -> SQLValue { v.map { .text($0) } ?? .null }
    public static func optionalInt(_ v: Int64?) -> SQLValue { v.map { .int($0) } ?? .null }
    public static func optionalBlob(_ v: [UInt8]?) -> SQLValue { v.map { .blob($0) } ?? .null }
}
