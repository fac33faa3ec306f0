import Desktop
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
        // A session of its own, so closing the terminal or the file manager does not take it down;
        // nothing of ours goes with it but what it needs (a caller's pipes held by a long-lived
        // agent would keep whoever waits for their end waiting).
        let agent: ChildProcess
        do {
            agent = try ChildProcess(executable, ["run"], error: .file(logFolder + "/agent.log", mode: 0o600), newSession: true)
        } catch {
            return false
        }
        guard waitUntilReady else { return true }
        // Wait briefly for the socket so the caller's wake-up is not lost.
        for _ in 0..<50 {
            if ControlSocketClient.send("ping", to: paths.controlSocket) != nil { return true }
            if !agent.isRunning { return false } // it stopped at once; its log says why
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
        let candidate = LocalPath(me).parent.text + "/instant-upload"
        return access(candidate, X_OK) == 0 ? candidate : nil
    }
}
