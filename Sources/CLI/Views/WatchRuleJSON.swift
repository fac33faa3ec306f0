import Queue
import Watcher

/// One rule for programs: each item of `watch list --json`. Every key is always present,
/// `null` when it does not apply; times are ISO 8601 in UTC.
struct WatchRuleJSON: Encodable {
    var item: WatchListItem

    init(_ item: WatchListItem) { self.item = item }

    struct KeptJSON: Encodable {
        var path: String
        var reason: String
    }

    struct WaitingJSON: Encodable {
        var code: String
        var path: String
        var message: String
        var since: String
        var until: String
    }

    struct HeldJSON: Encodable {
        var code: String
        var message: String
        var action: String
        var count: Int
    }

    enum CodingKeys: String, CodingKey {
        case id, folder, to, account, pictures, videos, subfolders, existing, paused, state, troubles, held, pending, failed, taken
        case baseline, overflows, scans, kept
        case keptCount = "kept_count"
        case waiting
        case waitingCount = "waiting_count"
        case afterUpload = "after_upload"
        case wifiOnly = "wifi_only"
        case wifiOnlyFrom = "wifi_only_from"
        case onACPower = "on_ac_power"
        case watchedFolders = "watched_folders"
        case lastTaken = "last_taken"
        case lastTakenAt = "last_taken_at"
    }

    func encode(to encoder: Encoder) throws {
        let rule = item.rule
        let overview = item.overview
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(rule.id, forKey: .id)
        try c.encode(rule.folder.text, forKey: .folder)
        try c.encode(rule.remoteFolder, forKey: .to)
        try c.encode(item.account?.name ?? rule.account, forKey: .account)
        try c.encode(rule.media.pictures, forKey: .pictures)
        try c.encode(rule.media.videos, forKey: .videos)
        try c.encode(rule.subfolders.rawValue, forKey: .subfolders)
        try c.encode(rule.afterUpload.rawValue, forKey: .afterUpload)
        try c.encode(item.wifiOnly, forKey: .wifiOnly)
        try c.encode(item.wifiOnlyFrom, forKey: .wifiOnlyFrom)
        try c.encode(rule.onACPower, forKey: .onACPower)
        try c.encode(rule.existing, forKey: .existing)
        try c.encode(rule.paused, forKey: .paused)
        try c.encode(item.state, forKey: .state)
        try c.encode(item.troubles, forKey: .troubles)
        try c.encode(overview.held.map { HeldJSON(code: $0.reason.code.rawValue, message: $0.reason.message, action: $0.reason.action, count: $0.count) },
                     forKey: .held)
        try c.encode(overview.pending, forKey: .pending)
        try c.encode(overview.failed, forKey: .failed)
        try c.encode(overview.taken, forKey: .taken)
        try c.encode(overview.baseline, forKey: .baseline)
        try c.encode(overview.lastTaken?.text, forKey: .lastTaken)
        try c.encode(overview.lastTakenAt.map(HumanFormat.iso8601), forKey: .lastTakenAt)
        try c.encode(overview.status?.watchedFolders ?? 0, forKey: .watchedFolders)
        try c.encode(overview.status?.overflows ?? 0, forKey: .overflows)
        try c.encode(overview.status?.scans ?? 0, forKey: .scans)
        try c.encode(overview.kept.map { KeptJSON(path: $0.path.text, reason: $0.reason) }, forKey: .kept)
        try c.encode(overview.keptCount, forKey: .keptCount)
        let held = item.heldBack
        try c.encode(held.files.map { WaitingJSON(code: $0.code, path: $0.path, message: $0.message, since: HumanFormat.iso8601($0.since),
                                                  until: HumanFormat.iso8601($0.until)) }, forKey: .waiting)
        try c.encode(held.count, forKey: .waitingCount)
    }
}
