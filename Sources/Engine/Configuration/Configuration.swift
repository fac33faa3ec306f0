import Platform

/// The person's settings from `config.ini`: limits and transfer tuning (watch rules join
/// later). A missing file means defaults; a broken one is an error that names the line.
public struct Configuration: Sendable, Equatable {
    public var uploadSlots = 3
    public var downloadSlots = 3
    public var chunkSizeMB = 16
    public var chunkSeconds = 10
    public var stallSeconds = 30
    public var checkEveryUpload = false
    public var caFile: String?
    /// Start the agent in the background when `upload` or `share-to` finds none running.
    public var autostart = true
    /// Whether `instant-upload tray` shows the status icon (false: it exits at once).
    public var tray = true
    /// Edits of a downloaded file in Local Drive go back as its new version (`download --no-track` says otherwise).
    public var trackEdits = true
    /// Where interfaces are looked up to tell Wi-Fi from wired (tests use a prepared folder).
    public var sysfsRoot = "/sys"

    public init() {}

    public struct Problem: Error, CustomStringConvertible {
        public var file: String
        public var message: String
        public init(file: String, message: String) {
            self.file = file
            self.message = message
        }
        public var description: String {
            "the configuration file \(file) has a problem: \(message)\n  fix that line, or move the file aside to use the defaults"
        }
    }

    /// Reads the config file at `path`; defaults when it does not exist. The folder it is in
    /// must be the person's own: a config can decide which certificate authorities are trusted.
    public static func load(_ path: String) throws -> Configuration {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !folder.isEmpty { try PrivateFolder.check(folder, role: .config) }
        guard FileIO.exists(path) else { return Configuration() }
        let text: String
        do { text = try FileIO.readSmallFile(path) } catch { throw Problem(file: path, message: error.reason) }
        do { return try parse(text, folder: folder) } catch let e as IniFile.ParseError {
            throw Problem(file: path, message: e.description)
        } catch let e as ValueProblem {
            throw Problem(file: path, message: e.description)
        } catch {
            throw Problem(file: path, message: "\(error)")
        }
    }

    struct ValueProblem: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses config text; a relative `ca_file` is taken from `folder`, the config's own.
    static func parse(_ text: String, folder: String = "/") throws -> Configuration {
        let ini = try IniFile(parsing: text)
        var config = Configuration()
        for section in ini.sections {
            func int(_ key: String, _ range: ClosedRange<Int>) throws -> Int? {
                guard let raw = section.values[key] else { return nil }
                guard let value = Int(raw), range.contains(value) else {
                    throw ValueProblem(description: "line \(section.lines[key] ?? 0): `\(key)` must be a whole number from \(range.lowerBound) to \(range.upperBound), not `\(raw)`")
                }
                return value
            }
            func bool(_ key: String) throws -> Bool? {
                guard let raw = section.values[key] else { return nil }
                switch raw.lowercased() {
                case "true", "yes", "on", "1": return true
                case "false", "no", "off", "0": return false
                default: throw ValueProblem(description: "line \(section.lines[key] ?? 0): `\(key)` must be true or false, not `\(raw)`")
                }
            }
            let known: Set<String>
            switch section.kind {
            case "":
                known = []
            case "transfers":
                known = ["uploads", "downloads", "chunk_size_mb", "chunk_seconds", "stall_seconds", "ca_file", "check_every_upload"]
                config.chunkSeconds = try int("chunk_seconds", 1...600) ?? config.chunkSeconds
                config.uploadSlots = try int("uploads", 1...32) ?? config.uploadSlots
                config.downloadSlots = try int("downloads", 1...32) ?? config.downloadSlots
                config.chunkSizeMB = try int("chunk_size_mb", 1...1024) ?? config.chunkSizeMB
                config.stallSeconds = try int("stall_seconds", 1...3600) ?? config.stallSeconds
                config.checkEveryUpload = try bool("check_every_upload") ?? config.checkEveryUpload
                if let ca = section.values["ca_file"], !ca.isEmpty {
                    let path = ca.hasPrefix("/") ? ca : folder + "/" + ca
                    if let problem = CAFile.problem(path) {
                        throw ValueProblem(description: "line \(section.lines["ca_file"] ?? 0): \(problem)")
                    }
                    config.caFile = path
                }
            case "downloads":
                known = ["track_edits"]
                config.trackEdits = try bool("track_edits") ?? config.trackEdits
            case "agent":
                known = ["autostart", "tray"]
                config.autostart = try bool("autostart") ?? config.autostart
                config.tray = try bool("tray") ?? config.tray
            case "network":
                known = ["sysfs_root"]
                if let root = section.values["sysfs_root"], !root.isEmpty { config.sysfsRoot = root }
            case "watch":
                // Watch rules are checked by the watcher's own reader (WatchRule), with the
                // other settings, wherever the config is loaded for a command or the agent.
                known = Set(section.values.keys)
            default:
                throw ValueProblem(description: "unknown section `[\(section.kind)]`")
            }
            if let unknown = section.values.keys.sorted().first(where: { !known.contains($0) }) {
                throw ValueProblem(description: "line \(section.lines[unknown] ?? 0): unknown setting `\(unknown)`" + (section.kind.isEmpty ? " outside any section" : " in [\(section.kind)]"))
            }
        }
        return config
    }

    public var transferSettings: TransferSettings {
        var s = TransferSettings()
        s.chunkSize = Int64(chunkSizeMB) * 1024 * 1024
        s.chunkSeconds = Double(chunkSeconds)
        s.maxChunkSize = max(s.chunkSize, s.maxChunkSize)
        s.stallSeconds = stallSeconds
        s.checkEveryUpload = checkEveryUpload
        s.caFile = caFile
        return s
    }
}
