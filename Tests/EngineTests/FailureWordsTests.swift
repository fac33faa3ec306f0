import Engine
import Glibc
import Queue
import Testing
import Transport

@Suite("Errors in the person's words")
struct FailureWordsTests {
    @Test("transport errors read as short sentences; libcurl's own text is kept as detail", arguments: [
        (TransportError(kind: .connectionReset, message: "Recv failure: Connection reset by peer", curlCode: 56),
         "the connection dropped", "Recv failure: Connection reset by peer (curl error 56)"),
        (TransportError(kind: .connectionReset, message: "Send failure: Broken pipe", curlCode: 55),
         "the connection dropped", "Send failure: Broken pipe (curl error 55)"),
        (TransportError(kind: .connectionReset, message: "Empty reply from server", curlCode: 52),
         "the server closed the connection without answering", "Empty reply from server (curl error 52)"),
        (TransportError(kind: .timeout, message: "no data moved for 60 s", curlCode: 42, stalledSeconds: 60),
         "the server did not answer for 60 s", "no data moved for 60 s (curl error 42)"),
        (TransportError(kind: .timeout, message: "Operation timed out after 30001 milliseconds", curlCode: 28),
         "the server did not answer in time", "Operation timed out after 30001 milliseconds (curl error 28)"),
        (TransportError(kind: .unreachable, message: "Failed to connect to 127.0.0.1 port 1: Connection refused", curlCode: 7),
         "cannot reach the server", "Failed to connect to 127.0.0.1 port 1: Connection refused (curl error 7)"),
        (TransportError(kind: .unreachable, message: "Could not resolve host: cloud.example.invalid", curlCode: 6),
         "cannot find a server by that name", "Could not resolve host: cloud.example.invalid (curl error 6)"),
        (TransportError(kind: .tls, message: "SSL certificate problem: self-signed certificate", curlCode: 60),
         "the server's certificate could not be verified", "SSL certificate problem: self-signed certificate (curl error 60)"),
    ])
    func transport(error: TransportError, sentence: String, detail: String) {
        let words = FailureWords.transport(error)
        #expect(words.sentence == sentence)
        #expect(words.detail == detail)
        #expect(!words.sentence.contains(error.message), "the raw text stays out of the sentence")
    }

    @Test("a status a row and a command can both meet reads the same on both: a refused file, refused access, a server error",
          arguments: [HTTPStatusError.Step.create, .patch, .put, .move, .propfind, .mkcol, .get], [403, 500, 502])
    func sameWordsForAStatus(step: HTTPStatusError.Step, status: Int) {
        let error = HTTPStatusError(step: step, status: status, serverMessage: "said so")
        let words = FailureWords.of(error)
        let reason = FailureClassifier.classify(error, now: 0).reason
        #expect(reason.message == words.sentence + ": said so", "the row and the command say the same")
        if status == 403 {
            let sending = [.create, .patch, .put, .move].contains(step)
            #expect(words.sentence == (sending ? "the server refused the file (403)" : "the server refused access (403)"))
        }
    }

    @Test("a row's reason carries the sentence as its message and the raw text as its detail")
    func reasonOnTheRow() {
        let reset = TransportError(kind: .connectionReset, message: "Recv failure: Connection reset by peer", curlCode: 56)
        let reason = FailureClassifier.classify(reset).reason
        #expect(reason.code == .connectionReset)
        #expect(reason.message == "the connection dropped")
        #expect(reason.detail == "Recv failure: Connection reset by peer (curl error 56)")
        let stall = FailureClassifier.classify(TransportError(kind: .timeout, message: "no data moved for 30 s", curlCode: 42,
                                                              stalledSeconds: 30)).reason
        #expect(stall.code == .timeout)
        #expect(stall.message == "the server did not answer for 30 s")
    }

    @Test("a full disk and a file that cannot be read say so plainly")
    func files() {
        let full = TransportError(kind: .sinkWrite, message: "write: No space left on device", errno: ENOSPC)
        #expect(FailureWords.transport(full) == FailureWords("the disk is full", detail: "write: No space left on device"))
        let denied = TransportError(kind: .sourceRead, message: "Permission denied", curlCode: 26, errno: EACCES)
        #expect(FailureWords.transport(denied).sentence == "the file cannot be read: permission denied")
    }

    @Test("account checks name whose password was refused and say what to check, on one line")
    func commandLines() {
        #expect(FailureWords.of(HTTPStatusError(step: .discover, status: 401), user: "alice").line
                == "the server did not accept the password for alice; check it and try again")
        #expect(FailureWords.of(HTTPStatusError(step: .propfind, status: 404)).line == "nothing there (404); check the address")
        #expect(FailureWords.of(HTTPStatusError(step: .propfind, status: 500, serverMessage: "database on fire")).line
                == "the server had an error (500): database on fire")
        let refused = TransportError(kind: .unreachable, message: "Failed to connect", curlCode: 7)
        #expect(FailureWords.of(refused).line
                == "cannot reach the server: Failed to connect (curl error 7); check the address and that the server is running")
    }
}
