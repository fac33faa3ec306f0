import Platform
import Queue

/// Watch rules in the config file: one `[watch "ID"]` section each.
///
/// ```
/// [watch "camera"]
/// folder = "/home/me/Pictures/Camera"
/// to = "/Photos/Camera"
/// account = "home"
/// pictures = yes
/// videos = yes
/// subfolders = month
/// after_upload = keep
/// wifi_only = no
/// on_ac_power = no
/// existing = no
/// paused = no
/// ```
///
/// `folder` and `to` are required. Neither `pictures` nor `videos` set means both; without
/// `wifi_only` the rule follows its account's Wi-Fi flag.
/// Quoted values may use `\\`, `\"` and `\xHH` escapes, so any folder name can be written.
extension WatchRule {
    /// A rule section that cannot be used, with the line to fix.
    public struct ConfigProblem: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    static let keys: Set<String> = ["folder", "to", "account", "pictures", "videos", "wifi_only", "existing", "subfolders",
                                    "after_upload", "on_ac_power", "paused", "settle_seconds", "fallback_scan_seconds"]

    /// The rules of a config file, in the file's order.
    public static func rules(in ini: IniFile) throws(ConfigProblem) -> [WatchRule] {
        var rules: [WatchRule] = []
        var seen: [String: Int] = [:]
        for section in ini.sections("watch") {
            let rule: WatchRule
            do { rule = try WatchRule(section: section) } catch { throw ConfigProblem(line: error.line, message: error.message) }
            if let first = seen[rule.id] {
                throw ConfigProblem(line: section.headerLine, message: "a second [watch \"\(rule.id)\"] (the first is on line \(first)); give each rule its own name")
            }
            seen[rule.id] = section.headerLine
            rules.append(rule)
        }
        return rules
    }

    /// The rules in a config file's text.
    public static func rules(inConfig text: String) throws(ConfigProblem) -> [WatchRule] {
        let ini: IniFile
        do { ini = try IniFile(parsing: text) } catch { throw ConfigProblem(line: error.line, message: error.message) }
        return try rules(in: ini)
    }

    /// Reads one `[watch "ID"]` section.
    public init(section: IniFile.Section) throws(IniFile.ParseError) {
        let header = section.headerLine
        guard let id = section.name, !id.isEmpty else {
            throw IniFile.ParseError(line: header, message: "a watch rule needs a name: [watch \"camera\"]")
        }
        guard Self.isValidID(id) else {
            throw IniFile.ParseError(line: header, message: "`\(id)` is not a rule name; use letters, digits, `-`, `_` and `.`")
        }
        if let unknown = section.values.keys.sorted().first(where: { !Self.keys.contains($0) }) {
            throw IniFile.ParseError(line: section.lines[unknown] ?? header, message: "unknown setting `\(unknown)` in [watch \"\(id)\"]")
        }
        guard let folder = try section.bytes("folder"), !folder.isEmpty else {
            throw IniFile.ParseError(line: header, message: "[watch \"\(id)\"] needs `folder = \"/path/to/folder\"`")
        }
        guard folder.first == UInt8(ascii: "/") else {
            throw IniFile.ParseError(line: section.lines["folder"] ?? header, message: "`folder` must be an absolute path (starting with /)")
        }
        guard let remote = try section.text("to"), !remote.isEmpty else {
            throw IniFile.ParseError(line: header, message: "[watch \"\(id)\"] needs `to = \"/folder/on/the/server\"`")
        }
        guard !RemotePath.escapesRoot(remote) else {
            throw IniFile.ParseError(line: section.lines["to"] ?? header, message: "`to` must not climb out of the account with `..`")
        }
        let account = try section.text("account")
        self.init(id: id, folder: LocalPath(bytes: folder), remoteFolder: RemotePath.normalize(remote),
                  account: account?.isEmpty == true ? nil : account,
                  media: MediaSelection(pictures: try section.bool("pictures") ?? false, videos: try section.bool("videos") ?? false),
                  wifiOnly: try section.bool("wifi_only"),
                  existing: try section.bool("existing") ?? false,
                  subfolders: try section.choice("subfolders", among: DateSubfolders.allCases.map(\.rawValue)).flatMap(DateSubfolders.init) ?? .none,
                  afterUpload: try section.choice("after_upload", among: AfterUpload.allCases.map(\.rawValue)).flatMap(AfterUpload.init) ?? .keep,
                  onACPower: try section.bool("on_ac_power") ?? false,
                  paused: try section.bool("paused") ?? false,
                  settleSeconds: try section.integer("settle_seconds", in: 1...600) ?? Self.defaultSettleSeconds,
                  fallbackScanSeconds: try section.integer("fallback_scan_seconds", in: 1...86_400) ?? Self.defaultFallbackScanSeconds)
    }

    /// The rule as its config section, every setting written out.
    public var configSection: String {
        func yesNo(_ b: Bool) -> String { b ? "yes" : "no" }
        var lines = [
            "[watch \"\(id)\"]",
            "folder = \(IniFile.quoted(folder.bytes))",
            "to = \(IniFile.quoted(remoteFolder))",
        ]
        if let account { lines.append("account = \(IniFile.quoted(account))") }
        lines += [
            "pictures = \(yesNo(media.pictures))",
            "videos = \(yesNo(media.videos))",
            "subfolders = \(subfolders.rawValue)",
            "after_upload = \(afterUpload.rawValue)",
        ]
        if let wifiOnly { lines.append("wifi_only = \(yesNo(wifiOnly))") }
        lines += [
            "on_ac_power = \(yesNo(onACPower))",
            "existing = \(yesNo(existing))",
            "paused = \(yesNo(paused))",
        ]
        if settleSeconds != Self.defaultSettleSeconds { lines.append("settle_seconds = \(settleSeconds)") }
        if fallbackScanSeconds != Self.defaultFallbackScanSeconds { lines.append("fallback_scan_seconds = \(fallbackScanSeconds)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `config` with this rule's section replaced, or added at the end; everything else kept.
    public func writing(into config: String) throws(ConfigProblem) -> String {
        do { return try IniFile.settingSection("watch", name: id, to: configSection, in: config) } catch {
            throw ConfigProblem(line: error.line, message: error.message)
        }
    }

    /// `config` without the rule `id`; everything else kept.
    public static func removing(_ id: String, from config: String) throws(ConfigProblem) -> String {
        do { return try IniFile.settingSection("watch", name: id, to: nil, in: config) } catch {
            throw ConfigProblem(line: error.line, message: error.message)
        }
    }
}
