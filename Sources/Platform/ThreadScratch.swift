import Glibc

/// A buffer each thread keeps for work of up to `limit` bytes, such as a photo held in memory
/// for its checksum while it is sent. malloc maps every block above its mmap threshold
/// (`MallocTuning`), so a card of 300 kB photos otherwise mapped, faulted in, zeroed and
/// unmapped a buffer per photo: 5% of the agent's CPU. The buffer goes when its thread ends
/// (a transfer thread ends a few seconds after its last job, `ReusedThreads`), so it is
/// resident only while files are being sent. Larger requests, and a second one on a thread
/// whose buffer is lent, get a buffer of their own, given back at once.
public enum ThreadScratch {
    public static let limit = 1 << 20
    /// The buffer grows in these steps, so photos of slightly different sizes reuse it.
    static let step = 64 << 10

    /// `byteCount` bytes (at least one) to use on this thread until `giveBack`.
    public static func lend(byteCount: Int) -> UnsafeMutableRawBufferPointer {
        let count = max(1, byteCount)
        guard count <= limit, let scratch = Scratch.current(), !scratch.lent else {
            return .allocate(byteCount: count, alignment: 64)
        }
        if scratch.buffer.count < count {
            scratch.buffer.deallocate()
            scratch.buffer = .allocate(byteCount: min(limit, (count + step - 1) / step * step), alignment: 64)
        }
        scratch.lent = true
        return UnsafeMutableRawBufferPointer(rebasing: scratch.buffer[0..<count])
    }

    /// Ends the loan of a buffer `lend` gave on this thread.
    public static func giveBack(_ buffer: UnsafeMutableRawBufferPointer) {
        if let scratch = Scratch.current(), scratch.lent, buffer.baseAddress == scratch.buffer.baseAddress {
            scratch.lent = false
        } else {
            buffer.deallocate()
        }
    }

    /// One thread's buffer, freed by the thread's end (a pthread key's destructor).
    private final class Scratch {
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 64)
        var lent = false

        deinit { buffer.deallocate() }

        private static let key: pthread_key_t? = {
            var key = pthread_key_t()
            let made = pthread_key_create(&key) { value in
                if let value { Unmanaged<Scratch>.fromOpaque(value).release() }
            }
            return made == 0 ? key : nil
        }()

        /// The calling thread's, made on first use; nil when the system has no key to give.
        static func current() -> Scratch? {
            guard let key else { return nil }
            if let value = pthread_getspecific(key) { return Unmanaged<Scratch>.fromOpaque(value).takeUnretainedValue() }
            let scratch = Unmanaged.passRetained(Scratch())
            guard pthread_setspecific(key, scratch.toOpaque()) == 0 else {
                scratch.release()
                return nil
            }
            return scratch.takeUnretainedValue()
        }
    }
}
