@testable import Engine
import Testing

@Suite("run --until-idle says what it waits for")
struct ArrivalWaitTests {
    @Test("said once the wait has lasted longer than a settle window, then every minute; a wait that ends starts over")
    func toldWhenLong() {
        var wait = ArrivalWait()
        let (untold, retold) = (ArrivalWait.untold, ArrivalWait.retold)
        let looks: [(waiting: Bool, now: Double, told: Bool)] = [
            (true, 100, false), (true, 100 + untold - 0.1, false), (true, 100 + untold, true), (true, 100 + untold + 1, false),
            (true, 100 + untold + retold - 0.1, false), (true, 100 + untold + retold, true),
            (false, 300, false), (true, 301, false), (true, 301 + untold, true),
        ]
        for look in looks {
            let told = wait.isDue(waiting: look.waiting, now: look.now)
            #expect(told == look.told, "at \(look.now), waiting: \(look.waiting)")
        }
    }
}
