/// The picker as kdialog windows, on KDE Plasma.
public struct KDialog: PickerDialog {
    let process: DialogProcess

    public init(executable: String, environment: [String: String]) {
        process = DialogProcess(executable: executable, environment: environment)
    }

    public func choose(title: String, prompt: String, options: [PickerOption]) throws(PickerFailure) -> String? {
        var arguments = ["--title", title, "--menu", Self.richText(prompt)]
        for option in options { arguments += [option.key, ZenityDialog.cell(option.label)] }
        return try process.answer(process.run(arguments))
    }

    public func askText(title: String, prompt: String) throws(PickerFailure) -> String? {
        try process.answer(process.run(["--title", title, "--inputbox", Self.richText(prompt), ""]))
    }

    public func tell(title: String, message: String) {
        _ = try? process.run(["--title", title, "--error", Self.richText(message)])
    }

    /// kdialog's texts are Qt labels that turn to rich text when they look like HTML, and it
    /// reads `\n` as a line break: a folder named `<b>x</b>` or `a\nb` (as `DisplayText`
    /// writes a newline) would show as something else. Always rich text, everything escaped.
    static func richText(_ text: String) -> String {
        var out = "<qt>"
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\\": out += "&#92;"
            case "\n": out += "<br>"
            default: out.append(c)
            }
        }
        return out + "</qt>"
    }
}
