/// The command line does not fit the command: what was wrong, and the usage to print with it.
///
/// Callers print `report` on standard error and exit with `exitStatus` (2), the status
/// scripts expect for "you called me wrong", distinct from 1 for "it did not work".
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of mistake, for callers and tests that branch on it.
    public enum Code: String, Sendable, Equatable {
        case unknownOption, missingValue, unexpectedValue, repeatedOption, missingOption, invalidValue
        case missingArgument, unexpectedArgument, unknownCommand, missingCommand, conflict
    }

    public var code: Code
    /// One sentence, e.g. "missing value for `--to`".
    public var message: String
    /// The command the error belongs to, e.g. `["instant-upload", "retry"]`.
    public var commandPath: [String]
    /// The usage lines of that command, each starting with `usage: `.
    public var usage: String

    /// The exit status for a usage error.
    public static let exitStatus: Int32 = 2

    public init(_ code: Code, _ message: String, commandPath: [String], usage: String) {
        self.code = code; self.message = message; self.commandPath = commandPath; self.usage = usage
    }

    public var description: String { message }

    /// What to print (no trailing newline): `program: message`, the usage, and where the full help is.
    public var report: String {
        let program = commandPath.first ?? "instant-upload"
        return """
            \(program): \(message)
            \(usage)
            run `\(commandPath.joined(separator: " ")) --help` for more
            """
    }
}
