import Foundation

/// A private certificate authority made for one test with openssl, and a server
/// certificate it signed for 127.0.0.1 and localhost. Nothing else trusts this CA.
public final class TestCertificates: @unchecked Sendable {
    // Sendable by construction: every field is set in init and never changes.
    public let folder: TemporaryFolder
    /// The CA's certificate (PEM): what a client must be told to trust.
    public var caFile: String { folder.path + "/ca.pem" }
    public var serverCertificate: String { folder.path + "/server.pem" }
    public var serverKey: String { folder.path + "/server.key" }

    public init() throws {
        folder = TemporaryFolder("iu-ca")
        let dir = folder.path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Self.openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", dir + "/ca.key", "-out", dir + "/ca.pem",
                          "-days", "2", "-subj", "/CN=instant-upload test CA"])
        try Self.openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", dir + "/server.key", "-out", dir + "/server.csr",
                          "-subj", "/CN=127.0.0.1"])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(toFile: dir + "/server.ext", atomically: true, encoding: .utf8)
        try Self.openssl(["x509", "-req", "-in", dir + "/server.csr", "-CA", dir + "/ca.pem", "-CAkey", dir + "/ca.key",
                          "-CAcreateserial", "-out", dir + "/server.pem", "-days", "2", "-extfile", dir + "/server.ext"])
    }

    /// The reference server's arguments to serve https with this certificate.
    public var serverArguments: [String] { ["--tls-cert", serverCertificate, "--tls-key", serverKey] }

    static func openssl(_ arguments: [String]) throws {
        let r = try Shell.capture("/usr/bin/openssl", arguments)
        guard r.status == 0 else { throw TestFailure("openssl \(arguments.first ?? "") failed (\(r.status)): \(r.stderr) — the TLS tests need openssl") }
    }
}
