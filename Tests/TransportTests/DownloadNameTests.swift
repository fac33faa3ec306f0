import Testing
import Transport

@Suite("Download names")
struct DownloadNameTests {
    @Test("a path from the server stays one name in the download folder")
    func slashes() {
        #expect(DownloadName.sanitize("../../etc/passwd") == "_.._etc_passwd")
        #expect(DownloadName.sanitize("/etc/passwd") == "_etc_passwd")
        #expect(DownloadName.sanitize("Photos/IMG 1.jpg") == "Photos_IMG 1.jpg")
        #expect(!DownloadName.sanitize("a/b/c").contains("/"))
    }

    @Test(". and .. and names of only dots become 'download'")
    func dots() {
        for name in [".", "..", "...", "", "   ", " . "] {
            #expect(DownloadName.sanitize(name) == "download", "\(name.debugDescription)")
        }
    }

    @Test("leading dots that would hide the file are stripped")
    func hidden() {
        #expect(DownloadName.sanitize(".bashrc") == "bashrc")
        #expect(DownloadName.sanitize("...profile.txt") == "profile.txt")
        #expect(DownloadName.sanitize(" .hidden") == "hidden")
        // A dot with a combining mark is one Character but still starts the name with '.'.
        #expect(DownloadName.sanitize(".\u{301}x").utf8.first != UInt8(ascii: "."))
        #expect(DownloadName.sanitize("not.hidden.") == "not.hidden.")
    }

    @Test("control characters, NUL and bidi overrides cannot reach the file system")
    func controls() {
        #expect(DownloadName.sanitize("a\nb") == "a_b")
        #expect(DownloadName.sanitize("a\0b") == "a_b")
        #expect(DownloadName.sanitize("bell\u{7}\u{1b}[31mred") == "bell__[31mred")
        #expect(DownloadName.sanitize("c1\u{85}x\u{7f}") == "c1_x_")
        #expect(DownloadName.sanitize("invoice\u{202E}gpj.exe") == "invoice_gpj.exe")
        #expect(DownloadName.sanitize("tab\there") == "tab_here")
    }

    @Test("ordinary names, non-ASCII and spaces inside pass unchanged")
    func ordinary() {
        for name in ["IMG_0042.JPG", "Straße & Meer.jpg", "日本語のファイル.pdf", "emoji 🎉.png", "a (1).txt", "x"] {
            #expect(DownloadName.sanitize(name) == name)
        }
    }

    @Test("a 300-byte name is cut on a UTF-8 boundary, keeps its extension, and leaves room for .part")
    func longNames() {
        let ascii = String(repeating: "a", count: 296) + ".jpg"
        let cut = DownloadName.sanitize(ascii)
        #expect(cut.utf8.count == 250)
        #expect(cut.hasSuffix(".jpg"))
        #expect((cut + DownloadName.partSuffix).utf8.count <= 255)

        // 3-byte characters: 100 of them are 300 bytes; the cut must not split one.
        let wide = String(repeating: "日", count: 100)
        let cutWide = DownloadName.sanitize(wide)
        #expect(cutWide.utf8.count <= 250)
        #expect(cutWide.utf8.count % 3 == 0)
        #expect(cutWide.allSatisfy { $0 == "日" })

        // One grapheme of 301 bytes (a letter with 150 combining marks) is cut between scalars.
        let zalgo = "e" + String(repeating: "\u{301}", count: 150)
        let cutZalgo = DownloadName.sanitize(zalgo)
        #expect(!cutZalgo.isEmpty && cutZalgo.utf8.count <= 250)
        #expect(String(validating: Array(cutZalgo.utf8), as: UTF8.self) != nil)

        // A very long "extension" is just part of the name.
        let longExt = "a." + String(repeating: "b", count: 300)
        #expect(DownloadName.sanitize(longExt).utf8.count <= 250)
    }

    @Test("a free name is used as it is")
    func freeName() {
        #expect(DownloadName.available(in: "/d", preferred: "photo.jpg", exists: { _ in false }) == "photo.jpg")
    }

    @Test("taken names get (1), (2)… before the extension, like a browser")
    func numbered() {
        var taken: Set<String> = ["/d/photo.jpg"]
        #expect(DownloadName.available(in: "/d", preferred: "photo.jpg", exists: taken.contains) == "photo (1).jpg")
        taken.insert("/d/photo (1).jpg")
        #expect(DownloadName.available(in: "/d/", preferred: "photo.jpg", exists: taken.contains) == "photo (2).jpg")
        taken = ["/d/README"]
        #expect(DownloadName.available(in: "/d", preferred: "README", exists: taken.contains) == "README (1)")
        taken = ["/d/backup.tar.gz"]
        #expect(DownloadName.available(in: "/d", preferred: "backup.tar.gz", exists: taken.contains) == "backup.tar (1).gz")
    }

    @Test("a .part sibling counts as taken: another download is on its way there")
    func partTaken() {
        let taken: Set<String> = ["/d/movie.mkv.part", "/d/movie (1).mkv"]
        #expect(DownloadName.available(in: "/d", preferred: "movie.mkv", exists: taken.contains) == "movie (2).mkv")
    }

    @Test("the hostile name is sanitized before it is checked")
    func sanitizedFirst() {
        var asked: [String] = []
        let name = DownloadName.available(in: "/d", preferred: "../.bashrc", exists: { asked.append($0); return false })
        #expect(name == "_.bashrc")
        #expect(asked.allSatisfy { $0.hasPrefix("/d/") && !$0.dropFirst(3).contains("/") })
    }

    @Test("a numbered long name still fits with .part")
    func numberedLong() {
        let long = String(repeating: "é", count: 140) + ".jpeg" // 285 bytes
        let first = DownloadName.sanitize(long)
        let next = DownloadName.available(in: "/d", preferred: long, exists: { $0 == "/d/" + first })
        #expect(next.hasSuffix(" (1).jpeg"))
        #expect((next + ".part").utf8.count <= 255)
        #expect(next != first)
    }
}
