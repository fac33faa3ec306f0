import Platform

/// Checks a command line against a `CommandSpec` tree.
///
/// Conventions: options may come before, between or after positionals; `--opt value` and
/// `--opt=value`; short flags may be bundled (`-ab`); `--` ends options, so a file named
/// `-x` can be given; `-h`/`--help` anywhere before `--` asks for the help of the deepest
/// command named, even when the rest of the line is wrong.
///
/// A valued option never swallows the next word when that word is `--something` or a known
/// short option: `upload --to --now a.jpg` is "missing value for `--to`", not a folder named
/// `--now`. Such a value is still possible as `--to=--now`.
public enum ArgumentParser {
    /// Parses the words after the program name against `root` and its subcommands.
    ///
    /// Returns `.run` with the arguments, or `.help` when `-h`/`--help` was given; throws
    /// `UsageError` (print its `report`, exit 2) when the line does not fit.
    public static func parse(_ arguments: [Argument], as root: CommandSpec) throws(UsageError) -> ParseOutcome {
        var parser = Parser(arguments: arguments, root: root)
        return try parser.run()
    }

    /// Convenience for tests and for callers that already hold text.
    public static func parse(_ arguments: [String], as root: CommandSpec) throws(UsageError) -> ParseOutcome {
        try parse(arguments.map { Argument($0) }, as: root)
    }
}

private struct Parser {
    let arguments: [Argument]
    var spec: CommandSpec
    var path: [String]
    var flags: Set<String> = []
    var options: [String: [Argument]] = [:]
    var words: [Argument] = []
    let wantsHelp: Bool

    init(arguments: [Argument], root: CommandSpec) {
        self.arguments = arguments
        self.spec = root
        self.path = [root.name]
        let beforeDoubleDash = arguments.prefix { !$0.isDoubleDash }
        wantsHelp = beforeDoubleDash.contains { $0.text == "-h" || $0.text == "--help" }
    }

    mutating func run() throws(UsageError) -> ParseOutcome {
        do {
            try readAll()
            if wantsHelp { return .help(help) }
            return .run(try finish())
        } catch {
            // `--help` wins over whatever else is wrong: the person is asking how to fix it.
            if wantsHelp { return .help(help) }
            throw error
        }
    }

    var help: HelpRequested { HelpRequested(commandPath: path, text: spec.helpText(commandPath: path)) }

    func fail(_ code: UsageError.Code, _ message: String) -> UsageError {
        UsageError(code, message, commandPath: path, usage: spec.usageText(commandPath: path))
    }

    mutating func readAll() throws(UsageError) {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if !optionsEnded, argument.isDoubleDash {
                optionsEnded = true
            } else if !optionsEnded, argument.bytes.starts(with: [UInt8(ascii: "-"), UInt8(ascii: "-")]) {
                try readLong(argument, index: &index)
            } else if !optionsEnded, argument.startsWithDash, argument.bytes.count > 1 {
                try readShort(argument, index: &index)
            } else if !spec.subcommands.isEmpty {
                try enter(argument)
            } else {
                words.append(argument)
            }
        }
    }

    /// Moves down to a subcommand; options seen so far belonged to the parent.
    mutating func enter(_ word: Argument) throws(UsageError) {
        guard let sub = spec.subcommand(named: word.text) else {
            let names = spec.subcommands.map(\.name)
            var message = "unknown command `\(word.display)`"
            if let near = closest(to: word.text, in: names) { message += "; did you mean `\(near)`?" }
            throw fail(.unknownCommand, message)
        }
        spec = sub
        path.append(sub.name)
        flags = []
        options = [:]
    }

    mutating func readLong(_ argument: Argument, index: inout Int) throws(UsageError) {
        let body = Array(argument.bytes.dropFirst(2))
        let equals = body.firstIndex(of: UInt8(ascii: "="))
        let nameBytes = equals.map { Array(body[..<$0]) } ?? body
        let inlineValue = equals.map { Argument(bytes: Array(body[($0 + 1)...])) }
        let name = String(decoding: nameBytes, as: UTF8.self)
        guard let option = spec.option(long: name) else {
            var message = "unknown flag `--\(DisplayText.escape(nameBytes))`"
            if let near = closest(to: name, in: spec.allOptions.map(\.long)) { message += "; did you mean `--\(near)`?" }
            throw fail(.unknownOption, message)
        }
        if option.isFlag {
            if inlineValue != nil { throw fail(.unexpectedValue, "`\(option.dashed)` takes no value") }
            try record(flag: option)
            return
        }
        if let inlineValue {
            try record(option, inlineValue)
            return
        }
        guard index < arguments.count, !looksLikeOption(arguments[index]) else {
            throw fail(.missingValue, "missing value for `\(option.dashed)`")
        }
        try record(option, arguments[index])
        index += 1
    }

    mutating func readShort(_ argument: Argument, index: inout Int) throws(UsageError) {
        // `-abc` is `-a -b -c`; a valued option takes the rest of the word or the next word.
        var position = 1
        while position < argument.bytes.count {
            let byte = argument.bytes[position]
            position += 1
            let letter = Character(Unicode.Scalar(byte))
            guard byte < 0x80, let option = spec.option(short: letter) else {
                throw fail(.unknownOption, "unknown flag `-\(DisplayText.escape([byte]))`")
            }
            if option.isFlag {
                try record(flag: option)
                continue
            }
            if position < argument.bytes.count {
                try record(option, Argument(bytes: Array(argument.bytes[position...])))
                return
            }
            guard index < arguments.count, !looksLikeOption(arguments[index]) else {
                throw fail(.missingValue, "missing value for `\(option.dashed)`")
            }
            try record(option, arguments[index])
            index += 1
            return
        }
    }

    /// Whether a word after a valued option is really the next option, not its value.
    func looksLikeOption(_ argument: Argument) -> Bool {
        if argument.bytes.starts(with: [UInt8(ascii: "-"), UInt8(ascii: "-")]) { return true }
        guard argument.startsWithDash, argument.bytes.count >= 2, argument.bytes[1] < 0x80 else { return false }
        return spec.option(short: Character(Unicode.Scalar(argument.bytes[1]))) != nil
    }

    mutating func record(flag option: OptionSpec) throws(UsageError) {
        if flags.contains(option.long), !option.isRepeatable, option.long != "help" {
            throw fail(.repeatedOption, "`\(option.dashed)` given twice")
        }
        flags.insert(option.long)
    }

    mutating func record(_ option: OptionSpec, _ value: Argument) throws(UsageError) {
        if options[option.long] != nil, !option.isRepeatable {
            throw fail(.repeatedOption, "`\(option.dashed)` given twice")
        }
        try check(value, kind: option.valueKind, for: "`\(option.dashed)`")
        options[option.long, default: []].append(value)
    }

    func check(_ value: Argument, kind: ValueKind, for what: String) throws(UsageError) {
        switch kind {
        case .text:
            return
        case .number:
            let text = value.text
            guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), Int64(text) != nil else {
                throw fail(.invalidValue, "a number expected for \(what), got `\(value.display)`")
            }
        case .choice(let words):
            guard words.contains(value.text) else {
                throw fail(.invalidValue, "\(what) must be one of \(words.joined(separator: ", ")), got `\(value.display)`")
            }
        case .remoteFolder:
            if let problem = RemoteFolderName.problem(value.text) { throw fail(.invalidValue, "\(what): \(problem)") }
        }
    }

    func finish() throws(UsageError) -> ParsedArguments {
        // `--version` needs nothing else: not a command, not the files.
        if flags.contains(OptionSpec.version.long) { return ParsedArguments(commandPath: path, flags: flags) }
        if !spec.subcommands.isEmpty {
            let names = spec.subcommands.map(\.name).joined(separator: ", ")
            throw fail(.missingCommand, "missing command: one of \(names)")
        }
        let positionals = try assignPositionals()
        for option in spec.options where option.isRequired && options[option.long] == nil && !flags.contains(option.long) {
            throw fail(.missingOption, "missing \(option.synopsis)")
        }
        let parsed = ParsedArguments(commandPath: path, flags: flags, options: options, positionals: positionals)
        for rule in spec.rules { try check(rule, parsed) }
        return parsed
    }

    /// Hands the words to the positional slots in order; each takes as many as it may while
    /// leaving enough for the slots after it.
    func assignPositionals() throws(UsageError) -> [String: [Argument]] {
        let slots = spec.positionals
        let needed = slots.reduce(0) { $0 + $1.minCount }
        if words.count < needed {
            var left = words.count
            for slot in slots {
                if left < slot.minCount { throw fail(.missingArgument, "missing \(slot.name)") }
                left -= slot.minCount
            }
        }
        var result: [String: [Argument]] = [:]
        var next = 0
        for (k, slot) in slots.enumerated() {
            let laterMinimum = slots[(k + 1)...].reduce(0) { $0 + $1.minCount }
            let take = min(slot.maxCount ?? Int.max, words.count - next - laterMinimum)
            let taken = Array(words[next..<(next + take)])
            for word in taken { try check(word, kind: slot.kind, for: slot.name) }
            if !taken.isEmpty { result[slot.name] = taken }
            next += take
        }
        if next < words.count {
            throw fail(.unexpectedArgument, "unexpected extra argument `\(words[next].display)`")
        }
        return result
    }

    func check(_ rule: CommandSpec.Rule, _ parsed: ParsedArguments) throws(UsageError) {
        func given(_ name: String) -> Bool {
            if name.hasPrefix("--") {
                let long = String(name.dropFirst(2))
                return parsed.flags.contains(long) || parsed.options[long] != nil
            }
            return !parsed.positional(name).isEmpty
        }
        switch rule {
        case .conflict(let a, let b):
            if given(a) && given(b) { throw fail(.conflict, "`\(a)` and `\(b)` do not go together") }
        case .oneOf(let alternatives):
            let spelled = alternatives.map { $0.joined(separator: " and ") }.joined(separator: ", or ")
            let touched = alternatives.filter { $0.contains(where: given) }
            if touched.count > 1 {
                let clash = touched.map { $0.first(where: given)! }
                throw fail(.conflict, "\(clash.joined(separator: " and ")) do not go together: give \(spelled)")
            }
            guard let chosen = touched.first else { throw fail(.missingArgument, "missing \(spelled)") }
            let absent = chosen.filter { !given($0) }
            if !absent.isEmpty {
                let present = chosen.filter(given)
                throw fail(.missingOption, "\(present.joined(separator: " and ")) also needs \(absent.joined(separator: " and "))")
            }
        }
    }
}

/// The candidate within two edits of `word`, for "did you mean".
func closest(to word: String, in candidates: [String]) -> String? {
    let scored = candidates.map { ($0, editDistance(Array(word), Array($0))) }.filter { $0.1 <= 2 && $0.1 < $0.0.count }
    return scored.min { $0.1 < $1.1 }?.0
}

func editDistance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}
