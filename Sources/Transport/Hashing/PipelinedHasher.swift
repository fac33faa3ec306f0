import Platform

/// Hashes an upload's bytes on a thread of its own, so hashing overlaps with sending.
/// (A download hashes on its transfer's thread, each gathered buffer right after the file
/// took it: see `ExchangeContext`.)
///
/// `observe` copies each piece into one of a few fixed buffers and returns at once; a
/// buffer goes to the hashing thread once it is full (waking the thread for each small
/// piece cost more than hashing it), and the thread works through them in order. Memory is bounded by the buffers
/// (`depth` × `bufferSize`), whatever the file size. Read the digest or state only after
/// `drain()`, which hands over the last buffer and waits for every byte handed in so far.
///
/// The first `inlineLimit` bytes are hashed as they come, and the thread and its buffers
/// are made only for the bytes after them: a photo of a few hundred kB is hashed in less
/// time than a thread takes to start, and a card of them would otherwise start and end
/// one thread, and map and unmap its buffers, per photo.
///
/// Four buffers of 128 KiB: together they hold more than one of libcurl's sends of a large
/// body (384 KiB, `HTTPSession.uploadBufferSize`), so the hashing thread has bytes to hash
/// while a send goes; with 768 KiB in three buffers beside 512 KiB sends, a 1 GiB upload took
/// as long as with 512 KiB in four buffers (0.74 s against 0.74 s, medians of six), and
/// 384 KiB of buffers let the hash wait (0.85 s). Smaller buffers cost a hand-over each:
/// 64 KiB ones did no better than 128 KiB ones.
public final class PipelinedHasher: RestartableObserver, @unchecked Sendable {
    // Sendable by construction: every mutable field below is read and written only while
    // holding `condition`; `sha` is touched by the worker thread between `drain()`s and by
    // the owner only after `drain()` returned with nothing pending, or before the thread
    // started. `threadStarted`, `inlineLeft` and the buffer being filled are the owner's
    // alone.
    private let condition = Condition()
    private var free: [UnsafeMutableRawBufferPointer]
    private var filled: [(UnsafeMutableRawBufferPointer, Int)] = []
    private var busy = false
    private var stopping = false
    private let bufferSize: Int
    private let depth: Int
    /// Bytes still hashed on the owner's thread before the hashing thread starts.
    private var inlineLeft: Int
    private var threadStarted = false
    /// The buffer the owner is filling, and how much of it is filled.
    private var current: UnsafeMutableRawBufferPointer?
    private var currentCount = 0
    public private(set) var sha: RunningSHA256

    public init(_ sha: RunningSHA256, depth: Int = 4, bufferSize: Int = 128 << 10, inlineLimit: Int = 1 << 20) {
        self.sha = sha
        self.bufferSize = bufferSize
        self.depth = depth
        inlineLeft = inlineLimit
        free = []
    }

    private func startThread() {
        threadStarted = true
        condition.lock()
        free = (0..<depth).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 64) }
        condition.unlock()
        guard DedicatedThread.startDetached(name: "sha256", { [self] in work() }) else {
            // No thread to be had: the rest is hashed as it comes, on the caller's thread.
            threadStarted = false
            condition.lock()
            for b in free { b.deallocate() }
            free = []
            condition.unlock()
            inlineLeft = .max
            return
        }
    }

    deinit {
        for b in free { b.deallocate() }
        for (b, _) in filled { b.deallocate() }
        current?.deallocate()
    }

    public func observe(_ bytes: UnsafeRawBufferPointer) {
        if !threadStarted {
            if bytes.count <= inlineLeft {
                inlineLeft -= bytes.count
                sha.update(bytes)
                return
            }
            startThread()
            guard threadStarted else { return sha.update(bytes) }
        }
        var offset = 0
        while offset < bytes.count {
            let buffer = current ?? takeFreeBuffer()
            let n = min(bufferSize - currentCount, bytes.count - offset)
            (buffer.baseAddress! + currentCount).copyMemory(from: bytes.baseAddress! + offset, byteCount: n)
            current = buffer
            currentCount += n
            offset += n
            if currentCount == bufferSize { handOver() }
        }
    }

    private func takeFreeBuffer() -> UnsafeMutableRawBufferPointer {
        condition.lock()
        defer { condition.unlock() }
        while free.isEmpty { condition.wait() }
        currentCount = 0
        return free.removeLast()
    }

    /// Gives the buffer being filled to the hashing thread.
    private func handOver() {
        guard let buffer = current else { return }
        current = nil
        condition.lock()
        if currentCount > 0 { filled.append((buffer, currentCount)) } else { free.append(buffer) }
        condition.broadcast()
        condition.unlock()
        currentCount = 0
    }

    /// Waits until every byte observed so far is in the hash.
    public func drain() {
        guard threadStarted else { return }
        handOver()
        condition.lock()
        while !filled.isEmpty || busy { condition.wait() }
        condition.unlock()
    }

    /// Replaces the running hash (after a rewind). Call only when drained.
    public func replace(_ sha: RunningSHA256) {
        drain()
        self.sha = sha
    }

    /// A hash of nothing yet, for a file that starts again from its first byte.
    public func startOver() { replace(RunningSHA256()) }

    /// Ends the hashing thread; the hasher can't be used afterwards.
    public func stop() {
        guard threadStarted else { return }
        drain()
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while filled.isEmpty && !stopping { condition.wait() }
            if filled.isEmpty && stopping { condition.unlock(); return }
            let (buffer, count) = filled.removeFirst()
            busy = true
            condition.unlock()
            sha.update(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count))
            condition.lock()
            busy = false
            free.append(buffer)
            condition.broadcast()
            condition.unlock()
        }
    }
}
