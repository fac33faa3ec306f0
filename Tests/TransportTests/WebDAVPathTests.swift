import Foundation
import Testing
@testable import Transport

@Suite("WebDAV paths and hrefs")
struct WebDAVPathTests {
    let root = "http://127.0.0.1:8080/dav/alice/"

    @Test("percent-encodes each component: spaces, #, ?, %, + and non-ASCII")
    func encodesComponents() throws {
        #expect(try WebDAVPath.url(root: root, path: "/Photos/IMG 1.jpg", isFolder: false)
                == "http://127.0.0.1:8080/dav/alice/Photos/IMG%201.jpg")
        #expect(try WebDAVPath.url(root: root, path: "/a#b/c?d/100%/x+y;z", isFolder: true)
                == "http://127.0.0.1:8080/dav/alice/a%23b/c%3Fd/100%25/x%2By%3Bz/")
        #expect(try WebDAVPath.url(root: root, path: "/Ünïcødé/日本", isFolder: false)
                == "http://127.0.0.1:8080/dav/alice/%C3%9Cn%C3%AFc%C3%B8d%C3%A9/%E6%97%A5%E6%9C%AC")
        #expect(try WebDAVPath.url(root: root, path: "/", isFolder: true) == root)
        #expect(try WebDAVPath.url(root: "http://h/dav/alice", path: "//x//./y/", isFolder: false) == "http://h/dav/alice/x/y")
    }

    @Test("refuses a path that climbs out of the account with .., or holds a NUL no name can")
    func refusesDotDot() {
        #expect(throws: ProtocolViolation.self) { try WebDAVPath.url(root: root, path: "/a/../../bob", isFolder: false) }
        #expect(throws: ProtocolViolation.self) { try WebDAVPath.url(root: root, path: "/a\0b.jpg", isFolder: false) }
    }

    @Test("decodes hrefs given as paths or absolute URLs, however the server encoded them")
    func decodesHrefs() throws {
        let rootParts = try WebDAVPath.decodedComponents(ofURL: "https://cloud.example/remote.php/dav/files/alice@example.com/")
        #expect(try WebDAVPath.remotePath(href: "/remote.php/dav/files/alice%40example.com/A%20b/%C3%A9%231.txt",
                                          rootComponents: rootParts) == "/A b/é#1.txt")
        #expect(try WebDAVPath.remotePath(href: "https://cloud.example/remote.php/dav/files/alice@example.com/x%2By/",
                                          rootComponents: rootParts) == "/x+y")
        #expect(try WebDAVPath.remotePath(href: "/remote.php/dav/files/alice%40example.com/", rootComponents: rootParts) == "/")
    }

    @Test("an href outside the account, with an encoded slash or .., or a broken escape is a protocol violation")
    func hostileHrefs() throws {
        let rootParts = ["dav", "alice"]
        for href in ["/dav/bob/secret", "/other", "/dav/alice/..%2F..%2Fetc%2Fpasswd", "/dav/alice/%2E%2E/x", "/dav/alice/bad%zz", "/dav/alice/a%00b"] {
            #expect(throws: ProtocolViolation.self, "\(href)") { try WebDAVPath.remotePath(href: href, rootComponents: rootParts) }
        }
    }

    @Test("a slash is a separator even where a prepend mark pulls it into one grapheme with the character before")
    func slashInsideGrapheme() throws {
        #expect(WebDAVPath.components("/a\u{600}/b") == ["a\u{600}", "b"])
        #expect(try WebDAVPath.decodedComponents(ofURL: "http://h\u{600}/dav/alice/x\u{600}/y") == ["dav", "alice", "x\u{600}", "y"])
        // `..` after a prepend mark is still `..`, not part of a name with a slash in it.
        #expect(throws: ProtocolViolation.self) { try WebDAVPath.url(root: root, path: "/x\u{600}/..", isFolder: false) }
    }

    @Test("encoding then decoding gives back every name")
    func roundTrip() throws {
        for name in ["IMG 1.jpg", "a#b?c", "100%", "Straße & Meer", "日本語", "emoji 🎉", "semi;colon=eq", "~tilde", "'quote'"] {
            let url = try WebDAVPath.url(root: root, path: "/" + name, isFolder: false)
            #expect(try WebDAVPath.remotePath(href: url, rootComponents: ["dav", "alice"]) == "/" + name)
        }
    }

    @Test("reads Content-Range headers, refusing impossible ones")
    func contentRange() {
        #expect(ContentRange("bytes 100-999/1000") == ContentRange(first: 100, last: 999, total: 1000))
        #expect(ContentRange("bytes 0-9/*") == ContentRange(first: 0, last: 9, total: nil))
        #expect(ContentRange("bytes */1000") == ContentRange(first: nil, last: nil, total: 1000))
        #expect(ContentRange("bytes 10-5/100") == nil)
        #expect(ContentRange("bytes 0-100/100") == nil)
        #expect(ContentRange("items 0-1/2") == nil)
        #expect(ContentRange("bytes */*") == nil)
    }

    @Test("a Content-Range whose numbers are signed, spaced, fractional or beyond Int64 is refused, never trapped on")
    func hostileContentRange() {
        for header in ["bytes +0-9/10", "bytes -1-9/10", "bytes 0- 9/10", "bytes 0-9/1e3", "bytes 0-9/-10", "bytes 0x0-9/10",
                       "bytes 0-99999999999999999999/*", "bytes 0-9223372036854775807/*", "bytes 99999999999999999999-1/2",
                       "bytes 0-9/99999999999999999999", "bytes 0-9/10/11", "bytes 0--9/10", "bytes */", "bytes -/", ""] {
            #expect(ContentRange(header) == nil, "\(header)")
        }
        #expect(ContentRange("bytes 0-9223372036854775806/*")?.count == Int64.max)
        #expect(ContentRange("bytes 5-9/10")?.count == 5)
    }
}
