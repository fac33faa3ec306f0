import Platform

/// The words for files the person just handed over (share-to): "3 files queued to /Photos
/// on alice@host". Shown at once, so the person knows their choice was taken.
public struct QueuedBatch: Sendable, Equatable {
    /// How many files were queued (a folder counts as the files inside it).
    public let count: Int
    /// The single file's name, when there is one.
    public let firstName: String?
    public let folder: String
    public let account: String

    /// Nil for an empty batch.
    public init?(fileNames: [String], folder: String, account: String) {
        guard !fileNames.isEmpty else { return nil }
        count = fileNames.count
        firstName = fileNames.count == 1 ? fileNames[0] : nil
        self.folder = folder.hasPrefix("/") ? folder : "/" + folder
        self.account = account
    }

    /// "IMG_0042.jpg queued to /Photos on home", or "3 files queued to /Photos on home".
    public var line: String {
        let what = firstName.map { DisplayText.escape($0) } ?? "\(DisplayText.grouped(count)) files"
        return "\(what) queued to \(DisplayText.escape(folder)) on \(DisplayText.escape(account))"
    }

    public var notification: DesktopNotification {
        DesktopNotification(summary: line, body: "They upload in the background; `instant-upload status` shows how far they are.",
                            urgency: .low, icon: "document-send", category: "transfer")
    }
}
