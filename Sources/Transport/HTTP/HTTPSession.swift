import CCurl
import Glibc
import Platform

/// One libcurl easy handle, reused request after request so the connection stays open.
///
/// Not Sendable: a session belongs to one transfer on one thread. `perform` blocks that
/// thread until the exchange ends; `cancellation` stops it from any other thread.
public final class HTTPSession {
    /// Made at the first request (libcurl is loaded then, see CCurl).
    private var handle: UnsafeMutableRawPointer?
    public var credentials: Credentials?
    /// No progress at all for this long ends the request as a stall.
    public var stallSeconds: Int = 30
    public var connectTimeoutSeconds: Int = 15
    public var cancellation = CancellationFlag()
    /// Extra CA bundle for servers with a private certificate authority.
    public var caFile: String?

    /// libcurl loaded and set up once for the process; why not, if it could not be.
    private static let loadFailure: String? = {
        if let failure = ccurl_load() { return String(cString: failure) }
        return ccurl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK ? nil : "libcurl could not be set up (curl_global_init)"
    }()

    /// For a long-running process, before it starts other threads.
    ///
    /// libcurl brings GnuTLS along (librtmp and libldap link it), whose constructor sets up
    /// its whole crypto stack as it loads: 0.7 MB resident that nothing here uses. HTTP and
    /// HTTPS go through OpenSSL, rtmp and ldap are never enabled, and both libraries call
    /// `gnutls_global_init` themselves before they use GnuTLS. This variable skips the
    /// constructor's setup.
    public static func prepareLongRunningProcess() {
        ProcessEnvironment.setForThisProcessOnly("GNUTLS_NO_IMPLICIT_INIT", "1")
    }

    /// Where the handle comes from and goes back to.
    private let handles: IdleHandles

    public init(credentials: Credentials? = nil) {
        self.credentials = credentials
        handles = .shared
    }

    /// A session that takes its handle from `handles` and gives it back there.
    init(credentials: Credentials? = nil, handles: IdleHandles) {
        self.credentials = credentials
        self.handles = handles
    }

    deinit { if let handle { handles.giveBack(handle) } }

    /// The easy handle: an ended session's if one is idle, else made at the first request.
    private func easyHandle() throws(TransportError) -> UnsafeMutableRawPointer {
        if let handle { return handle }
        if let failure = Self.loadFailure { throw TransportError(kind: .other, message: failure) }
        guard let made = handles.take() ?? ccurl_easy_init() else {
            throw TransportError(kind: .other, message: "libcurl could not make a handle (out of memory?)")
        }
        handle = made
        return made
    }

    /// Sends `request` and waits for the whole answer. HTTP errors are answers, not throws.
    public func perform(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        let handle = try easyHandle()
        ccurl_easy_reset(handle)
        let context = ExchangeContext(request: request, cancellation: cancellation, stallSeconds: Double(stallSeconds))
        let unmanaged = Unmanaged.passRetained(context)
        defer { unmanaged.release() }
        let userdata = unmanaged.toOpaque()

        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { ccurl_slist_free_all(headerList) }
        // curl adds `Expect: 100-continue` to large uploads; tus servers answer better without it.
        for (name, value) in request.headers + [("Expect", "")] {
            headerList = ccurl_slist_append(headerList, value.isEmpty ? "\(name):" : "\(name): \(value)")
        }

        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let rc: CURLcode = errorBuffer.withUnsafeMutableBufferPointer { errorPointer in
            ccurl_set_string(handle, CURLOPT_URL, request.url)
            ccurl_set_long(handle, CURLOPT_NOSIGNAL, 1)
            if let share = SharedConnections.handle { ccurl_set_pointer(handle, CURLOPT_SHARE, share) }
            ccurl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorPointer.baseAddress)
            ccurl_set_long(handle, CURLOPT_CONNECTTIMEOUT, connectTimeoutSeconds)
            // Stalls are detected in the progress callback (curl's own low-speed check
            // averages over several seconds and reacts late).
            ccurl_set_long(handle, CURLOPT_TCP_KEEPALIVE, 1)
            // Redirects are never followed: credentials must not travel to another host.
            ccurl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
            ccurl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
            ccurl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
            if let caFile { ccurl_set_string(handle, CURLOPT_CAINFO, caFile) }
            ccurl_set_long(handle, CURLOPT_PROTOCOLS, Int(CURLPROTO_HTTP | CURLPROTO_HTTPS))
            if let credentials {
                ccurl_set_long(handle, CURLOPT_HTTPAUTH, ccurl_auth_basic())
                ccurl_set_string(handle, CURLOPT_USERNAME, credentials.username)
                ccurl_set_string(handle, CURLOPT_PASSWORD, credentials.password)
            }
            ccurl_set_slist(handle, CURLOPT_HTTPHEADER, headerList)
            ccurl_set_pointer(handle, CURLOPT_HEADERDATA, userdata)
            ccurl_set_header(handle, { ptr, size, count, userdata in
                let context = Unmanaged<ExchangeContext>.fromOpaque(userdata!).takeUnretainedValue()
                return context.receiveHeader(UnsafeRawBufferPointer(start: ptr, count: size * count))
            })
            ccurl_set_pointer(handle, CURLOPT_WRITEDATA, userdata)
            ccurl_set_write(handle, { ptr, size, count, userdata in
                let context = Unmanaged<ExchangeContext>.fromOpaque(userdata!).takeUnretainedValue()
                return context.receiveBody(UnsafeRawBufferPointer(start: ptr, count: size * count))
            })
            ccurl_set_long(handle, CURLOPT_NOPROGRESS, 0)
            ccurl_set_pointer(handle, CURLOPT_XFERINFODATA, userdata)
            ccurl_set_xferinfo(handle, { userdata, _, downloaded, _, uploaded in
                let context = Unmanaged<ExchangeContext>.fromOpaque(userdata!).takeUnretainedValue()
                return context.tick(moved: Int64(downloaded) + Int64(uploaded)) ? 0 : 1
            })
            // Large buffers only where large bodies come: the agent keeps malloc from reusing
            // freed large blocks (see MallocTuning), so each one is mapped and unmapped again
            // for every request, which for small files cost more than the request itself.
            if case .download = request.sink { ccurl_set_long(handle, CURLOPT_BUFFERSIZE, 512 * 1024) }

            switch request.method {
            case "GET": break
            case "HEAD": ccurl_set_long(handle, CURLOPT_NOBODY, 1)
            default: ccurl_set_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
            }
            switch request.body {
            case .none:
                if request.method == "POST" || request.method == "PATCH" || request.method == "PUT" {
                    ccurl_set_long(handle, CURLOPT_POSTFIELDSIZE, 0)
                    ccurl_set_string(handle, CURLOPT_POSTFIELDS, "")
                }
            case .bytes(let bytes):
                ccurl_set_long(handle, CURLOPT_POSTFIELDSIZE, bytes.count)
                // COPYPOSTFIELDS copies the bytes; a zero byte keeps the pointer valid when empty.
                (bytes + [0]).withUnsafeBytes { b in
                    _ = ccurl_set_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: b.baseAddress!))
                }
            case .file, .buffer:
                let length = request.body.length
                // UPLOAD with a known size sends Content-Length, never a chunked body.
                ccurl_set_long(handle, CURLOPT_UPLOAD, 1)
                ccurl_set_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(length))
                ccurl_set_long(handle, CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBufferSize(for: length))
                ccurl_set_pointer(handle, CURLOPT_READDATA, userdata)
                ccurl_set_read(handle, { ptr, size, count, userdata in
                    let context = Unmanaged<ExchangeContext>.fromOpaque(userdata!).takeUnretainedValue()
                    return context.sendBody(UnsafeMutableRawBufferPointer(start: ptr, count: size * count))
                })
            }
            return ccurl_easy_perform(handle)
        }
        // The last gathered bytes of a download; a file that refuses them fails the exchange
        // like any write, and after a broken transfer they stay as part of the resume point.
        let flushed = context.flushDownload()

        if rc != CURLE_OK {
            let detail = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw context.error(for: rc, detail: detail)
        }
        if !flushed { throw context.error(for: CURLE_WRITE_ERROR, detail: "") }
        var status = 0
        ccurl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return HTTPResponse(status: status, headers: context.headers, body: context.body)
    }

    /// libcurl's buffer for a body it reads from us, allocated afresh for every request.
    /// Below malloc's mmap threshold (`MallocTuning`) it comes from the heap, already mapped;
    /// above, it is mapped for the request, and the kernel faults in and zeroes each of its
    /// pages as the body first fills it. So a body under 4 MiB (a photo) goes through 64 KiB:
    /// a 256 KiB buffer's page faults and zeroing were 11% of the agent's CPU sending 300 kB
    /// photos to Apache, far more than three more reads and sends per buffer cost. A larger
    /// body gets 384 KiB, its faults paid once for megabytes. The size is set by the server
    /// as much as by the agent: each send wakes a server waiting for data, and one that keeps
    /// up is woken for every send. 1 GiB into a local tus sink took the sink 0.33 s of CPU
    /// with 128 KiB sends and 0.10 s with 512 KiB ones, and the upload 0.87 s against 0.74 s
    /// (medians of six, alternating), the agent's own CPU the same. The running hash's
    /// buffers (`PipelinedHasher`) must hold more than one send, or the hash waits while a
    /// long one goes: 384 KiB beside 512 KiB of them is the memory 128 KiB beside 768 KiB
    /// took, at 0.76 s.
    static func uploadBufferSize(for length: Int64) -> Int {
        length < 4 << 20 ? Int(min(max(length, 16 << 10), 64 << 10)) : 384 << 10
    }
}

/// Easy handles of ended sessions, kept for the next ones. The agent runs a session or two per
/// file, and a new handle cost libcurl a socketpair, its own multi handle and three signal
/// actions, for every photo of a card. A kept handle is reset: none of a session's options,
/// credentials or callbacks reach the next; its connections were the share's all along.
final class IdleHandles: Sendable {
    /// The process's: as many as transfers run at once, and their lookups beside them.
    static let shared = IdleHandles(keeping: 8)

    private struct Handles: @unchecked Sendable {
        // Unsafe only in name: reached under the lock, and a handle is used by one session at a time.
        var idle: [UnsafeMutableRawPointer] = []
    }
    private let handles = Locked(Handles())
    private let kept: Int

    init(keeping kept: Int) {
        self.kept = kept
    }

    /// How many handles wait for a session.
    var count: Int { handles.withLock { $0.idle.count } }

    func take() -> UnsafeMutableRawPointer? {
        handles.withLock { $0.idle.popLast() }
    }

    /// Keeps `handle` reset for the next session, or cleans it up when enough are kept.
    func giveBack(_ handle: UnsafeMutableRawPointer) {
        ccurl_easy_reset(handle)
        let isKept = handles.withLock { h in
            guard h.idle.count < kept else { return false }
            h.idle.append(handle)
            return true
        }
        if !isKept { ccurl_easy_cleanup(handle) }
    }
}

/// The state one exchange's callbacks share; lives exactly as long as `perform`.
final class ExchangeContext {
    let request: HTTPRequest
    let cancellation: CancellationFlag
    var headers: [(String, String)] = []
    /// The status of the response being received, from its status line: a download sink's
    /// observer sees only the body of a success (2xx), never an error page written after it.
    var status: Int?
    var body: [UInt8] = []
    var sent: Int64 = 0
    var fileError: Int32?
    var bodyTooLarge = false
    let stallSeconds: Double
    var lastMoved: Int64 = -1
    var lastMovedAt: Double = 0
    var stalled = false
    /// A `download` sink was emptied for a `200`: once per exchange, so the blank line
    /// after trailers can never empty it again.
    var startedOver = false
    /// A download's bytes on their way to the disk as they come (made at its first write, after
    /// any start over has moved the file back to its beginning).
    var writeBehind: WriteBehind?
    /// A download's body gathered before it goes to the file. libcurl hands it over in pieces
    /// of 16 KiB, and a write(2) for each cost more (ext4's work per call) than copying them
    /// here; the observer (the running hash) then sees each buffer after the file took it,
    /// while it is still in the cache. 256 KiB: writing 1 GiB from 1 MiB buffers made the
    /// kernel's copy into the page cache several times slower on this machine.
    private var gathered: UnsafeMutableRawBufferPointer?
    private var gatheredCount = 0
    /// When the oldest gathered byte came: on a slow link a buffer takes long to fill, and
    /// the file and the progress shown must not fall behind by more than a moment.
    private var gatheredSince: Double = 0
    static let gatherSize = 256 << 10

    init(request: HTTPRequest, cancellation: CancellationFlag, stallSeconds: Double) {
        self.request = request
        self.cancellation = cancellation
        self.stallSeconds = stallSeconds
        self.lastMovedAt = MonotonicClock.seconds()
    }

    deinit { gathered?.deallocate() }

    /// Called by curl at least once a second. False stops the exchange: cancelled, no byte
    /// moved either way for `stallSeconds`, or the file refused a download's gathered bytes.
    func tick(moved: Int64) -> Bool {
        if cancellation.isCancelled { return false }
        let now = MonotonicClock.seconds()
        if gatheredCount > 0, now - gatheredSince >= 0.5, !flushDownload() { return false }
        if moved != lastMoved {
            lastMoved = moved
            lastMovedAt = now
            return true
        }
        if now - lastMovedAt >= stallSeconds {
            stalled = true
            return false
        }
        return true
    }

    func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        let line = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        if line.isEmpty {
            // The blank line that ends a response's headers: the status is final now.
            return startOverIfWholeFile() ? bytes.count : 0
        }
        if line.hasPrefix("HTTP/") {
            // Whatever body came before this response was under the status before it.
            guard flushDownload() else { return 0 }
            headers.removeAll() // a new response (after 100 Continue): keep only the final one's
            let code = line.split(separator: " ", maxSplits: 2).dropFirst().first.map(Array.init) ?? []
            status = code.count == 3 && code.allSatisfy(\.isASCII) && code.allSatisfy(\.isNumber) ? Int(String(code)) : nil
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingBlanks()
            headers.append((name, value))
        }
        return bytes.count
    }

    /// For a resumed download answered `200`: empties the file and tells the observer, before
    /// the first body byte. False when the file cannot be emptied (the exchange then stops).
    private func startOverIfWholeFile() -> Bool {
        guard case .download(let fd, let observer) = request.sink, status == 200, !startedOver else { return true }
        startedOver = true
        do throws(SystemError) {
            // A fresh download (position 0) has nothing to forget.
            guard try valueOrErrno("lseek", { lseek(fd, 0, SEEK_CUR) }) > 0 else { return true }
            try FileIO.truncate(fd, to: 0)
            try valueOrErrno("lseek") { lseek(fd, 0, SEEK_SET) }
        } catch {
            fileError = error.errno
            return false
        }
        observer?.startOver()
        return true
    }

    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        switch request.sink {
        case .memory(let limit):
            if body.count + bytes.count > limit { bodyTooLarge = true; return 0 }
            body.append(contentsOf: bytes)
            return bytes.count
        case .hashed(let sha):
            sha.update(bytes)
            return bytes.count
        case .stream(let reader):
            if let status, reader.accepts(status: status) { return reader.read(bytes) ? bytes.count : 0 }
            body.append(contentsOf: bytes.prefix(max(0, (1 << 20) - body.count)))
            return bytes.count
        case .download: break
        }
        let buffer = gathered ?? .allocate(byteCount: Self.gatherSize, alignment: 4096)
        gathered = buffer
        var taken = 0
        while taken < bytes.count {
            if gatheredCount == 0 { gatheredSince = MonotonicClock.seconds() }
            let n = min(Self.gatherSize - gatheredCount, bytes.count - taken)
            (buffer.baseAddress! + gatheredCount).copyMemory(from: bytes.baseAddress! + taken, byteCount: n)
            gatheredCount += n
            taken += n
            if gatheredCount == Self.gatherSize, !flushDownload() { return 0 }
        }
        return bytes.count
    }

    /// Writes a download's gathered bytes to its file, starts them towards the disk and shows
    /// them to the observer (a success's body only). False, with `fileError`, when the file
    /// refused them now or earlier.
    func flushDownload() -> Bool {
        guard case .download(let fd, let observer) = request.sink else { return true }
        guard fileError == nil else { return false }
        guard let gathered, gatheredCount > 0 else { return true }
        let bytes = UnsafeRawBufferPointer(start: gathered.baseAddress, count: gatheredCount)
        gatheredCount = 0
        do { try FileIO.write(fd, bytes) } catch {
            fileError = error.errno
            return false
        }
        if writeBehind == nil {
            let end = lseek(fd, 0, SEEK_CUR)
            if end >= bytes.count { writeBehind = WriteBehind(fd: fd, from: Int64(end - bytes.count)) }
        }
        writeBehind?.wrote(bytes.count)
        if let status, (200..<300).contains(status) { observer?.observe(bytes) }
        return true
    }

    func sendBody(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        if case .buffer(let source, let observer) = request.body {
            if cancellation.isCancelled { return ccurl_readfunc_abort() }
            let n = min(buffer.count, source.count - Int(sent))
            guard n > 0 else { return 0 }
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + Int(sent), byteCount: n)
            observer?.observe(UnsafeRawBufferPointer(start: buffer.baseAddress!, count: n))
            sent += Int64(n)
            return n
        }
        guard case .file(let fd, let start, let length, let observer, let seal) = request.body else { return 0 }
        if cancellation.isCancelled { return ccurl_readfunc_abort() }
        let want = min(Int64(buffer.count), length - sent)
        if want <= 0 { return 0 }
        let n: Int
        do { n = try FileIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(want)]), at: start + sent) } catch {
            fileError = error.errno
            return ccurl_readfunc_abort()
        }
        if n == 0 {
            // The file is shorter than it was: it changed under us.
            fileError = ENODATA
            return ccurl_readfunc_abort()
        }
        let block = UnsafeRawBufferPointer(start: buffer.baseAddress!, count: n)
        observer?.observe(block)
        if let seal {
            seal.update(block)
            if sent + Int64(n) == length, !seal.isKept {
                // The file changed since its checksum was made: broken off before the last
                // bytes, so the server never has a whole body under a checksum it does not match.
                fileError = ENODATA
                return ccurl_readfunc_abort()
            }
        }
        sent += Int64(n)
        return n
    }

    func error(for rc: CURLcode, detail: String) -> TransportError {
        let text = detail.isEmpty ? String(cString: ccurl_easy_strerror(rc)) : detail
        let code = Int32(rc.rawValue)
        if let fileError {
            let kind: TransportError.Kind = rc == CURLE_WRITE_ERROR ? .sinkWrite : .sourceRead
            return TransportError(kind: kind, message: String(cString: strerror(fileError)), curlCode: code, errno: fileError)
        }
        if bodyTooLarge, case .memory(let limit) = request.sink {
            // Asked again, the server would send the same. No curl code: the words are ours
            // (curl only saw the body refused).
            let size = limit >= 1 << 20 ? "\(limit >> 20) MiB" : limit >= 1 << 10 ? "\(limit >> 10) KiB" : "\(limit) bytes"
            return TransportError(kind: .malformedReply, message: "the server's reply is longer than \(size), far more than such a reply needs")
        }
        if stalled {
            return TransportError(kind: .timeout, message: "no data moved for \(Int(saturating: stallSeconds)) s", curlCode: code,
                                  stalledSeconds: Int(saturating: stallSeconds))
        }
        switch rc {
        case CURLE_ABORTED_BY_CALLBACK, CURLE_READ_ERROR:
            return TransportError(kind: .cancelled, message: "cancelled", curlCode: code)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return TransportError(kind: .unreachable, message: text, curlCode: code)
        case CURLE_OPERATION_TIMEDOUT:
            return TransportError(kind: .timeout, message: text, curlCode: code)
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return TransportError(kind: .connectionReset, message: text, curlCode: code)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return TransportError(kind: .tls, message: text, curlCode: code)
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return TransportError(kind: .badURL, message: text, curlCode: code)
        case CURLE_WEIRD_SERVER_REPLY:
            return TransportError(kind: .malformedReply, message: text, curlCode: code)
        default:
            return TransportError(kind: .other, message: text, curlCode: code)
        }
    }
}
