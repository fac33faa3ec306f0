import Glibc
import Platform
import Testing

@Suite("file:// URIs from file managers")
struct FileURITests {
    func decoded(_ uri: String) throws -> [UInt8] { try FileURI.decode(Array(uri.utf8)).bytes }

    @Test("percent escapes become the exact bytes: spaces, %, #, unicode, a newline and bytes that are not UTF-8")
    func escapes() throws {
        #expect(try decoded("file:///home/me/a%20b.jpg") == Array("/home/me/a b.jpg".utf8))
        #expect(try decoded("file:///home/me/100%25.jpg") == Array("/home/me/100%.jpg".utf8))
        #expect(try decoded("file:///home/me/%23tag.jpg") == Array("/home/me/#tag.jpg".utf8))
        #expect(try decoded("file:///home/me/caf%C3%A9.jpg") == Array("/home/me/café.jpg".utf8))
        #expect(try decoded("file:///home/me/new%0Aline.jpg") == Array("/home/me/new\nline.jpg".utf8))
        #expect(try decoded("file:///home/me/caf%E9.jpg") == Array("/home/me/caf".utf8) + [0xe9] + Array(".jpg".utf8))
        #expect(try decoded("file:///home/me/%ff%FE") == Array("/home/me/".utf8) + [0xff, 0xfe])
    }

    @Test("what sloppy senders leave unescaped stays part of the name: a lone %, # and ?")
    func unescaped() throws {
        #expect(try decoded("file:///tmp/50%off.jpg") == Array("/tmp/50%off.jpg".utf8))
        #expect(try decoded("file:///tmp/a%2") == Array("/tmp/a%2".utf8))
        #expect(try decoded("file:///tmp/a#b?c") == Array("/tmp/a#b?c".utf8))
        #expect(try decoded("file:///tmp/ünï") == Array("/tmp/ünï".utf8))
    }

    @Test("local hosts are this computer; the scheme's case does not matter; file:/p is KDE's short form")
    func localForms() throws {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, 255)
        let host = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        #expect(try decoded("file://localhost/tmp/x") == Array("/tmp/x".utf8))
        #expect(try decoded("FILE:///tmp/x") == Array("/tmp/x".utf8))
        #expect(try decoded("file://\(host)/tmp/x") == Array("/tmp/x".utf8))
        #expect(try decoded("file:/tmp/x") == Array("/tmp/x".utf8))
    }

    @Test("a file on another computer is refused, naming the host")
    func remoteHost() {
        #expect {
            try FileURI.decode(Array("file://nas.example.org/share/a.jpg".utf8))
        } throws: { error in
            let problem = error as? FileURI.Problem
            return problem?.message.contains("another computer (nas.example.org)") == true
                && problem?.argument == "file://nas.example.org/share/a.jpg"
        }
    }

    @Test("an encoded NUL and a relative file URI are refused")
    func impossible() {
        #expect(throws: FileURI.Problem.self) { try FileURI.decode(Array("file:///tmp/a%00b".utf8)) }
        #expect(throws: FileURI.Problem.self) { try FileURI.decode(Array("file:relative/x".utf8)) }
    }

    @Test("plain paths pass unchanged, even with a colon; other schemes are refused; an existing file named like a URI is a file")
    func arguments() throws {
        let odd = Array("/tmp/a%20b:c.jpg".utf8) + [0xff]
        #expect(try FileURI.localPath(forArgument: odd).bytes == odd)
        #expect(try FileURI.localPath(forArgument: Array("notes:draft.txt".utf8)).bytes == Array("notes:draft.txt".utf8))
        #expect(try FileURI.localPath(forArgument: Array("file:///tmp/a%20b".utf8)).bytes == Array("/tmp/a b".utf8))
        #expect {
            try FileURI.localPath(forArgument: Array("sftp://host/home/me/a.jpg".utf8))
        } throws: { error in
            (error as? FileURI.Problem)?.message.contains("not a file on this computer (a sftp: address)") == true
        }

        let folder = "/tmp/iu-uri-\(getpid())"
        mkdir(folder, 0o755)
        defer { rmdir(folder + "/file:"); rmdir(folder) }
        mkdir(folder + "/file:", 0o755)
        let cwd = getcwd(nil, 0)!
        defer { chdir(cwd); free(cwd) }
        chdir(folder)
        #expect(try FileURI.localPath(forArgument: Array("file:".utf8)).bytes == Array("file:".utf8))
    }
}

@Suite("Percent-encoding")
struct PercentEncodingTests {
    @Test("every byte goes out and comes back as it was; only unreserved characters (and `/` when kept) stay readable")
    func roundTrip() {
        let all = (0...255).map { UInt8($0) }
        for keepingSlashes in [false, true] {
            let encoded = PercentEncoding.encode(all + Array("/a/b".utf8), keepingSlashes: keepingSlashes)
            #expect(PercentEncoding.decode(ArraySlice(encoded.utf8)) == all + Array("/a/b".utf8))
            #expect(encoded.utf8.allSatisfy { $0 < 0x80 })
            #expect(encoded.hasSuffix(keepingSlashes ? "/a/b" : "%2Fa%2Fb"))
        }
        #expect(PercentEncoding.encode("Été 2024/IMG 1#?.jpg".utf8, keepingSlashes: true) == "%C3%89t%C3%A9%202024/IMG%201%23%3F.jpg")
    }
}
