/// The server side of the folder picker: what it can ask of one account's server.
///
/// Paths are absolute within the account (`/Photos/2024`). Errors thrown are shown to the
/// person as they describe themselves, so they should already be in the person's words.
public protocol RemoteFolders {
    /// The names of the folders directly inside `folder` (one level, asked for when shown).
    func subfolders(of folder: String) throws -> [String]
    /// Creates the folder `path`, whose parent exists.
    func makeFolder(_ path: String) throws
}

/// An account as the picker offers it.
public struct PickerAccount {
    /// The account's name as the person knows it ("home", "alice@cloud.example").
    public var name: String
    /// Folders files were recently sent to on this account, most recent first.
    public var recent: [String]
    public var folders: any RemoteFolders

    public init(name: String, recent: [String], folders: any RemoteFolders) {
        self.name = name
        self.recent = recent
        self.folders = folders
    }
}

/// Where the person chose to send the files.
public struct PickedFolder: Sendable, Equatable {
    public var account: String
    public var folder: String
    public init(account: String, folder: String) {
        self.account = account
        self.folder = folder
    }
}
