import CSystem
import Glibc

/// A POSIX thread that runs one closure and can be joined.
///
/// Foundation's `Thread` cannot be joined, and a monitor must know its thread is gone
/// before `stop()` returns, or a handler could run after the caller thinks it stopped.
/// A dedicated thread is also what makes `setns` safe: it changes the namespace of the
/// calling thread only, and no other work is ever scheduled onto this one. Blocking
/// kernel interfaces (netlink, inotify) each sleep in `poll` on one of these.
public struct DedicatedThread: Sendable {
    private let handle: pthread_t

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        let name: String?
        init(_ run: @escaping @Sendable () -> Void, name: String?) { self.run = run; self.name = name }
    }

    /// Starts `body` on a new thread, named `name` (15 bytes at most) where tools show threads.
    public init(name: String? = nil, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
        let context = Unmanaged.passRetained(Body(body, name: name)).toOpaque()
        var handle = pthread_t()
        let rc = pthread_create(&handle, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            if let name = body.name { _ = csystem_name_thread(name) }
            body.run()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw SystemError("pthread_create", errno: rc)
        }
        self.handle = handle
    }

    /// Whether the caller is running on this thread.
    public var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }

    /// Waits for the closure to return. Call once, never from the thread itself.
    public func join() { pthread_join(handle, nil) }

    /// Lets the thread clean up after itself when it ends. Call instead of `join()`.
    public func detach() { pthread_detach(handle) }

    /// Starts `body` on a thread that nobody joins, named `name`. False, and logged, when
    /// the system has no thread to give: `body` never runs, and the caller undoes what it
    /// set up for it (or the work would be waited for forever).
    public static func startDetached(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        do {
            if let refused = refusedForTests, name.hasPrefix(refused) { throw SystemError("pthread_create", errno: EAGAIN) }
            try DedicatedThread(name: name, body).detach()
        } catch {
            Log.error("\(name): \(error)")
            return false
        }
        return true
    }

    /// With `INSTANT_UPLOAD_TEST_NO_THREAD=<prefix>` in the environment, the threads whose
    /// names start with it are refused as if the system had none (the tests of what the
    /// callers do then). Read here and nowhere else; without it this does nothing.
    private static let refusedForTests: String? = getenv("INSTANT_UPLOAD_TEST_NO_THREAD").map { String(cString: $0) }

    /// Runs `body` on a thread of its own and waits for its result.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) throws(SystemError) -> T {
        let box = ResultBox<T>()
        let thread = try DedicatedThread { let result = body(); box.value.withLock { $0 = result } }
        thread.join()
        return box.value.withLock { $0! }
    }
}

private final class ResultBox<T: Sendable>: Sendable {
    let value = Locked<T?>(nil)
}
