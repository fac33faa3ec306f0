import Platform

/// Runs a dialog program (zenity, kdialog) to completion and returns what it said.
struct DialogProcess {
    var executable: String
    var environment: [String: String]

    struct Outcome {
        var status: Int32
        var output: String
        var errors: String
    }

    func run(_ arguments: [String]) throws(PickerFailure) -> Outcome {
        // GTK is chatty on stderr: it is read beside stdout, so neither pipe fills up.
        let finished: ProgramOutput?
        do { finished = try ChildProcess.run(executable, arguments, environment: environment) } catch {
            throw PickerFailure("cannot run \(executable): \(error)")
        }
        return Outcome(status: finished?.status ?? -1, output: finished?.output ?? "", errors: finished?.errors ?? "")
    }

    /// GTK exits 1, as for a cancel, when it cannot reach the display; only its words tell them apart.
    static func couldNotShow(_ errors: String) -> Bool {
        let lowered = errors.lowercased()
        return lowered.contains("cannot open display") || lowered.contains("could not connect to display")
    }

    /// 0: chosen; 1: cancelled or closed; anything else (kdialog aborts without a display):
    /// the program could not show itself.
    func answer(_ outcome: Outcome) throws(PickerFailure) -> String? {
        switch outcome.status {
        case 0:
            var line = outcome.output
            while line.hasSuffix("\n") { line.removeLast() }
            return line
        case 1 where !Self.couldNotShow(outcome.errors):
            return nil
        default:
            let lines = outcome.errors.split(separator: "\n").filter { !$0.contains("Gtk-Message") }
            // Qt names the display it could not reach first, then gives a page of advice about
            // reinstalling that would mislead; other programs say why last.
            let said = lines.first { Self.couldNotShow(String($0)) }.map(String.init) ?? lines.suffix(3).joined(separator: " ")
            throw PickerFailure("\(LocalPath(executable).lastComponent.text) could not show the folder picker (exit \(outcome.status))"
                                + (said.isEmpty ? "" : ": \(DisplayText.escape(said))"))
        }
    }
}
