import Platform

/// The words for a batch the person sent by hand (share-to, `upload`) that has fully
/// arrived: "3 files uploaded to home:/Photos".
public struct UploadedBatch: Sendable, Equatable {
    /// The files' names, in the order they were queued.
    public let fileNames: [String]
    /// The account's name as the person knows it ("home").
    public let account: String
    /// The folder on the server ("/Photos").
    public let folder: String

    /// Nil for an empty batch.
    public init?(fileNames: [String], account: String, folder: String) {
        guard !fileNames.isEmpty else { return nil }
        self.fileNames = fileNames
        self.account = account
        self.folder = folder
    }

    /// "home:/Photos".
    public var destination: String { account + ":" + (folder.hasPrefix("/") ? folder : "/" + folder) }

    /// "IMG_0042.jpg uploaded to home:/Photos", or "3 files uploaded to home:/Photos".
    public var line: String {
        let what = fileNames.count == 1 ? DisplayText.escape(fileNames[0]) : "\(fileNames.count) files"
        return "\(what) uploaded to \(destination)"
    }

    /// For several files, the first three names and how many more: "a.jpg, b.jpg, c.jpg and 2 more".
    public var body: String {
        guard fileNames.count > 1 else { return "" }
        let shown = fileNames.prefix(3).map { DisplayText.escape($0) }.joined(separator: ", ")
        let more = fileNames.count - 3
        return more > 0 ? "\(shown) and \(more) more" : shown
    }

    public var notification: DesktopNotification {
        DesktopNotification(summary: line, body: body, urgency: .normal, icon: "emblem-default", category: "transfer.complete")
    }
}
