import Foundation
import Glibc
import TestSupport
import Transport

/// The reference server plus a WebDAV client logged in as alice, for one test.
struct WebDAVTestServer {
    let server: ReferenceServer
    let client: WebDAVClient
    let local = TemporaryFolder("iu-webdav")

    static let alice = Credentials(username: "alice", password: "wonderland")

    init() throws {
        server = try ReferenceServer()
        client = WebDAVClient(root: server.webdavURL(), credentials: Self.alice)
    }

    /// Writes `bytes` to `relative` inside alice's tree on the server's disk.
    @discardableResult
    func put(_ relative: String, _ bytes: [UInt8]) throws -> String {
        let path = server.tree() + "/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A local file opened read-write, holding `bytes`.
    func openLocal(_ name: String, holding bytes: [UInt8] = []) throws -> LocalFile {
        let path = try local.file(name, bytes: bytes)
        return try LocalFile(path: path)
    }
}

/// An open local file that closes itself.
final class LocalFile {
    let path: String
    let descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw TestFailure("open \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(descriptor) }

    var bytes: [UInt8] { (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))) ?? [] }
}

/// Keeps every byte it is shown, in order.
final class ByteRecorder: RestartableObserver {
    var bytes: [UInt8] = []
    /// How many times the download told it to forget what it saw.
    var startedOver = 0
    func observe(_ buffer: UnsafeRawBufferPointer) { bytes.append(contentsOf: buffer) }
    func startOver() {
        bytes.removeAll()
        startedOver += 1
    }
}
