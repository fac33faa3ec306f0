import Desktop
import CSystem
import Foundation
import Engine
import Glibc
import Platform

/// Starts `instant-upload run` detached from the calling process, for desktops without
/// a systemd user session.
enum AgentLauncher {
    /// Starts the systemd user service where a user manager runs and knows the unit (from
    /// `service install`, `make install` or the Debian package); false otherwise. Does not
    /// wait for the agent: it reads the queue when it starts.
    static func startService(paths: XDGPaths) -> Bool {
        let service = UserService(paths: paths)
        guard case .available(let systemctl) = service.availability else { return false }
        return service.systemctl(systemctl, ["start", "--no-block", UserService.unitName]).succeeded
    }

    /// Starts the agent in a session of its own. With `waitUntilReady`, waits up to 5 s for
    /// its socket; without, returns at once (share-to must not keep the person waiting).
    static func startDetached(paths: XDGPaths, waitUntilReady: Bool = true) -> Bool {
        guard let executable = agentExecutable() else { return false }
        let logFolder = paths.stateDirectory
        try? PrivateFolder.prepare(logFolder, role: .state)
        // A session of its own, so closing the terminal or the file manager does not take it down.
        // POSIX_SPAWN_SETSID (0x80) is hidden behind _GNU_SOURCE in Glibc's module.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(0x80))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, logFolder + "/agent.log", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        // Nothing else of ours goes with it: a file manager's pipes or a caller's sockets held
        // by a long-lived agent would keep whoever waits for their end waiting.
        csystem_spawn_close_from(&actions, 3)
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(executable), strdup("run"), nil]
        defer { argv.forEach { free($0) } }
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard rc == 0 else { return false }
        guard waitUntilReady else { return true }
        // Wait briefly for the socket so the caller's wake-up is not lost.
        for _ in 0..<50 {
            if ControlSocketClient.send("ping", to: paths.controlSocket) != nil { return true }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return false } // it stopped at once; its log says why
            usleep(100_000)
        }
        return false
    }

    /// `instant-upload` beside the running executable (share-to and the CLI are installed together).
    static func agentExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let me = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let candidate = (me as NSString).deletingLastPathComponent + "/instant-upload"
        return access(candidate, X_OK) == 0 ? candidate : nil
    }
}
