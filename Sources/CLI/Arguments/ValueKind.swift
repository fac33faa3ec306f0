/// What an option value or a positional argument must look like; checked while parsing,
/// so a command never sees `abc` where it needs an ID.
public enum ValueKind: Sendable, Equatable {
    /// Any bytes at all (file names, folders, URLs).
    case text
    /// A whole number of zero or more, such as a transfer ID.
    case number
    /// One word from a fixed list, such as `completed|failed|all`.
    case choice([String])
    /// A folder on the server: not empty or blank, and never above the account's top.
    case remoteFolder
}
