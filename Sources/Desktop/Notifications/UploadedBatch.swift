import Platform

/// The words for a batch the person sent by hand (share-to, `upload`) that has fully
/// arrived: "3 files uploaded to home:/Photos".
public struct UploadedBatch: Sendable, Equatable {
    /// How many files arrived.
    public let count: Int
    /// The names of the first few files (at most `namesShown`), in the order they arrived.
    public let firstNames: [String]
    /// The account's name as the person knows it ("home").
    public let account: String
    /// The folder on the server ("/Photos").
    public let folder: String

    /// As many names as the body shows.
    public static let namesShown = 3

    /// `count` files, the first of them named `firstNames`; nil for an empty batch.
    public init?(count: Int, firstNames: [String], account: String, folder: String) {
        guard count > 0, !firstNames.isEmpty else { return nil }
        self.count = count
        self.firstNames = Array(firstNames.prefix(min(count, Self.namesShown)))
        self.account = account
        self.folder = folder
    }

    /// "home:/Photos".
    public var destination: String { account + ":" + (folder.hasPrefix("/") ? folder : "/" + folder) }

    /// "IMG_0042.jpg uploaded to home:/Photos", or "3 files uploaded to home:/Photos".
    public var line: String {
        let what = count == 1 ? DisplayText.escape(firstNames[0]) : "\(DisplayText.grouped(count)) files"
        return "\(what) uploaded to \(destination)"
    }

    /// For several files, the first three names and how many more: "a.jpg, b.jpg, c.jpg and 2 more".
    public var body: String {
        guard count > 1 else { return "" }
        let shown = firstNames.map { DisplayText.escape($0) }.joined(separator: ", ")
        let more = count - firstNames.count
        return more > 0 ? "\(shown) and \(DisplayText.grouped(more)) more" : shown
    }

    public var notification: DesktopNotification {
        DesktopNotification(summary: line, body: body, urgency: .normal, icon: "emblem-default", category: "transfer.complete")
    }
}
