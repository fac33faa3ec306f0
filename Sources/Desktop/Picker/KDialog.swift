/// The picker as kdialog windows, on KDE Plasma.
public struct KDialog: PickerDialog {
    let process: DialogProcess

    public init(executable: String, environment: [String: String]) {
        process = DialogProcess(executable: executable, environment: environment)
    }

    public func choose(title: String, prompt: String, options: [PickerOption]) throws(PickerFailure) -> String? {
        var arguments = ["--title", title, "--menu", prompt]
        for option in options { arguments += [option.key, ZenityDialog.cell(option.label)] }
        return try process.answer(process.run(arguments))
    }

    public func askText(title: String, prompt: String) throws(PickerFailure) -> String? {
        try process.answer(process.run(["--title", title, "--inputbox", prompt, ""]))
    }

    public func tell(title: String, message: String) {
        _ = try? process.run(["--title", title, "--error", message])
    }
}
