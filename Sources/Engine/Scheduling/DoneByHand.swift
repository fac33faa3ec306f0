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

    /// A new version sent beside the server's file `name`, which had changed since it was
    /// downloaded, as `copyName`.
    public struct ConflictedCopy: Sendable, Equatable {
        public let name: String
        public let account: String
        public let folder: String
        public let copyName: String
    }

    /// As many names as the notice shows.
    public static let namesKept = 3

    /// In the order their first upload arrived.
    public private(set) var places: [Place] = []
    public private(set) var conflictedCopies: [ConflictedCopy] = []
    private var placeIndex: [String: Int] = [:]

    public init() {}

    public var isEmpty: Bool { places.isEmpty && conflictedCopies.isEmpty }

    /// A transfer done by hand, as completed; a download is not told.
    mutating func add(_ row: Transfer) {
        guard row.direction == .upload else { return }
        let name = String(row.remotePath.split(separator: "/").last ?? "")
        if let of = row.newVersionOf, of != row.remotePath {
            conflictedCopies.append(ConflictedCopy(name: String(of.split(separator: "/").last ?? ""), account: row.accountName,
                                                   folder: row.remoteFolder, copyName: name))
            return
        }
        let key = row.accountName + "\u{0}" + row.remoteFolder
        let index = placeIndex[key] ?? {
            places.append(Place(account: row.accountName, folder: row.remoteFolder))
            placeIndex[key] = places.count - 1
            return places.count - 1
        }()
        places[index].count += 1
        if places[index].firstNames.count < Self.namesKept { places[index].firstNames.append(name) }
    }
}
