/// The picker as zenity windows (GNOME, XFCE, Cinnamon, MATE and most others).
public struct ZenityDialog: PickerDialog {
    let process: DialogProcess

    public init(executable: String, environment: [String: String]) {
        process = DialogProcess(executable: executable, environment: environment)
    }

    public func choose(title: String, prompt: String, options: [PickerOption]) throws(PickerFailure) -> String? {
        // A hidden second column carries the key. The label comes first because typing in
        // the list searches the first column: the person types a folder's name to find it.
        var arguments = ["--list", "--title=" + title, "--text=" + Markup.escape(prompt), "--column=Folder", "--column=key",
                         "--hide-column=2", "--print-column=2", "--hide-header", "--width=520", "--height=440"]
        for option in options { arguments += [Self.cell(option.label), option.key] }
        return try process.answer(process.run(arguments))
    }

    public func askText(title: String, prompt: String) throws(PickerFailure) -> String? {
        try process.answer(process.run(["--entry", "--title=" + title, "--text=" + Markup.escape(prompt)]))
    }

    public func tell(title: String, message: String) {
        _ = try? process.run(["--error", "--title=" + title, "--text=" + Markup.escape(message), "--width=420"])
    }

    /// A row's cell is a command-line argument: one starting with `-` would be read as an option.
    static func cell(_ label: String) -> String { label.hasPrefix("-") ? " " + label : label }
}
