import Platform

/// The words for a new version that found the server's copy changed: "report.odt had
/// changed on home:/Documents", your version beside it under its new name.
public struct ConflictedCopy: Sendable, Equatable {
    /// The server file's name, the account's name, its folder, and the copy's name.
    public let name: String
    public let account: String
    public let folder: String
    public let copyName: String

    public init(name: String, account: String, folder: String, copyName: String) {
        self.name = name; self.account = account; self.folder = folder; self.copyName = copyName
    }

    public var notification: DesktopNotification {
        DesktopNotification(summary: "\(DisplayText.escape(name)) had changed on \(account):\(folder)",
                            body: "Your version is beside it as \(DisplayText.escape(copyName)); the server's copy is left alone, and so is your file.",
                            urgency: .normal, icon: "dialog-warning", category: "transfer.complete")
    }
}
