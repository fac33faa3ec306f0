import Platform

/// One folder the person asked to have uploaded by itself, as it lives in the config.
public struct WatchRule: Sendable, Equatable {
    /// Which date folders go between the rule's target and the file's name.
    public enum DateSubfolders: String, Sendable, Equatable, CaseIterable {
        case none, year, month, day
    }

    /// What happens to the original once its upload is verified complete.
    public enum AfterUpload: String, Sendable, Equatable, CaseIterable {
        case keep, trash
    }

    /// Stable name, the one `watch remove ID` takes: the config's `[watch "ID"]`.
    public var id: String
    /// The local folder watched (with everything below it).
    public var folder: LocalPath
    /// The folder on the server files go to, e.g. `/Photos/Camera`.
    public var remoteFolder: String
    /// The account's name; nil for the only account there is.
    public var account: String?
    public var media: MediaSelection
    /// Hold this rule's uploads until the way out is unmetered Wi-Fi; nil follows the
    /// account's own Wi-Fi flag (`account add --wifi-only`).
    public var wifiOnly: Bool?
    /// Upload what the folder already held when the rule was added (else that is the baseline).
    public var existing: Bool
    public var subfolders: DateSubfolders
    public var afterUpload: AfterUpload
    /// Hold this rule's uploads while the machine runs on battery.
    public var onACPower: Bool
    public var paused: Bool
    /// Seconds a new file's size and mtime must hold still before it is taken.
    public var settleSeconds: Int
    /// Seconds between scans of a folder that could not get all its inotify watches.
    public var fallbackScanSeconds: Int

    public static let defaultSettleSeconds = SettleWindow.seconds
    public static let defaultFallbackScanSeconds = 300

    public init(id: String, folder: LocalPath, remoteFolder: String, account: String? = nil, media: MediaSelection = .all,
                wifiOnly: Bool? = nil, existing: Bool = false, subfolders: DateSubfolders = .none,
                afterUpload: AfterUpload = .keep, onACPower: Bool = false, paused: Bool = false,
                settleSeconds: Int = WatchRule.defaultSettleSeconds, fallbackScanSeconds: Int = WatchRule.defaultFallbackScanSeconds) {
        self.id = id
        self.folder = folder
        self.remoteFolder = remoteFolder
        self.account = account
        self.media = media
        self.wifiOnly = wifiOnly
        self.existing = existing
        self.subfolders = subfolders
        self.afterUpload = afterUpload
        self.onACPower = onACPower
        self.paused = paused
        self.settleSeconds = settleSeconds
        self.fallbackScanSeconds = fallbackScanSeconds
    }

    /// How the watcher for this rule is set up.
    public var watcherSettings: WatcherSettings {
        WatcherSettings(folder: folder, media: media, settleWindow: .seconds(settleSeconds),
                        fallbackScanInterval: .seconds(fallbackScanSeconds))
    }

    /// IDs are short names a person types: letters, digits, `-`, `_` and `.`.
    public static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 64 && id.first != "." && id.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)
        }
    }

    /// An ID for a new rule on `folder`: its name in lower case with anything else as `-`
    /// ("Camera" → `camera`), then `camera-2`... when taken.
    public static func makeID(for folder: LocalPath, avoiding taken: Set<String>) -> String {
        let name = folder.lastComponent.text.lowercased()
        var base = String(name.unicodeScalars.map { scalar -> Character in
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) ? Character(scalar) : "-"
        })
        while base.contains("--") { base = base.replacing("--", with: "-") }
        base = String(base.trimmingScalars { $0 == "-" }.prefix(40))
        if base.isEmpty { base = "watch" }
        if !taken.contains(base) { return base }
        var n = 2
        while taken.contains("\(base)-\(n)") { n += 1 }
        return "\(base)-\(n)"
    }
}
