import Desktop
import Engine
import FoundationEssentials
import Glibc
import Platform

/// `instant-upload service install|uninstall|status`: the systemd user service that runs
/// the agent at login; and `stop`, which ends the running agent whoever started it.
///
/// Exit statuses: 0 when the service is as asked (or, for `status`, when the question was
/// answered); 3 when the environment stands in the way: no systemd user manager (`install`
/// then writes nothing), `systemctl` failing, or a file that cannot be written.
public enum ServiceCommand {
    public static func run(_ subcommand: String, context: CommandContext) -> Int32 {
        switch subcommand {
        case "install": install(context: context)
        case "uninstall": uninstall(context: context)
        default: status(context: context)
        }
    }

    /// Writes the unit for the running executable, then enables and starts it. Without a
    /// systemd user manager it writes nothing: a unit nobody starts would look installed.
    public static func install(executable: String? = nil, context: CommandContext) -> Int32 {
        let service = UserService(paths: context.paths)
        guard let executable = executable ?? AgentLauncher.agentExecutable() else {
            context.complain("cannot find the instant-upload executable beside this program (/proc/self/exe)")
            return ExitStatus.environment
        }
        if let problem = UserService.problem(withExecutable: executable) {
            context.complain("\(problem); install instant-upload somewhere else (`make install` puts it in ~/.local/bin) and run `service install` from there")
            return ExitStatus.environment
        }
        guard case .available(let systemctl) = service.availability else {
            if case .unavailable(let reason) = service.availability {
                context.complain("systemd user services are not available here: \(reason); nothing was written.")
            }
            context.complain("`share-to` and `upload` start the agent themselves when it is not running, or run it with `instant-upload run`.")
            return ExitStatus.environment
        }
        let outcome: UserService.WriteOutcome
        do { outcome = try service.writeUnit(executable: executable) } catch {
            context.complain("cannot write the service unit: \(error)")
            return ExitStatus.environment
        }
        switch outcome {
        case .created: context.say("wrote \(service.unitPath) (starts \(executable) run)")
        case .updated: context.say("updated \(service.unitPath) (starts \(executable) run)")
        case .unchanged: context.say("\(service.unitPath) is up to date (starts \(executable) run)")
        }
        for step in [["daemon-reload"], ["enable", UserService.unitName]] {
            let result = service.systemctl(systemctl, step)
            guard result.succeeded else { return systemctlFailed(step, result, context: context) }
        }
        if service.systemctl(systemctl, ["is-active", "--quiet", UserService.unitName]).succeeded {
            if outcome == .unchanged {
                context.say("the service is enabled and running; it starts again at login")
                return ExitStatus.ok
            }
            let result = service.systemctl(systemctl, ["restart", UserService.unitName])
            guard result.succeeded else { return systemctlFailed(["restart", UserService.unitName], result, context: context) }
            context.say("restarted the service with the new unit; it starts again at login")
            return ExitStatus.ok
        }
        if let pid = agentPID(context) {
            // Starting now would only meet the running agent's lock, and restart every 5 s.
            context.say("the service is enabled and starts at your next login; an agent is already running now (pid \(pid)), so it was not started twice")
            return ExitStatus.ok
        }
        let result = service.systemctl(systemctl, ["start", UserService.unitName])
        guard result.succeeded else { return systemctlFailed(["start", UserService.unitName], result, context: context) }
        context.say("the service is running and starts again at login (logs: `journalctl --user -u instant-upload`)")
        return ExitStatus.ok
    }

    /// Stops and disables the service, and removes the unit. Queued work stays queued.
    public static func uninstall(context: CommandContext) -> Int32 {
        let service = UserService(paths: context.paths)
        guard service.isInstalled || service.isEnabled else {
            context.say("the service is not installed (\(service.unitPath) does not exist)")
            return ExitStatus.ok
        }
        var systemctl: String?
        if case .available(let path) = service.availability {
            systemctl = path
            let result = service.systemctl(path, ["disable", "--now", UserService.unitName])
            guard result.succeeded else { return systemctlFailed(["disable", "--now", UserService.unitName], result, context: context) }
        }
        do { _ = try service.removeUnit() } catch {
            context.complain("cannot remove the service unit: \(error)")
            return ExitStatus.environment
        }
        if let systemctl { _ = service.systemctl(systemctl, ["daemon-reload"]) }
        context.say("removed \(service.unitPath)\(systemctl != nil ? " and stopped the service" : ""); queued work stays queued")
        if let pid = agentPID(context) {
            context.say("an agent started outside the service is still running (pid \(pid)); it stops when it is told to or at logout")
        }
        return ExitStatus.ok
    }

    /// Says whether the unit is installed, enabled at login, and whether an agent runs.
    public static func status(context: CommandContext) -> Int32 {
        let service = UserService(paths: context.paths)
        let availability = service.availability
        if service.isInstalled {
            let executable = service.installedExecutable
            context.say("installed: yes, \(service.unitPath)" + (executable.map { " (starts \($0) run)" } ?? ""))
            if let executable, access(executable, X_OK) != 0 {
                context.say("warning:   \(executable) is gone; run `instant-upload service install` again from the installed program")
            }
        } else {
            context.say("installed: no (`instant-upload service install` installs it)")
        }
        context.say("enabled:   " + (service.isEnabled ? "yes, starts at login" : "no"))
        if let pid = agentPID(context) {
            context.say("running:   yes, pid \(pid)")
        } else {
            context.say("running:   no agent answers on \(context.paths.controlSocket)")
        }
        switch availability {
        case .available(let systemctl):
            let state = service.systemctl(systemctl, ["is-active", UserService.unitName]).output
            context.say("systemd:   the service is \(state.isEmpty ? "unknown" : state)")
        case .unavailable(let reason):
            context.say("systemd:   user services are not available here: \(reason); `share-to` and `upload` start the agent themselves")
        }
        return ExitStatus.ok
    }

    static func agentPID(_ context: CommandContext) -> Int32? { context.agentPID }

    /// `stop`: the agent ends its transfers at their last checkpoint and exits. Where the
    /// systemd user service runs it, the service is stopped (else systemd would start it
    /// again); it starts again at the next login, or with `service install`. Exits 0 when no
    /// agent runs, 3 when the agent did not end within the wait.
    public static func stopAgent(context: CommandContext, waitSeconds: Double = 30) -> Int32 {
        let service = UserService(paths: context.paths)
        if case .available(let systemctl) = service.availability,
           service.systemctl(systemctl, ["is-active", "--quiet", UserService.unitName]).succeeded {
            let result = service.systemctl(systemctl, ["stop", UserService.unitName])
            guard result.succeeded else { return systemctlFailed(["stop", UserService.unitName], result, context: context) }
            context.say("stopped the service \(UserService.unitName); queued transfers wait and go on from their last checkpoint "
                        + "when it starts again (at login, or `systemctl --user start \(UserService.unitName)`)")
            return ExitStatus.ok
        }
        guard let pid = context.agentPID else {
            context.say("no agent is running")
            return ExitStatus.ok
        }
        guard ControlSocketClient.send("stop", to: context.paths.controlSocket)?.hasPrefix("stopping") == true else {
            context.complain("the agent (pid \(pid)) did not take the request to stop; `kill \(pid)` stops it at its last checkpoint too")
            return ExitStatus.environment
        }
        let deadline = MonotonicClock.seconds() + waitSeconds
        // The process itself where the agent gave its pid, else its socket.
        while pid > 0 ? isAlive(pid) : context.agentRunning {
            guard MonotonicClock.seconds() < deadline else {
                context.complain("the agent (pid \(pid)) is still finishing after \(Int(waitSeconds)) s; it ends by itself, or `kill -9 \(pid)` "
                                 + "ends it at once (its transfers still go on from their last checkpoint)")
                return ExitStatus.environment
            }
            usleep(50_000)
        }
        context.say("stopped the agent (pid \(pid)); queued transfers wait and go on from their last checkpoint when an agent "
                    + "starts again (`instant-upload run`, or the next `upload` or `share-to`)")
        return ExitStatus.ok
    }

    /// True while process `pid` runs; one that ended and waits for its parent (a zombie) does not.
    /// The first thread turns zombie as soon as `exit` is called, while the others are still
    /// being ended: the process has ended only once it is the last one left.
    static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return true }
        let zombie = stat[stat.index(after: end)...].drop { $0 == " " }.first == "Z"
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count) ?? 1
        return !zombie || threads > 1
    }

    static func systemctlFailed(_ arguments: [String], _ result: UserService.SystemctlResult, context: CommandContext) -> Int32 {
        context.complain("`systemctl --user \(arguments.joined(separator: " "))` failed (\(result.status))" +
                         (result.output.isEmpty ? "" : ": \(result.output)"))
        return ExitStatus.environment
    }
}
