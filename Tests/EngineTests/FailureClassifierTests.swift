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
}
