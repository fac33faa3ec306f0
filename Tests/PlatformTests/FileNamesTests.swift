import Foundation
import Glibc
import Platform
import Testing

/// The checked calls that make, move and remove names never replace what is there and
/// always say what went wrong.
@Suite("Names in folders, checked")
struct FileNamesTests {
    let folder: String

    init() {
        var template = Array("/tmp/iu-names-XXXXXX".utf8CString)
        folder = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    func file(_ name: String, _ text: String) -> LocalPath {
        _ = FileManager.default.createFile(atPath: folder + "/" + name, contents: Data(text.utf8))
        return LocalPath(folder + "/" + name)
    }

    func text(_ path: LocalPath) -> String? { try? String(contentsOfFile: path.text, encoding: .utf8) }

    @Test("a rename without replacing moves to a free name, and refuses a taken one with EEXIST, leaving both files as they were")
    func renameNoReplace() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ours = file("ours.part", "ours")
        let theirs = file("report.pdf", "theirs")
        let refused = #expect(throws: SystemError.self) { try FileIO.renameNoReplace(ours, to: theirs) }
        #expect(refused?.errno == EEXIST && refused?.operation == "rename")
        #expect(text(theirs) == "theirs" && text(ours) == "ours")

        let free = LocalPath(folder + "/report (1).pdf")
        try FileIO.renameNoReplace(ours, to: free)
        #expect(text(free) == "ours" && !FileIO.nameExists(ours))
    }

    @Test("a link to a taken name is refused with EEXIST and replaces nothing")
    func linkRefusesATakenName() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ours = file("ours.part", "ours")
        let theirs = file("report.pdf", "theirs")
        #expect((#expect(throws: SystemError.self) { try FileIO.link(ours, to: theirs) })?.errno == EEXIST)
        #expect(text(theirs) == "theirs")
        try FileIO.link(ours, to: LocalPath(folder + "/copy"))
        #expect(text(LocalPath(folder + "/copy")) == "ours")
    }

    @Test("unlink says a missing name is missing, unless asked to take that as done")
    func unlinkMissing() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let gone = LocalPath(folder + "/gone")
        #expect((#expect(throws: SystemError.self) { try FileIO.unlink(gone) })?.errno == ENOENT)
        #expect(try FileIO.unlink(gone, ifPresent: true) == false)
        let there = file("there", "x")
        #expect(try FileIO.unlink(there, ifPresent: true) == true)
        #expect(!FileIO.nameExists(there))
    }

    @Test("a dangling link still takes its name")
    func danglingLinkTakesTheName() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let dangling = folder + "/dangling"
        try #require(symlink(folder + "/nowhere", dangling) == 0)
        #expect(FileIO.nameExists(LocalPath(dangling)))
        #expect(!FileIO.exists(dangling), "exists follows the link")
    }

    @Test("fsync and close of a descriptor that is not open fail with EBADF instead of passing unseen")
    func descriptorCallsAreChecked() throws {
        // -1, never a closed number: another test's thread may have been given that one since.
        #expect((#expect(throws: SystemError.self) { try FileIO.fsync(-1) })?.errno == EBADF)
        #expect((#expect(throws: SystemError.self) { try FileIO.close(-1) })?.errno == EBADF)
    }
}

@Suite("Words for a shell")
struct ShellWordTests {
    @Test("a plain path stays as it is; one with spaces or quotes is one single-quoted word that the shell reads back as the path", arguments: [
        "/home/ann/.config/instant-upload/credentials", "/home/ann/My Config/credentials", "/tmp/it's here", "",
    ])
    func quoted(path: String) throws {
        let word = ShellWord.quote(path)
        if !path.isEmpty, !path.contains(" "), !path.contains("'") { #expect(word == path) }
        let echoed = try #require(try ChildProcess.run("/bin/sh", ["-c", "printf %s " + word]))
        #expect(echoed.output == path)
    }
}
