import Desktop
import Foundation
import Glibc
import Testing
import TestSupport

/// The window backends as programs: what they are asked and how their answers are read.
@Suite("Dialog backends")
struct DialogBackendTests {
    /// A stand-in for kdialog that records its arguments, answers with `answer` and exits with
    /// `status`, as kdialog does (the real one is driven in `KDialogWindowTests`).
    static func fakeKDialog(answer: String, status: Int32) throws -> (TemporaryFolder, String) {
        let folder = TemporaryFolder("iu-kdialog")
        try folder.file("kdialog", bytes: Array("""
            #!/bin/sh
            for a in "$@"; do printf '%s\\n' "$a"; done > "\(folder.path)/arguments"
            printf '%s\\n' '\(answer)'
            exit \(status)

            """.utf8))
        chmod(folder.path + "/kdialog", 0o755)
        return (folder, folder.path + "/kdialog")
    }

    @Test("kdialog is asked with --menu and key/label pairs; its printed key is the answer")
    func kdialogMenu() throws {
        let (folder, program) = try Self.fakeKDialog(answer: "open:1", status: 0)
        let dialog = KDialog(executable: program, environment: ["PATH": "/usr/bin:/bin"])
        let key = try dialog.choose(title: "Send 2 files to home: /", prompt: "Choose a folder",
                                    options: [PickerOption(key: "here", label: "Send here: /"), PickerOption(key: "open:1", label: "-odd/")])
        #expect(key == "open:1")
        let arguments = try String(contentsOfFile: folder.path + "/arguments", encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(arguments == ["--title", "Send 2 files to home: /", "--menu", "<qt>Choose a folder</qt>", "here", "Send here: /", "open:1", " -odd/"])
    }

    @Test("kdialog's texts are escaped rich text: a folder named like markup or with a backslash shows as itself, lines stay lines")
    func kdialogTextIsEscaped() throws {
        let (folder, program) = try Self.fakeKDialog(answer: "", status: 1)
        _ = try KDialog(executable: program, environment: [:]).askText(title: "New folder in /<b>x</b>", prompt: "Now in: /<b>x</b> & a\\nb\nName:")
        let arguments = try String(contentsOfFile: folder.path + "/arguments", encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(arguments.contains("<qt>Now in: /&lt;b&gt;x&lt;/b&gt; &amp; a&#92;nb<br>Name:</qt>"), "\(arguments)")
        #expect(arguments.contains("New folder in /<b>x</b>"), "titles are plain text: \(arguments)")
    }

    @Test("kdialog's cancel (exit 1) is no answer; its failure is a failure")
    func kdialogCancelAndFailure() throws {
        let (kept1, cancelling) = try Self.fakeKDialog(answer: "", status: 1)
        #expect(try KDialog(executable: cancelling, environment: [:]).askText(title: "t", prompt: "p") == nil)
        let (kept2, broken) = try Self.fakeKDialog(answer: "", status: 254)
        defer { withExtendedLifetime((kept1, kept2)) {} }
        #expect(throws: PickerFailure.self) { try KDialog(executable: broken, environment: [:]).choose(title: "t", prompt: "p", options: []) }
    }

    @Test("the real kdialog that cannot reach the display (Qt aborts) is a failure that names the display, not a cancel")
    func kdialogWithoutDisplay() throws {
        let dialog = KDialog(executable: "/usr/bin/kdialog", environment: ["DISPLAY": ":9999", "PATH": "/usr/bin:/bin"])
        #expect {
            try dialog.choose(title: "t", prompt: "p", options: [PickerOption(key: "here", label: "Send here: /")])
        } throws: { error in
            let message = (error as? PickerFailure)?.message ?? ""
            return message.hasPrefix("kdialog could not show the folder picker") && message.contains("could not connect to display :9999")
                && !message.contains("Reinstalling")
        }
    }

    @Test("zenity that cannot reach the display is a failure, not a cancel")
    func zenityWithoutDisplay() throws {
        let dialog = ZenityDialog(executable: "/usr/bin/zenity", environment: ["DISPLAY": ":9999", "PATH": "/usr/bin:/bin"])
        #expect {
            try dialog.choose(title: "t", prompt: "p", options: [PickerOption(key: "here", label: "Send here: /")])
        } throws: { error in
            (error as? PickerFailure)?.message.contains("cannot open display") == true
        }
    }
}
