/// One `--long` (and maybe `-s`) option of a command: a flag, or an option with a value.
public struct OptionSpec: Sendable, Equatable {
    /// The long name without dashes, e.g. `to` for `--to`.
    public var long: String
    /// The short letter without its dash, e.g. `t` for `-t`.
    public var short: Character?
    /// The placeholder shown for the value (`DIR`); `nil` makes this a flag.
    public var valueName: String?
    public var valueKind: ValueKind
    public var help: String
    /// Whether the option may be given more than once; otherwise a second use is an error.
    public var isRepeatable: Bool
    /// Whether the command refuses to run without it.
    public var isRequired: Bool

    public init(long: String, short: Character? = nil, valueName: String? = nil, valueKind: ValueKind = .text,
                help: String, isRepeatable: Bool = false, isRequired: Bool = false) {
        self.long = long; self.short = short; self.valueName = valueName; self.valueKind = valueKind
        self.help = help; self.isRepeatable = isRepeatable; self.isRequired = isRequired
    }

    /// An option that is either there or not, e.g. `--json`.
    public static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, help: help)
    }

    /// An option that takes a value, e.g. `--to DIR`.
    public static func option(_ long: String, short: Character? = nil, value: String, kind: ValueKind = .text, help: String,
                              repeatable: Bool = false, required: Bool = false) -> OptionSpec {
        OptionSpec(long: long, short: short, valueName: value, valueKind: kind, help: help,
                   isRepeatable: repeatable, isRequired: required)
    }

    public var isFlag: Bool { valueName == nil }

    /// `--to`, the way people type and read it.
    public var dashed: String { "--" + long }

    /// `--to DIR` or `--json`, for usage lines.
    var synopsis: String { valueName.map { "\(dashed) \($0)" } ?? dashed }

    /// The option every command has.
    static let help = OptionSpec.flag("help", short: "h", help: "show this help")

    /// `--version` on the programs themselves: prints the version whatever else the line holds.
    static let version = OptionSpec.flag("version", help: "print the version and exit")
}
