import Platform

/// One file a rule took: handed to the queue, set aside as the baseline, or recognised as
/// content the rule already took under another name.
public struct TakenFile: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case upload, baseline, duplicate
    }

    public var path: LocalPath
    public var fingerprint: FileFingerprint
    public var kind: Kind
    /// Known once it was hashed (a possible duplicate) or its upload completed.
    public var sha256: String?
    public var transferID: Int64?
    /// For a copy of content whose upload has not completed yet: that upload's row. The
    /// copy is sent itself when that upload fails, goes away (cancelled, cleared) or takes
    /// other content than the copy's.
    public var waitsOn: Int64?

    public init(path: LocalPath, fingerprint: FileFingerprint, kind: Kind, sha256: String? = nil, transferID: Int64? = nil,
                waitsOn: Int64? = nil) {
        self.path = path; self.fingerprint = fingerprint; self.kind = kind; self.sha256 = sha256; self.transferID = transferID
        self.waitsOn = waitsOn
    }
}
