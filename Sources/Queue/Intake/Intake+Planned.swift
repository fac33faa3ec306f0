import Platform

/// Files whose remote path is already decided (a watch rule's date folders), checked and
/// queued like any other.
extension Intake {
    /// One file and where it goes.
    public struct PlannedUpload: Sendable, Equatable {
        public var file: LocalPath
        public var remotePath: String
        /// See `Transfer.takenNote`: kept only while the file is still `noteIsAbout` when it
        /// is queued (a copy that went on meanwhile may have made it whole).
        public var takenNote: String?
        public var noteIsAbout: FileFingerprint?

        public init(file: LocalPath, remotePath: String, takenNote: String? = nil, about fingerprint: FileFingerprint? = nil) {
            self.file = file
            self.remotePath = remotePath
            self.takenNote = takenNote
            self.noteIsAbout = fingerprint
        }
    }

    /// What became of one planned file: its row and the fingerprint recorded with it, or
    /// why it was refused.
    public typealias PlannedOutcome = Swift.Result<(id: Int64, fingerprint: FileFingerprint), Refusal>

    /// Checks each of `items` and queues the good ones in one transaction (nested in the
    /// caller's, if it has one). The outcomes are in the order of `items`.
    public static func enqueuePlanned(_ items: [PlannedUpload], account: Account, origin: Origin, watchRule: String?,
                                      store: QueueStore) throws -> [PlannedOutcome] {
        var outcomes: [PlannedOutcome] = items.map { .failure(Refusal(path: $0.file, problem: "not looked at")) }
        var good: [(index: Int, fingerprint: FileFingerprint, transfer: NewTransfer)] = []
        for (index, item) in items.enumerated() {
            switch checkedStatus(item.file) {
            case .failure(let refusal):
                outcomes[index] = .failure(refusal)
            case .success(let st):
                let fingerprint = FileFingerprint(st)
                good.append((index, fingerprint, NewTransfer(direction: .upload, origin: origin, accountID: account.id, localPath: item.file.absolute(),
                                                remotePath: RemotePath.normalize(item.remotePath), bytesTotal: fingerprint.size,
                                                fingerprint: fingerprint, changeTime: st.st_ctim.nanoseconds, watchRule: watchRule,
                                                takenNote: item.noteIsAbout == fingerprint ? item.takenNote : nil)))
            }
        }
        let ids = try store.enqueue(good.map(\.transfer))
        for (entry, id) in zip(good, ids) {
            outcomes[entry.index] = .success((id, entry.fingerprint))
        }
        return outcomes
    }
}
