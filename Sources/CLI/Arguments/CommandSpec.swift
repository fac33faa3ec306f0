/// What one command accepts, written down once: the parser checks arguments against it and
/// the help text is printed from it, so the two cannot drift apart.
public struct CommandSpec: Sendable, Equatable {
    /// The word that selects the command (`upload`), or the program name for a root.
    public var name: String
    /// One line for the parent's command list and the top of `--help`.
    public var summary: String
    /// Usage lines without the command path, when the generated one would mislead (a
    /// command with two forms). Empty means: generate it from the options and positionals.
    public var usage: [String]
    /// A paragraph after the summary in `--help`, for what one line cannot say.
    public var discussion: String?
    public var options: [OptionSpec]
    public var positionals: [PositionalSpec]
    /// A command with subcommands takes one of them as its first positional word.
    public var subcommands: [CommandSpec]
    /// How options and positionals must combine, beyond each one's own count.
    public var rules: [Rule]

    public init(name: String, summary: String, usage: [String] = [], discussion: String? = nil, options: [OptionSpec] = [],
                positionals: [PositionalSpec] = [], subcommands: [CommandSpec] = [], rules: [Rule] = []) {
        precondition(subcommands.isEmpty || positionals.isEmpty, "\(name): a command takes subcommands or positionals, not both")
        self.name = name; self.summary = summary; self.usage = usage; self.discussion = discussion
        self.options = options; self.positionals = positionals; self.subcommands = subcommands; self.rules = rules
    }

    /// A combination rule. Names are `--long` for options and the placeholder (`URL`) for positionals.
    public enum Rule: Sendable, Equatable {
        /// Exactly one of these alternatives must be given whole, e.g. `URL`, or `--webdav` and `--tus`.
        case oneOf([[String]])
        /// These two never go together.
        case conflict(String, String)
    }

    /// The direct subcommand called `name`, if any.
    public func subcommand(named name: String) -> CommandSpec? { subcommands.first { $0.name == name } }

    /// The options the parser accepts: the declared ones plus `-h`/`--help`.
    var allOptions: [OptionSpec] { options + [OptionSpec.help] }

    func option(long: String) -> OptionSpec? { allOptions.first { $0.long == long } }
    func option(short: Character) -> OptionSpec? { allOptions.first { $0.short == short } }
}
