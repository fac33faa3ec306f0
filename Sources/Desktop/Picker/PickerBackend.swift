import Glibc
import Platform

/// Chooses how to ask: a window when there is a display (kdialog first on KDE, zenity
/// first elsewhere, whichever is installed), else a prompt when standard input is a terminal.
public enum PickerBackend {
    /// Why no picker can be shown; the caller asks for `--to` instead.
    public struct Unavailable: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    public static func dialog(environment: [String: String], inputIsTerminal: Bool = isatty(0) == 1) -> Result<any PickerDialog, Unavailable> {
        let hasDisplay = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        if hasDisplay {
            for program in preferredPrograms(desktop: environment["XDG_CURRENT_DESKTOP"]) {
                guard let path = ChildProcess.find(program, path: environment["PATH"]) else { continue }
                return .success(program == "kdialog" ? KDialog(executable: path, environment: environment)
                                                     : ZenityDialog(executable: path, environment: environment))
            }
        }
        if inputIsTerminal { return .success(TerminalDialog()) }
        return .failure(Unavailable(description: hasDisplay
            ? "no program to show the folder picker with: install zenity (or kdialog on KDE), or give the folder with --to DIR"
            : "no display to show the folder picker on and no terminal to ask on: give the folder with --to DIR"))
    }

    /// `XDG_CURRENT_DESKTOP` is a colon-separated list, e.g. `ubuntu:GNOME` or `KDE`.
    static func preferredPrograms(desktop: String?) -> [String] {
        let desktops = (desktop ?? "").split(separator: ":").map { $0.uppercased() }
        let qt = desktops.contains { $0 == "KDE" || $0 == "LXQT" || $0 == "TRINITY" }
        return qt ? ["kdialog", "zenity"] : ["zenity", "kdialog"]
    }
}
