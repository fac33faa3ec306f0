import Glibc

/// Text for an output stream, written while something another process waits on is held
/// (the queue's read snapshot, which keeps its log from being reset): each piece goes out
/// at once while the stream takes it without waiting, and what it does not take is kept,
/// in order, until `finish`, which the caller runs once it holds nothing. A reader that
/// keeps up (a file, `jq`, a terminal) costs no memory; one that reads slowly or not at
/// all (a pager) costs memory, never the log.
public final class EagerOutput {
    private let fd: Int32
    /// Bytes a write can hand over without waiting, once `poll` says the stream takes more:
    /// `PIPE_BUF` for pipes, sockets and terminals, anything for a regular file.
    private let piece: Int
    /// What waits for the stream: `held[start...]`.
    private var held: [UInt8] = []
    private var start = 0
    /// The stream failed (its reader is gone): the rest has nowhere to go.
    private var broken = false

    public init(fd: Int32) {
        self.fd = fd
        var st = stat()
        let regular = fstat(fd, &st) == 0 && FileKind.of(mode: st.st_mode) == .regular
        piece = regular ? Int.max : Int(PIPE_BUF)
    }

    /// How many bytes wait for the stream.
    public var heldCount: Int { held.count - start }

    /// How much text a writer gathers before it hands it on (`pass`).
    public static let gathered = 64 << 10

    /// Writes `text` and empties it once it has gathered a piece; leaves it as it is before.
    public func pass(_ text: inout String) {
        guard text.utf8.count >= Self.gathered else { return }
        write(text)
        text = ""
    }

    public func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) {
        guard !broken else { return }
        if heldCount > 0 {
            start += held.withUnsafeBytes { sendWhileTaken(UnsafeRawBufferPointer(rebasing: $0[start...])) }
            if start == held.count {
                held.removeAll(keepingCapacity: true)
                start = 0
            } else if start > 1 << 20, start > held.count / 2 {
                // What went is let go of now and then, not at every write.
                held.removeFirst(start)
                start = 0
            }
        }
        let sent = heldCount == 0 ? sendWhileTaken(bytes) : 0
        if !broken { held += bytes[sent...] }
    }

    /// Writes what the stream did not take, waiting for it as long as it takes.
    public func finish() {
        guard !broken, heldCount > 0 else { return }
        held.withUnsafeBytes { _ = try? FileIO.write(fd, UnsafeRawBufferPointer(rebasing: $0[start...])) }
        held = []
        start = 0
    }

    /// Writes the start of `bytes` while the stream takes it without waiting: how many
    /// bytes went.
    private func sendWhileTaken(_ bytes: UnsafeRawBufferPointer) -> Int {
        var sent = 0
        while sent < bytes.count {
            var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let polled = poll(&ready, 1, 0)
            if polled < 0, errno == EINTR { continue }
            if polled < 0 || ready.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { broken = true; break }
            if polled == 0 { break }
            let n = Glibc.write(fd, bytes.baseAddress! + sent, min(piece, bytes.count - sent))
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { break }
                broken = true
                break
            }
            sent += n
        }
        return sent
    }
}
