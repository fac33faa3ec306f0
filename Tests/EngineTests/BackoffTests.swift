import Engine
import Queue
import Testing

@Suite("Backoff: nothing retries at once")
struct BackoffTests {
    /// A generator that makes every random draw in a closed range its lowest value: the
    /// shortest wait the backoff allows. (Constant 0 would make the standard library's
    /// rejection sampling draw for ever.)
    struct Lowest: RandomNumberGenerator {
        // Counted, so the generator has a size: the thread sanitizer's exclusivity check
        // crashed on the address of an empty one passed inout (a fault of the sanitizer).
        var draws = 0
        mutating func next() -> UInt64 { draws += 1; return 1 }
    }

    @Test("a Retry-After of 0, or none with the luckiest jitter, still waits the floor")
    func floor() {
        var rng = Lowest()
        let backoff = Backoff()
        #expect(backoff.delay(attempt: 1, retryAfter: 0, using: &rng) == 1)
        #expect(backoff.delay(attempt: 1, retryAfter: nil, using: &rng) == 1)
        #expect(backoff.delay(attempt: 5, retryAfter: 3, using: &rng) == 3, "a server's longer wait is kept")
        for attempt in 1...30 {
            #expect(backoff.delay(attempt: attempt) >= 1)
            #expect(backoff.delay(attempt: attempt) <= 60, "capped near a minute")
        }
    }

    @Test("the first restarts in a row wait about the floor; after them each waits longer, and the reason says so")
    func restartsInARow() {
        var rng = Lowest()
        let backoff = Backoff()
        let note = Classification(reason: Reason(.uploadLost), retryAfter: 0, restarts: 1)
        for restarts in 1...3 {
            var c = note
            c.restarts = restarts
            let (seconds, reason) = backoff.wait(after: c, attempt: 1, using: &rng)
            #expect(seconds >= 1 && seconds <= 2, "restart \(restarts): \(seconds) s")
            #expect(reason == Reason(.uploadLost), "a quick restart keeps its reason as it is")
        }
        var waits: [Double] = []
        for restarts in 4...12 {
            var c = note
            c.restarts = restarts
            let (seconds, reason) = backoff.wait(after: c, attempt: 1, using: &rng)
            waits.append(seconds)
            #expect(reason.code == .uploadLost)
            #expect(reason.message.contains("started again \(restarts) times in a row"), "\(reason.message)")
            #expect(reason.message.contains("waits \(seconds < 120 ? "\(Int(seconds)) s" : "\(Int(seconds / 60)) min")"), "\(reason.message)")
        }
        #expect(waits.first == 60)
        #expect(waits == waits.sorted(), "never shorter than the one before: \(waits)")
        #expect(waits.last == 900, "capped at a quarter of an hour")
    }

    @Test("an ordinary failure is judged by its attempts, not as a restart")
    func ordinaryFailure() {
        var rng = Lowest()
        let (seconds, reason) = Backoff().wait(after: Classification(reason: Reason(.connectionReset)), attempt: 9, using: &rng)
        #expect(seconds == 1)
        #expect(reason == Reason(.connectionReset))
    }
}
