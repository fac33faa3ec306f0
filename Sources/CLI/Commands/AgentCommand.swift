import Connectivity
import Desktop
import Dispatch
import Engine
import Glibc
import Platform
import Queue
import Transport
import Watcher

/// `instant-upload run`: the agent in the foreground until SIGTERM or SIGINT.
public enum AgentCommand {
    public static func run(untilIdle: Bool = false, context: CommandContext) -> Int32 {
        // SIGTERM and SIGINT stop the agent whenever they come, also in its first moments:
        // held from here, before any thread starts, until the sources below read them.
        Signals.hold([SIGTERM, SIGINT])
        MallocTuning.forLongRunningProcess()
        HTTPSession.prepareLongRunningProcess()
        let configuration: Configuration
        do { configuration = try context.configuration() } catch {
            context.complain("\(error)")
            return ExitStatus.environment
        }
        let secrets = SecretStore(paths: context.paths)
        var options = Agent.Options(paths: context.paths) { account in
            switch secrets.lookup(account: account.name) {
            case .found(let password): .found(Credentials(username: account.username, password: password))
            case .notStored: .notStored
            case .unavailable(let why): .unavailable(why)
            }
        }
        options.uploadSlots = configuration.uploadSlots
        options.downloadSlots = configuration.downloadSlots
        options.settings = configuration.transferSettings
        options.exitWhenIdle = untilIdle
        let classifier = InterfaceClassifier(sysfsRoot: configuration.sysfsRoot)
        let metered = MeteredCheck()
        let monitorBox = MonitorBox()
        options.wifiGate = {
            guard let state = monitorBox.monitor?.state ?? (try? NetworkState.current()) else { return false }
            return NetworkGate(state: state, classifier: classifier, meteredCheck: metered).decision(for: .unmeteredWiFi) == .go
        }
        let agentBox = AgentBox()

        // Instant upload: the rules' watchers start once this agent holds its lock.
        var watchOptions = WatchService.Options(paths: context.paths) { agentBox.agent?.wake() }
        watchOptions.sysfsRoot = configuration.sysfsRoot
        let watchService = WatchService(options: watchOptions)
        options.ruleHold = { rule, account in
            watchService.hold(rule: rule, account: account) {
                guard let state = monitorBox.monitor?.state ?? (try? NetworkState.current()) else { return "the network cannot be read" }
                return NetworkGate(state: state, classifier: classifier, meteredCheck: metered).wifiWait
            }
        }
        options.folderAway = { rule, file, device in watchService.folderAway(rule: rule, file: file, device: device) }
        // Local Drive: edits of downloaded files go back as their new versions.
        let localDrive = LocalDriveWatch(paths: context.paths) { agentBox.agent?.wake() }
        options.onCompleted = { row in
            watchService.uploadCompleted(row)
            if row.direction == .download {
                CrashWindow.downloadCompleted.pauseIfTesting(transfer: row.id)
                localDrive.downloaded(row.localPath)
            } else if row.newVersionOf != nil {
                localDrive.versionSent(row.localPath)
            }
        }
        options.onDownloadPlaced = { localDrive.placed($0, as: $1) }
        options.arriving = {
            let words = [watchService.arriving, localDrive.arriving.map { "Local Drive: \($0)" }].compactMap { $0 }
            return words.isEmpty ? nil : words.joined(separator: "; ")
        }
        options.needsProof = { row in row.watchRule.map { watchService.trashesOriginals(rule: $0) } ?? false }
        options.onDoorbell = { watchService.lookAgain() }
        options.onStarted = {
            do { try watchService.start() } catch { Log.error("the folder watchers cannot start: \(error)") }
            localDrive.start()
            // What start-up ran stays resident for the agent's life otherwise.
            ResidentCode.releaseStartUp()
        }
        defer {
            watchService.stop()
            localDrive.stop()
        }
        let notifications = AgentNotifications(paths: context.paths) { agentBox.agent?.wake() }
        if let notifications {
            options.onAttention = { notifications.attention($0) }
            options.onBatchDone = { notifications.done($0) }
        }
        let agent = Agent(options: options)
        agentBox.agent = agent

        // Connectivity is one gate for the whole queue.
        let monitor = ConnectivityMonitor { state in agent.networkChanged(online: state.isOnline) }
        do {
            try monitor.start()
            monitorBox.monitor = monitor
        } catch {
            Log.warning("cannot watch the network (\(error)); the queue runs as if always online")
        }
        defer { monitor.stop() }

        // A peer that resets a socket must not kill the agent.
        signal(SIGPIPE, SIG_IGN)
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGTERM, SIGINT] {
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { agent.stop() }
            source.resume()
            sources.append(source)
        }
        defer { sources.forEach { $0.cancel() } }
        do {
            try agent.run()
            return ExitStatus.ok
        } catch let e as InstanceLock.AlreadyRunning {
            context.complain(e.description)
            return ExitStatus.environment
        } catch {
            context.complain("the agent cannot start: \(error)")
            return ExitStatus.environment
        }
    }
}

/// Lets the Wi-Fi gate read the monitor that is started after the agent is built.
final class MonitorBox: @unchecked Sendable {
    // Sendable by construction: `monitor` is written once, before the agent runs, and only
    // read afterwards.
    var monitor: ConnectivityMonitor?
}

/// Lets the notification's Retry button wake the agent built after it.
final class AgentBox: @unchecked Sendable {
    // Sendable by construction: `agent` is written once before the agent runs, then only read.
    var agent: Agent?
}
