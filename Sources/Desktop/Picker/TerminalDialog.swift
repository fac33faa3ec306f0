import Platform

/// The picker as numbered questions on the terminal, for a person without a display.
/// Questions go to standard error, answers come from standard input.
public struct TerminalDialog: PickerDialog {
    var write: (String) -> Void
    var readLine: () -> String?

    public init(write: @escaping (String) -> Void = { StandardStreams.writeError($0) },
                readLine: @escaping () -> String? = { Swift.readLine(strippingNewline: true) }) {
        self.write = write
        self.readLine = readLine
    }

    public func choose(title: String, prompt: String, options: [PickerOption]) throws(PickerFailure) -> String? {
        var text = "\n\(title)\n\(prompt)\n"
        for (index, option) in options.enumerated() {
            let number = String(index + 1)
            text += String(repeating: " ", count: max(0, 3 - number.count)) + number + ") " + option.label + "\n"
        }
        write(text)
        while true {
            write("Number (q to cancel): ")
            guard let line = readLine()?.trimmingBlanks() else { return nil }
            if line == "q" || line == "Q" { return nil }
            if let n = Int(line), (1...options.count).contains(n) { return options[n - 1].key }
            write("Type a number from 1 to \(options.count), or q to cancel.\n")
        }
    }

    public func askText(title: String, prompt: String) throws(PickerFailure) -> String? {
        write("\n\(title)\n\(prompt) (empty to go back) ")
        guard let line = readLine(), !line.trimmingBlanks().isEmpty else { return nil }
        return line
    }

    public func tell(title: String, message: String) {
        write("\(title): \(message)\n")
    }
}
