import Platform

/// What the parser hands a command: the command chosen, and its flags, options and positionals.
public struct ParsedArguments: Sendable, Equatable {
    /// The program and the (sub)command words, e.g. `["instant-upload", "account", "add"]`.
    public var commandPath: [String]
    /// Long names of the flags given, e.g. `["json"]`.
    public var flags: Set<String>
    /// Values of valued options by long name, in the order given.
    public var options: [String: [Argument]]
    /// Positionals by their placeholder name (`FILE`), in the order given.
    public var positionals: [String: [Argument]]

    public init(commandPath: [String], flags: Set<String> = [], options: [String: [Argument]] = [:],
                positionals: [String: [Argument]] = [:]) {
        self.commandPath = commandPath; self.flags = flags; self.options = options; self.positionals = positionals
    }

    /// The words after the program name, e.g. `"account add"`.
    public var command: String { commandPath.dropFirst().joined(separator: " ") }

    /// Whether the flag `--flag` was given.
    public func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The value of `--option` as text, or `nil` when it was not given (the last one if repeated).
    public func value(_ option: String) -> String? { options[option]?.last?.text }

    /// Every value of a repeatable option, as text.
    public func values(_ option: String) -> [String] { (options[option] ?? []).map(\.text) }

    /// The raw value of `--option`, for values that are local paths.
    public func argument(_ option: String) -> Argument? { options[option]?.last }

    /// The value of a `.number` option.
    public func number(_ option: String) -> Int64? { value(option).flatMap { Int64($0) } }

    /// The raw positionals named `name`, bytes intact.
    public func positional(_ name: String) -> [Argument] { positionals[name] ?? [] }

    /// Positionals as text (invalid UTF-8 replaced), for remote paths, URLs, names.
    public func texts(_ name: String) -> [String] { positional(name).map(\.text) }

    /// Positionals as local paths, byte for byte.
    public func paths(_ name: String) -> [LocalPath] { positional(name).map(\.path) }

    /// Positionals of kind `.number`, already checked by the parser.
    public func numbers(_ name: String) -> [Int64] { positional(name).compactMap { Int64($0.text) } }

    /// The single positional `name` as text, e.g. the `NAME` of `account remove NAME`.
    public func text(_ name: String) -> String? { positional(name).first?.text }
}

/// `-h` or `--help` was given: the caller prints `text` on standard output and exits 0.
public struct HelpRequested: Sendable, Equatable {
    public var commandPath: [String]
    public var text: String
}

/// What parsing yields when the arguments fit the command.
public enum ParseOutcome: Sendable, Equatable {
    case run(ParsedArguments)
    case help(HelpRequested)
}
