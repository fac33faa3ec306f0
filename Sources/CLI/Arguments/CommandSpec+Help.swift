extension CommandSpec {
    /// The usage lines, generated from the spec unless `usage` spells them out.
    public func usageLines(commandPath: [String]) -> [String] {
        let prefix = commandPath.joined(separator: " ")
        if !usage.isEmpty { return usage.map { "\(prefix) \($0)" } }
        var words = [prefix]
        if !subcommands.isEmpty {
            words.append(subcommands.count <= 4 ? subcommands.map(\.name).joined(separator: "|") : "COMMAND")
        }
        for option in options {
            let word = option.synopsis + (option.isRepeatable ? "..." : "")
            words.append(option.isRequired ? word : "[\(word)]")
        }
        words += positionals.map(\.synopsis)
        return [words.joined(separator: " ")]
    }

    /// `usage: ...` with any further forms on `   or: ...` lines, as printed after an error.
    public func usageText(commandPath: [String]) -> String {
        usageLines(commandPath: commandPath).enumerated()
            .map { ($0.offset == 0 ? "usage: " : "   or: ") + $0.element }
            .joined(separator: "\n")
    }

    /// The whole `--help` page (no trailing newline): usage, summary, arguments, options, subcommands.
    public func helpText(commandPath: [String], width: Int = 80) -> String {
        var sections = [usageText(commandPath: commandPath), TextLayout.wrap(summary, width: width)]
        if let discussion { sections.append(TextLayout.wrap(discussion, width: width)) }
        if !positionals.isEmpty {
            let rows = positionals.map { slot -> (String, String) in
                var help = slot.help
                if case .choice(let words) = slot.kind, !help.contains(words[0]) { help += " (\(words.joined(separator: ", ")))" }
                return (String(slot.synopsis.filter { $0 != "[" && $0 != "]" }), help)
            }
            sections.append("arguments:\n" + TextLayout.table(rows, width: width))
        }
        let optionRows = allOptions.map { option -> (String, String) in
            let short = option.short.map { "-\($0), " } ?? "    "
            var help = option.help
            if case .choice(let words) = option.valueKind { help += " (\(words.joined(separator: ", ")))" }
            if option.isRequired { help += " (required)" }
            if option.isRepeatable { help += " (may be repeated)" }
            return (short + option.synopsis, help)
        }
        sections.append("options:\n" + TextLayout.table(optionRows, width: width))
        if !subcommands.isEmpty {
            sections.append("commands:\n" + TextLayout.table(subcommands.map { ($0.name, $0.summary) }, width: width))
            let path = commandPath.joined(separator: " ")
            sections.append("Run `\(path) COMMAND --help` for the options of one command.")
        }
        return sections.joined(separator: "\n\n")
    }
}
