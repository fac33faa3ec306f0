@testable import Engine
import Testing

@Suite("The batch's rate, from recorded progress")
struct ThroughputTests {
    @Test("sums the running rows over the last seconds, and a row that ended counts up to where it ended")
    func sumsRows() {
        var meter = Throughput(window: 8)
        meter.started(1, at: 0)
        meter.started(2, at: 1_000)  // resumed: what it had before is not this batch's speed
        #expect(meter.rate(at: 0) == nil)
        meter.saw(1, at: 2_000)
        meter.saw(2, at: 3_000)
        #expect(meter.rate(at: 0.5) == nil, "not a second of samples yet")
        meter.ended(1, at: 5_000)
        meter.saw(2, at: 5_000)
        #expect(meter.rate(at: 2) == 4_500, "(5,000 + 4,000) bytes over 2 s")
        #expect(meter.rows == [2])
    }

    @Test("files too small to be seen running still count whole")
    func smallFiles() {
        var meter = Throughput()
        _ = meter.rate(at: 10)
        for id in Int64(1)...10 { meter.started(id, at: 0) }
        for id in Int64(1)...10 { meter.ended(id, at: 100_000) }
        #expect(meter.rate(at: 11) == 1_000_000)
    }

    @Test("a row that starts again from zero counts on from there, never backwards")
    func restart() {
        var meter = Throughput()
        meter.started(1, at: 0)
        _ = meter.rate(at: 0)
        meter.saw(1, at: 8_000)
        meter.saw(1, at: 0)
        meter.saw(1, at: 2_000)
        #expect(meter.rate(at: 1) == 10_000)
    }

    @Test("only the last seconds count: a fast start is forgotten once the link slows")
    func window() {
        var meter = Throughput(window: 5)
        meter.started(1, at: 0)
        var bytes: Int64 = 0
        for second in 0...20 {
            bytes += second < 10 ? 10_000 : 1_000
            meter.saw(1, at: bytes)
            _ = meter.rate(at: Double(second))
        }
        bytes += 1_000
        meter.saw(1, at: bytes)
        let rate = meter.rate(at: 21)
        #expect(rate == 1_000, "\(String(describing: rate))")
    }

    @Test("once nothing runs, the next rate is measured afresh")
    func reset() {
        var meter = Throughput()
        meter.started(1, at: 0)
        _ = meter.rate(at: 0)
        meter.ended(1, at: 50_000)
        _ = meter.rate(at: 1)
        meter.reset()
        meter.started(2, at: 0)
        #expect(meter.rate(at: 100) == nil)
        meter.saw(2, at: 3_000)
        #expect(meter.rate(at: 101) == 3_000)
    }
}
