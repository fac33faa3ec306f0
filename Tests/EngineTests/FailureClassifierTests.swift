import Engine
import Glibc
import Platform
import Queue
import Testing
import Transport

@Suite("The failure classifier knows which way the bytes go")
struct FailureClassifierTests {
    @Test("a 404 means the file is gone for a download, the folder for an upload")
    func notFound() {
        let onServer = HTTPStatusError(step: .propfind, status: 404)
        #expect(FailureClassifier.classify(onServer, direction: .download).reason.code == .sourceMissing)
        #expect(FailureClassifier.classify(HTTPStatusError(step: .create, status: 404), direction: .upload).reason.code == .targetMissing)
    }

    @Test("a local file error is the source for an upload, the download folder for a download")
    func localFiles() {
        let gone = SystemError("open", errno: ENOENT, path: "/x")
        #expect(FailureClassifier.classify(gone, direction: .upload).reason.code == .sourceMissing)
        #expect(FailureClassifier.classify(SystemError("open", errno: ENOSPC, path: "/d"), direction: .download).reason.code == .localWrite)
    }

    @Test("a 409 to a PATCH is about that upload's offset, not the server: it does not count towards the server being down")
    func offsetConflictIsThisFileOnly() {
        let conflict = FailureClassifier.classify(HTTPStatusError(step: .patch, status: 409))
        #expect(conflict.isTransient && !conflict.saysServerFails, "\(conflict)")
        for status in [500, 502, 504] {
            #expect(FailureClassifier.classify(HTTPStatusError(step: .patch, status: status)).saysServerFails)
        }
    }

    @Test("a Retry-After is read strictly: a wait within the hour is kept and shown as the server gave it")
    func retryAfterKept() {
        let c = FailureClassifier.classify(HTTPStatusError(step: .patch, status: 429, retryAfter: "120"), now: 1_700_000_000_000)
        #expect(c.reason.code == .serverBusy && c.retryAfter == 120)
        #expect(c.reason.message.hasSuffix("; it asked to wait 120 s") && c.reason.detail == "Retry-After: 120", "\(c.reason)")
    }

    @Test("a Retry-After of zero or a date gone by names no wait: the backoff decides, never an instant retry")
    func retryAfterZero() {
        for text in ["0", "Sun, 06 Nov 1994 08:49:37 GMT"] {
            let c = FailureClassifier.classify(HTTPStatusError(step: .patch, status: 503, retryAfter: text), now: 1_700_000_000_000)
            #expect(c.reason.code == .maintenance && c.retryAfter == nil, "\(text): \(c)")
        }
    }

    @Test("a Retry-After beyond an hour is capped at one hour, and the reason says what was asked")
    func retryAfterCapped() {
        for text in ["99999999999999999999999", "86400", "Fri, 31 Dec 9999 23:59:59 GMT"] {
            let c = FailureClassifier.classify(HTTPStatusError(step: .patch, status: 503, retryAfter: text), now: 1_700_000_000_000)
            #expect(c.reason.code == .maintenance && c.retryAfter == 3600, "\(text): \(c)")
            #expect(c.reason.message.contains(text) && c.reason.message.contains("1 h"), "\(c.reason.message)")
        }
    }

    @Test("a Retry-After no server sends (inf, 1e300, -1) makes the answer a protocol failure quoting it, never a trap")
    func retryAfterRefused() {
        for text in ["inf", "1e300", "-1", "nan", "soon"] {
            let c = FailureClassifier.classify(HTTPStatusError(step: .discover, status: 503, retryAfter: text, serverMessage: "down"))
            #expect(c.reason.code == .protocol && !c.isTransient, "\(text): \(c)")
            #expect(c.reason.message.contains("`\(text)`") && c.reason.detail == "Retry-After: \(text)", "\(c.reason)")
        }
    }

    @Test("whatever wait a classification is given, it keeps one that is finite and within the hour")
    func classificationClamps() {
        #expect(Classification(reason: Reason(.serverBusy), retryAfter: .infinity).retryAfter == 3600)
        #expect(Classification(reason: Reason(.serverBusy), retryAfter: 1e300).retryAfter == 3600)
        #expect(Classification(reason: Reason(.serverBusy), retryAfter: -5).retryAfter == 0)
        #expect(Classification(reason: Reason(.serverBusy), retryAfter: .nan).retryAfter == nil)
        #expect(Classified(Reason(.sourceChanged), retryAfter: -.infinity).classification.retryAfter == 0)
    }

    @Test("a protocol violation keeps the server's own words as the reason's detail")
    func violationDetail() {
        let c = FailureClassifier.classify(ProtocolViolation("the server sent Upload-Offset `x`", said: "Upload-Offset: x"))
        #expect(c.reason.code == .protocol && c.reason.detail == "Upload-Offset: x")
    }
}
