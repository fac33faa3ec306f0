import Foundation
import Platform
import Glibc

/// A WebDAV server written by others, started on loopback for one test with its own
/// configuration in a temporary folder: Apache httpd with mod_dav, or `rclone serve webdav`.
/// Fails loudly, never skips, when the program is missing.
///
/// The WebDAV root is the server's `/`, backed by `root` on disk, with Basic auth for
/// `user`/`password`.
public final class ForeignWebDAVServer: @unchecked Sendable {
    // Sendable by construction: every field is set in init and only read afterwards.
    public enum Kind: String, Sendable {
        case apache, rclone

        /// What the server writes to its log once it listens.
        var readyLine: String {
            switch self {
            case .apache: "resuming normal operations"
            case .rclone: "WebDav Server started on"
            }
        }
    }

    public let kind: Kind
    public let folder = TemporaryFolder("iu-foreign-dav")
    public let port: Int
    public let user: String
    public let password: String
    private var process: ChildProcess?

    /// The files the server serves.
    public var root: String { folder.path + "/www" }
    public var url: String { "http://127.0.0.1:\(port)/" }

    public init(_ kind: Kind, user: String = "alice", password: String = "wonder land") throws {
        self.kind = kind
        self.user = user
        self.password = password
        try FileManager.default.createDirectory(atPath: folder.path + "/www", withIntermediateDirectories: true)
        // A port free a moment ago may be another test's server's by the time this one binds
        // it: the server then exits, and is started again on another port.
        var attempt = 0
        while true {
            attempt += 1
            let port = try LoopbackPort.pick()
            let (program, arguments): (String, [String])
            switch kind {
            case .apache: (program, arguments) = try Self.configureApache(folder: folder.path, port: port, user: user, password: password)
            case .rclone: (program, arguments) = try Self.configureRclone(folder: folder.path, port: port, user: user, password: password)
            }
            let log = folder.path + "/error.log"
            // Each start says for itself whether it serves.
            unlink(log)
            let process = try ChildProcess(program, arguments)
            let errors = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
            let serving: Bool
            do {
                serving = try Self.waitUntilServing(process, port: port, log: log, ready: kind.readyLine, what: kind.rawValue)
            } catch {
                process.stop(grace: 10)
                throw TestFailure("\(error); its log says: \(errors().suffix(2000))")
            }
            if serving {
                self.port = port
                self.process = process
                return
            }
            guard attempt < 3 else { throw TestFailure("\(kind.rawValue) exited on start three times; its log says: \(errors().suffix(2000))") }
        }
    }

    deinit { stop() }

    /// Waits until `process` says in its log that it serves (`ready`), and then accepts
    /// connections on the port: it bound the port itself, so what answers there is this
    /// server. False when it exited first (the port was taken meanwhile). A connection alone
    /// would prove nothing: another program may hold the port, and a connection to a port
    /// nobody listens on can meet itself, the kernel having picked that very port for it.
    static func waitUntilServing(_ process: ChildProcess, port: Int, log: String, ready: String, timeout: Double = 15,
                                 what: String) throws -> Bool {
        let deadline = Date.timeIntervalSinceReferenceDate + timeout
        while Date.timeIntervalSinceReferenceDate < deadline {
            let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if said.contains(ready) {
                try LoopbackPort.waitUntilListening(port, timeout: max(1, deadline - Date.timeIntervalSinceReferenceDate), what: what)
                return true
            }
            guard process.isRunning else { return false }
            usleep(20_000)
        }
        throw TestFailure("\(what) did not say it serves on 127.0.0.1:\(port) within \(Int(timeout)) s")
    }

    public func stop() {
        // Never hang a test on a server that will not stop.
        process?.stop(grace: 10)
    }

    /// Makes a folder under the root directly on disk, writable by the server.
    public func makeFolder(_ relative: String) throws {
        let path = root + "/" + relative
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o777)
    }

    // MARK: Apache httpd

    static func configureApache(folder: String, port: Int, user: String, password: String) throws -> (String, [String]) {
        let binary = "/usr/sbin/apache2"
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw TestFailure("Apache httpd is missing (\(binary)): run `make deps`, which installs the Debian package apache2")
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/htpasswd") else {
            throw TestFailure("htpasswd is missing: install the Debian package apache2-utils (`make deps`)")
        }
        try Shell.run("/usr/bin/htpasswd", ["-c", "-b", "-s", folder + "/htpasswd", user, password])
        for dir in ["lock", "run"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + dir, withIntermediateDirectories: true)
        }
        // As root, Apache's children run as nobody: they must reach the files and the lock database.
        for (path, mode) in [(folder, 0o755), (folder + "/www", 0o777), (folder + "/lock", 0o777), (folder + "/run", 0o777),
                             (folder + "/htpasswd", 0o644)] {
            chmod(path, mode_t(mode))
        }
        let modules = "/usr/lib/apache2/modules"
        let config = """
            ServerRoot "\(folder)"
            ServerName 127.0.0.1
            Listen 127.0.0.1:\(port)
            PidFile "\(folder)/run/httpd.pid"
            DefaultRuntimeDir "\(folder)/run"
            ErrorLog "\(folder)/error.log"
            LogLevel warn
            \(getuid() == 0 ? "User nobody\nGroup nogroup" : "")
            LoadModule mpm_event_module \(modules)/mod_mpm_event.so
            LoadModule authz_core_module \(modules)/mod_authz_core.so
            LoadModule authz_user_module \(modules)/mod_authz_user.so
            LoadModule authn_core_module \(modules)/mod_authn_core.so
            LoadModule authn_file_module \(modules)/mod_authn_file.so
            LoadModule auth_basic_module \(modules)/mod_auth_basic.so
            LoadModule dav_module \(modules)/mod_dav.so
            LoadModule dav_fs_module \(modules)/mod_dav_fs.so
            DavLockDB "\(folder)/lock/DavLock"
            DocumentRoot "\(folder)/www"
            <Directory "\(folder)/www">
                Dav On
                AuthType Basic
                AuthName "instant-upload test"
                AuthUserFile "\(folder)/htpasswd"
                Require valid-user
            </Directory>

            """
        try config.write(toFile: folder + "/httpd.conf", atomically: true, encoding: .utf8)
        return (binary, ["-f", folder + "/httpd.conf", "-DFOREGROUND"])
    }

    // MARK: rclone

    static func configureRclone(folder: String, port: Int, user: String, password: String) throws -> (String, [String]) {
        let binary = "/usr/bin/rclone"
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw TestFailure("rclone is missing (\(binary)): run `make deps`, which installs the Debian package rclone")
        }
        _ = FileManager.default.createFile(atPath: folder + "/rclone.conf", contents: Data())
        return (binary, ["serve", "webdav", folder + "/www", "--addr", "127.0.0.1:\(port)", "--user", user, "--pass", password,
                             "--config", folder + "/rclone.conf", "--log-file", folder + "/error.log",
                             "--cache-dir", folder + "/cache"])
    }
}
