import Platform
import Testing
@testable import Transport

@Suite("libcurl's buffer for a request body")
struct UploadBufferTests {
    @Test("a photo's body goes through a buffer malloc takes from its heap, not one mapped and zeroed for each request")
    func photosStayOnTheHeap() {
        for length: Int64 in [0, 1, 30_000, 300_000, 1 << 20, (4 << 20) - 1] {
            let size = HTTPSession.uploadBufferSize(for: length)
            #expect(size < Int(MallocTuning.mmapThreshold), "\(length) bytes")
            #expect(size >= 16 << 10, "\(length) bytes")
        }
        #expect(HTTPSession.uploadBufferSize(for: 4 << 20) == 384 << 10)
        #expect(HTTPSession.uploadBufferSize(for: 1 << 30) == 384 << 10)
    }
}
