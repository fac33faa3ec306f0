import Queue

/// What the transfers a person asked for by hand came to since the last "done" notice, for
/// that notice: per account and folder, how many uploads arrived and the names of the first
/// few; each new version that went beside a server file changed meanwhile, on its own.
/// Counts and a few names rather than the rows, so that a batch of any size costs the agent
/// the same memory (the rows of 10,000 photos came to 5.5 MB).
public struct DoneByHand: Sendable, Equatable {
    /// The uploads that arrived in one folder of one account.
    public struct Place: Sendable, Equatable {
        public let account: String
        public let folder: String
        public fileprivate(set) var count = 0
        /// The names of the first `namesKept`, in the order they arrived.
        public fileprivate(set) var firstNames: [String] = []
    }

    /// As many names as the notice shows.
    public static let namesKept = 3

    private var byPlace: [String: Place] = [:]
    /// New versions that went beside the server's file, which had changed since it was
    /// downloaded: few, each told with its own names.
    public private(set) var conflictedCopies: [Transfer] = []

    public init() {}

    public var isEmpty: Bool { byPlace.isEmpty && conflictedCopies.isEmpty }

    /// By account, then folder.
    public var places: [Place] { byPlace.values.sorted { ($0.account, $0.folder) < ($1.account, $1.folder) } }

    /// A transfer done by hand, as completed; a download is not told.
    mutating func add(_ row: Transfer) {
        guard row.direction == .upload else { return }
        if let of = row.newVersionOf, of != row.remotePath { return conflictedCopies.append(row) }
        let key = row.accountName + "\u{0}" + row.remoteFolder
        var place = byPlace[key] ?? Place(account: row.accountName, folder: row.remoteFolder)
        place.count += 1
        if place.firstNames.count < Self.namesKept { place.firstNames.append(String(row.remotePath.split(separator: "/").last ?? "")) }
        byPlace[key] = place
    }
}
