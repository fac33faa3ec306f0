import FoundationEssentials

/// The folders a person recently sent files to, per account, most recent first: what the
/// folder picker offers before anything else.
///
/// Kept in the queue database's `agent_state` table under one key per account, so they
/// survive restarts and `clear completed` without a schema change.
public struct RecentTargets {
    /// How many folders each account remembers.
    public static let limit = 8

    let store: QueueStore

    public init(store: QueueStore) { self.store = store }

    /// The id and the name: ids of removed accounts can be given again, to another account.
    static func key(_ account: Account) -> String { "recent_targets:\(account.id):\(account.name)" }

    /// The account's recent folders, most recent first; empty when none (or unreadable).
    public func folders(for account: Account) -> [String] {
        guard let text = try? store.agentValue(Self.key(account)),
              let folders = try? JSONDecoder().decode([String].self, from: Data(text.utf8)) else { return [] }
        return folders
    }

    /// Puts `folder` first in the account's list, dropping an older mention and the oldest
    /// beyond the limit.
    public func record(_ folder: String, for account: Account) throws {
        let normalized = RemotePath.normalize(folder)
        var folders = folders(for: account).filter { $0 != normalized }
        folders.insert(normalized, at: 0)
        let data = try JSONEncoder().encode(Array(folders.prefix(Self.limit)))
        try store.setAgentValue(Self.key(account), String(decoding: data, as: UTF8.self))
    }
}
