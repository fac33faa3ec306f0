import Platform
import Queue

/// A file of certificate authorities the person trusts for a server with a private one
/// (`ca_file` in the config, `account add --ca-file`).
///
/// A CA file that cannot be used is an error naming it, never a quiet fall-back to the
/// system's authorities: the person asked for this trust, and must hear that it is not there.
public enum CAFile {
    /// Why `path` cannot serve as a CA file (one sentence naming it), or nil when it can.
    public static func problem(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return "the CA file \(DisplayText.escape(path)) is not an absolute path" }
        let bytes: [UInt8]
        do { bytes = try FileIO.readBytes(path, limit: 8 << 20) } catch {
            return "the CA file \(DisplayText.escape(path)) cannot be read (\(error.reason))"
        }
        guard String(decoding: bytes, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            return "the CA file \(DisplayText.escape(path)) holds no certificate (a PEM file starting with -----BEGIN CERTIFICATE----- is needed)"
        }
        return nil
    }

    /// A CA file that cannot be used, as an error with what to do.
    public struct Unusable: Error, CustomStringConvertible, Sendable {
        public var path: String
        public var problem: String
        /// Where the file was named, e.g. "account home (account add --ca-file)".
        public var origin: String
        public init(path: String, problem: String, origin: String) {
            self.path = path; self.problem = problem; self.origin = origin
        }
        public var description: String {
            "\(problem); it is the CA file of \(origin)\n  put the certificate authority's PEM file there, or name another file"
        }
    }

    /// Throws `Unusable` when the account's own CA file cannot be used.
    public static func check(_ account: Account) throws(Unusable) {
        guard let path = account.caFile else { return }
        if let problem = problem(path) {
            throw Unusable(path: path, problem: problem, origin: "account \(DisplayText.escape(account.name)) (account add --ca-file)")
        }
    }
}
