import Foundation
import Glibc
import Testing
import TestSupport
import Transport

@Suite("Downloads over WebDAV with Range and If-Range")
struct DownloadTests {
    @Test("downloads a whole file byte for byte, streaming through the observer")
    func wholeFile() throws {
        let dav = try WebDAVTestServer()
        let content = TestData.bytes(count: 3_000_001, seed: 10)
        let onServer = try dav.put("Videos/clip #1 ü.mp4", content)
        let local = try dav.openLocal("clip.part")
        let recorder = ByteRecorder()

        let result = try dav.client.download("/Videos/clip #1 ü.mp4", to: local.descriptor, observer: recorder)

        #expect(result.kind == .wholeFile)
        #expect(!result.startedOver)
        #expect(result.receivedBytes == 3_000_001)
        #expect(result.fileSize == 3_000_001)
        #expect(result.totalSize == 3_000_001)
        #expect(result.isComplete(listed: nil))
        #expect(result.etag == (try dav.client.properties(of: "/Videos/clip #1 ü.mp4").etag))
        #expect(try TestData.sha256(ofFile: local.path) == TestData.sha256(ofFile: onServer))
        #expect(difference(recorder.bytes, content) == nil)
    }

    @Test("resumes from an offset: the server sends only the rest, and the result is byte-identical")
    func resumes() throws {
        let dav = try WebDAVTestServer()
        let content = TestData.bytes(count: 2_000_000, seed: 11)
        try dav.put("big.bin", content)
        let etag = try #require(try dav.client.properties(of: "/big.bin").etag)
        let half = 1_000_000
        let local = try dav.openLocal("big.bin.part", holding: Array(content[..<half]))
        let recorder = ByteRecorder()

        let result = try dav.client.download("/big.bin", to: local.descriptor, from: Int64(half), ifRange: etag, observer: recorder)

        #expect(result.kind == .resumed)
        #expect(result.receivedBytes == Int64(content.count - half))
        #expect(result.fileSize == Int64(content.count))
        #expect(result.totalSize == Int64(content.count))
        #expect(result.isComplete(listed: nil))
        #expect(result.etag == etag)
        #expect(difference(recorder.bytes, Array(content[half...])) == nil) // only the second half crossed the wire
        #expect(difference(local.bytes, content) == nil)
    }

    @Test("resuming drops whatever a broken attempt left after the offset")
    func staleTail() throws {
        let dav = try WebDAVTestServer()
        let content = TestData.bytes(count: 100_000, seed: 12)
        try dav.put("a.bin", content)
        let etag = try dav.client.properties(of: "/a.bin").etag
        let local = try dav.openLocal("a.part", holding: Array(content[..<40_000]) + [UInt8](repeating: 0xEE, count: 30_000))

        let result = try dav.client.download("/a.bin", to: local.descriptor, from: 40_000, ifRange: etag, observer: nil)

        #expect(result.kind == .resumed)
        #expect(difference(local.bytes, content) == nil)
    }

    @Test("If-Range with an ETag that no longer matches gets the whole new file, which replaces the old bytes")
    func changedFile() throws {
        let dav = try WebDAVTestServer()
        let old = TestData.bytes(count: 500_000, seed: 13)
        try dav.put("doc.pdf", old)
        let oldETag = try #require(try dav.client.properties(of: "/doc.pdf").etag)
        let local = try dav.openLocal("doc.pdf.part", holding: Array(old[..<200_000]))

        // The file changes on the server (same size, other bytes) before the resume.
        let new = TestData.bytes(count: 500_000, seed: 14)
        try dav.put("doc.pdf", new)
        let newETag = try dav.client.properties(of: "/doc.pdf").etag
        #expect(newETag != oldETag)
        let recorder = ByteRecorder()

        let result = try dav.client.download("/doc.pdf", to: local.descriptor, from: 200_000, ifRange: oldETag, observer: recorder)

        #expect(result.kind == .wholeFile)
        #expect(result.startedOver)
        #expect(result.requestedOffset == 200_000)
        #expect(result.receivedBytes == 500_000)
        #expect(result.fileSize == 500_000)
        #expect(result.etag == newETag)
        #expect(difference(local.bytes, new) == nil) // not old[..<200_000] + new: no garbage in front
        #expect(recorder.startedOver == 1, "the observer was not told that the old bytes are gone")
        #expect(difference(recorder.bytes, new) == nil)
        var st = stat()
        fstat(local.descriptor, &st)
        #expect(lseek(local.descriptor, 0, SEEK_CUR) == st.st_size) // positioned at the end
    }

    @Test("a missing file is a 404 and leaves the partial file as it was")
    func missingFile() throws {
        let dav = try WebDAVTestServer()
        let local = try dav.openLocal("gone.part", holding: [1, 2, 3, 4, 5])
        let error = #expect(throws: HTTPStatusError.self) {
            try dav.client.download("/gone.bin", to: local.descriptor, from: 5, ifRange: "\"x\"", observer: nil)
        }
        #expect(error?.status == 404)
        #expect(error?.step == .get)
        #expect(local.bytes == [1, 2, 3, 4, 5]) // the 404 page did not end up in the file

        let fresh = try dav.openLocal("fresh.part")
        #expect((#expect(throws: HTTPStatusError.self) { try dav.client.download("/gone.bin", to: fresh.descriptor) })?.status == 404)
        #expect(fresh.bytes.isEmpty)
    }

    @Test("an error answer keeps the server's words and is cut out of the file")
    func errorBody() throws {
        let dav = try WebDAVTestServer()
        let content = TestData.bytes(count: 10_000, seed: 15)
        try dav.put("f.bin", content)
        let local = try dav.openLocal("f.part", holding: Array(content[..<4_000]))
        try dav.server.fault(["method": "GET", "status": 503, "body": "maintenance until noon", "headers": ["Retry-After": "120"]])

        let error = #expect(throws: HTTPStatusError.self) {
            try dav.client.download("/f.bin", to: local.descriptor, from: 4_000, ifRange: nil, observer: nil)
        }
        #expect(error?.status == 503)
        #expect(error?.retryAfter == "120")
        #expect(error?.serverMessage == "maintenance until noon")
        #expect(difference(local.bytes, Array(content[..<4_000])) == nil)
    }

    @Test("after a reset mid-body the bytes that arrived stay, and a resume from the file's size completes it")
    func resetThenResume() throws {
        let dav = try WebDAVTestServer()
        let content = TestData.bytes(count: 1_500_000, seed: 16)
        let onServer = try dav.put("movie.mkv", content)
        let etag = try dav.client.properties(of: "/movie.mkv").etag
        let local = try dav.openLocal("movie.mkv.part")
        try dav.server.fault(["method": "GET", "reset_after_bytes": 600_000])

        let reset = #expect(throws: TransportError.self) {
            try dav.client.download("/movie.mkv", to: local.descriptor, observer: nil)
        }
        #expect(reset?.kind == .connectionReset)
        // The fault resets after 600 000 bytes; an RST also discards what the kernel had
        // received but curl had not read yet, so fewer may have reached the file.
        let kept = local.bytes
        #expect(kept.count <= 600_000)
        #expect(difference(kept, Array(content[..<kept.count])) == nil)

        let result = try dav.client.download("/movie.mkv", to: local.descriptor, from: Int64(kept.count), ifRange: etag, observer: nil)
        #expect(result.kind == (kept.isEmpty ? .wholeFile : .resumed))
        #expect(result.receivedBytes == Int64(content.count - kept.count))
        #expect(try TestData.sha256(ofFile: local.path) == TestData.sha256(ofFile: onServer))
    }

    @Test("a 200 answered to a Range request that breaks off leaves only its own bytes, from 0, and the resume after it is byte-identical")
    func wholeFileAnswerBrokenOff() throws {
        let dav = try WebDAVTestServer()
        let content = TestData.bytes(count: 2_000_000, seed: 19)
        let onServer = try dav.put("film.mkv", content)
        let etag = try #require(try dav.client.properties(of: "/film.mkv").etag)
        let local = try dav.openLocal("film.mkv.part", holding: Array(content[..<1_200_000]))
        // The server ignores the Range and sends the whole file, and the line drops half way.
        try dav.server.fault(["method": "GET", "ignore_range": true, "reset_after_bytes": 500_000])
        let recorder = ByteRecorder()

        let reset = #expect(throws: TransportError.self) {
            try dav.client.download("/film.mkv", to: local.descriptor, from: 1_200_000, ifRange: etag, observer: recorder)
        }
        #expect(reset?.kind == .connectionReset)
        let kept = local.bytes
        #expect(kept.count <= 500_000, "the 200's bytes went after the old ones: \(kept.count) bytes in the file")
        #expect(difference(kept, Array(content[..<kept.count])) == nil)
        #expect(recorder.startedOver == 1, "the observer was not told to start over")
        #expect(difference(recorder.bytes, kept) == nil, "the observer saw what the file holds, from its first byte")

        let result = try dav.client.download("/film.mkv", to: local.descriptor, from: Int64(kept.count), ifRange: etag, observer: nil)
        #expect(result.kind == (kept.isEmpty ? .wholeFile : .resumed))
        #expect(try TestData.sha256(ofFile: local.path) == TestData.sha256(ofFile: onServer))
    }

    @Test("resuming a file that is already whole needs no bytes (416 with the same size), and the 416's page reaches no observer")
    func alreadyWhole() throws {
        let dav = try WebDAVTestServer()
        let content = TestData.bytes(count: 7_777, seed: 17)
        try dav.put("done.bin", content)
        let etag = try dav.client.properties(of: "/done.bin").etag
        let local = try dav.openLocal("done.part", holding: content)

        // The observer is the running hash: an error page it saw would end up in the digest.
        let seen = ByteRecorder()
        let result = try dav.client.download("/done.bin", to: local.descriptor, from: Int64(content.count), ifRange: etag, observer: seen)

        #expect(seen.bytes.isEmpty, "the observer saw \(seen.bytes.count) bytes of the 416 reply")
        #expect(result.kind == .resumed)
        #expect(result.receivedBytes == 0)
        #expect(result.isComplete(listed: nil))
        #expect(difference(local.bytes, content) == nil)
    }

    @Test("a partial file shorter than the resume offset is refused, not padded")
    func shorterThanOffset() throws {
        let dav = try WebDAVTestServer()
        try dav.put("x.bin", TestData.bytes(count: 1000, seed: 18))
        let local = try dav.openLocal("x.part", holding: [1, 2, 3])
        let error = #expect(throws: TransportError.self) {
            try dav.client.download("/x.bin", to: local.descriptor, from: 500, ifRange: nil, observer: nil)
        }
        #expect(error?.kind == .sinkWrite)
        #expect(local.bytes == [1, 2, 3])
    }

    @Test("the wrong password gets a 401 and writes nothing")
    func unauthorized() throws {
        let dav = try WebDAVTestServer()
        try dav.put("secret.txt", Array("secret".utf8))
        let intruder = WebDAVClient(root: dav.server.webdavURL(), credentials: Credentials(username: "alice", password: "nope"))
        let local = try dav.openLocal("secret.part")
        #expect((#expect(throws: HTTPStatusError.self) { try intruder.download("/secret.txt", to: local.descriptor) })?.status == 401)
        #expect(local.bytes.isEmpty)
    }
}

/// Nil when the two byte arrays are equal, else where they first differ: a readable
/// failure, where comparing megabytes with `==` would print (and diff) them whole.
func difference(_ got: [UInt8], _ expected: [UInt8]) -> String? {
    if got == expected { return nil }
    let common = min(got.count, expected.count)
    let index = (0..<common).first { got[$0] != expected[$0] } ?? common
    return "\(got.count) bytes where \(expected.count) were expected; first difference at byte \(index)"
}

@Suite("Resuming a download only under a strong validator")
struct IfRangeTests {
    /// Asks for `/data.bin` from byte 100 of a partial file under `validator`, and returns the
    /// Range and If-Range headers the server saw and what the download says it did.
    func resume(under validator: String?) throws -> (range: String?, ifRange: String?, result: DownloadResult, bytes: [UInt8]) {
        let server = try HostileServer()
        let client = WebDAVClient(root: server.webdavURL, credentials: Credentials(username: server.user, password: server.password))
        let local = TemporaryFolder("iu-ifrange")
        let file = try LocalFile(path: try local.file("data.bin.part", bytes: [UInt8](repeating: 7, count: 100)))
        let result = try client.download("/data.bin", to: file.descriptor, from: 100, ifRange: validator)
        let get = try #require(try server.rangeHeaders().last { $0.request.hasPrefix("GET ") })
        return (get.range, get.ifRange, result, file.bytes)
    }

    @Test("a strong ETag goes into If-Range with the Range")
    func strongETag() throws {
        let r = try resume(under: "\"abc\"")
        #expect(r.range == "bytes=100-" && r.ifRange == "\"abc\"")
    }

    @Test("a weak ETag falls back to Last-Modified, which the listing carries")
    func weakETagFallsBackToLastModified() throws {
        let modified = Date(timeIntervalSince1970: 784_111_777)
        let item = RemoteItem(path: "/data.bin", isFolder: false, etag: "W/\"abc\"", lastModified: modified)
        let r = try resume(under: item.rangeValidator)
        #expect(r.range == "bytes=100-" && r.ifRange == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test("a weak ETag alone asks for no range: the whole file comes again from zero, nothing stitched")
    func weakETagAloneRestarts() throws {
        let r = try resume(under: "W/\"abc\"")
        #expect(r.range == nil && r.ifRange == nil, "no conditional resume under a weak validator: \(r)")
        #expect(r.result.startedOver && r.result.fileSize == 100_000)
        #expect(r.bytes.count == 100_000 && r.bytes.prefix(100) != [UInt8](repeating: 7, count: 100)[...], "the old bytes are gone")
    }

    @Test("no validator at all restarts from zero the same way")
    func noValidatorRestarts() throws {
        let r = try resume(under: nil)
        #expect(r.range == nil && r.ifRange == nil && r.result.startedOver)
    }
}
