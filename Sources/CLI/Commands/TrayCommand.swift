import Desktop
import Engine
import Glibc
import Platform
import Queue

/// `instant-upload tray`: the status icon in the desktop's panel, for the whole session.
///
/// It reads the queue as `status` does, whenever the queue's database or the config file
/// changes (inotify on their folders; at most once a second), and sleeps otherwise. Its menu
/// runs the same code as the commands (`pause --all`, `retry --all-failed`...), whose words
/// go to its log.
enum TrayCommand {
    static func run(context: CommandContext) -> Int32 {
        do {
            guard try context.configuration().tray else {
                Log.info("status icon: turned off in \(context.paths.configFile) (tray = false); exiting")
                return ExitStatus.ok
            }
        } catch {
            // A broken config must not keep the person from seeing that something is wrong.
            Log.warning("status icon: \(error); showing the icon anyway")
        }
        guard let address = StatusIcon.busAddress(in: ProcessEnvironment.current) else {
            Log.info("status icon: no session bus (DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus): there is no panel to show it in; exiting")
            return ExitStatus.ok
        }
        let store: QueueStore
        do {
            try PrivateFolder.prepare(context.paths.stateDirectory, role: .state)
            // Watched for the config file's changes (watch rules paused elsewhere), so it must exist.
            try PrivateFolder.prepare(context.paths.configDirectory, role: .config)
            store = try context.openStore()
        } catch {
            context.complain("\(error)")
            return ExitStatus.environment
        }
        let changes = Changes(watching: [context.paths.stateDirectory, context.paths.configDirectory],
                              names: [Substring(LocalPath(context.paths.queueDatabase).lastComponent.text), "config.ini"])
        let stop = SignalPipe.install([SIGINT, SIGTERM, SIGHUP])
        let quiet = CommandContext(paths: context.paths,
                                   output: { text in text.split(separator: "\n").forEach { Log.info("status icon: \($0)") } },
                                   error: { text in text.split(separator: "\n").forEach { Log.warning("status icon: \($0)") } })
        let actions = TrayActions(context: quiet, store: store)
        let icons = TrayIcons.folder
        let icon = StatusIcon(address: address, changes: changes.descriptor, drain: { changes.drain() }, stop: stop,
                              iconName: icons != nil ? { $0.iconName } : { $0.fallbackIconName },
                              iconThemePath: icons ?? "")
        do {
            let ending = try icon.run(picture: { actions.picture() }, perform: { actions.perform($0) })
            switch ending {
            case .stopped: Log.info("status icon: stopped")
            case .alreadyShown: Log.info("status icon: another `instant-upload tray` shows it on this desktop already; exiting")
            case .busGone: break
            }
            return ExitStatus.ok
        } catch {
            Log.error("status icon: \(error)")
            return ExitStatus.environment
        }
    }

    /// inotify on the folders of the queue and the config: a write to the database (or its
    /// journal) or the config file is a change; the agent's log and the rest are not.
    final class Changes {
        let descriptor: Int32
        private let names: [Substring]

        init(watching folders: [String], names: [Substring]) {
            descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            self.names = names
            let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE)
            for folder in folders where descriptor >= 0 {
                if inotify_add_watch(descriptor, folder, mask) < 0 {
                    Log.debug("status icon: cannot watch \(folder) for changes: \(String(cString: strerror(errno)))")
                }
            }
        }

        deinit { if descriptor >= 0 { close(descriptor) } }

        func drain() -> Bool {
            var relevant = false
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= n {
                    let (mask, length) = buffer.withUnsafeBytes { raw in
                        (raw.load(fromByteOffset: offset + 4, as: UInt32.self), Int(raw.load(fromByteOffset: offset + 12, as: UInt32.self)))
                    }
                    let nameBytes = buffer[(offset + header)..<min(n, offset + header + length)].prefix { $0 != 0 }
                    let name = String(decoding: nameBytes, as: UTF8.self)
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 || names.contains(where: { name.hasPrefix($0) }) { relevant = true }
                    offset += header + length
                }
            }
            return relevant
        }
    }
}

/// Whether the icons `make install` and the package put under hicolor are where a panel
/// looks; without them the icon uses names every icon theme has.
enum TrayIcons {
    /// The `icons` folder that holds them (told to the panel as the item's theme path), or nil.
    static var folder: String? {
        let env = ProcessEnvironment.current
        let home = env["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? ((env["HOME"] ?? "") + "/.local/share")
        let dirs = (env["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        return ([home] + dirs).first { access($0 + "/icons/hicolor/scalable/status/instant-upload-done.svg", R_OK) == 0 }.map { $0 + "/icons" }
    }
}
