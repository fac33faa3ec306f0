import Synchronization
import Testing
@testable import Connectivity

/// A stand-in for nmcli that answers from a script and remembers how it was called.
final class FakeRunner: Sendable {
    struct Call: Equatable, Sendable {
        var executable: String
        var arguments: [String]
        var timeout: Duration
    }

    private let answer: Mutex<CommandOutput?>
    private let calls = Mutex<[Call]>([])

    init(_ answer: CommandOutput?) { self.answer = Mutex(answer) }

    var recorded: [Call] { calls.withLock { $0 } }
    func answer(with output: CommandOutput?) { answer.withLock { $0 = output } }

    var runner: MeteredCheck.Runner {
        { executable, arguments, timeout in
            self.calls.withLock { $0.append(Call(executable: executable, arguments: arguments, timeout: timeout)) }
            return self.answer.withLock { $0 }
        }
    }
}

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let instant = Mutex(ContinuousClock.now)
    var now: ContinuousClock.Instant { instant.withLock { $0 } }
    func advance(by duration: Duration) { instant.withLock { $0 = $0.advanced(by: duration) } }
}

@Suite("Metered check")
struct MeteredCheckTests {
    @Test("reads nmcli's answers: yes and guessed yes are metered; no, guessed no and unknown are not",
          arguments: [
              ("GENERAL.METERED:yes\n", MeteredAnswer.metered),
              ("GENERAL.METERED:yes (guessed)\n", .metered),
              ("GENERAL.METERED:no\n", .notMetered),
              ("GENERAL.METERED:no (guessed)\n", .notMetered),
              ("GENERAL.METERED:unknown\n", .unknown),
              ("yes\n", .metered),
              ("", .unknown),
              ("GENERAL.DEVICE:wlan0\nGENERAL.METERED:no\n", .notMetered),
          ])
    func parsing(output: String, expected: MeteredAnswer) {
        let fake = FakeRunner(CommandOutput(status: 0, output: output))
        let check = MeteredCheck(nmcli: "/usr/bin/nmcli", runner: fake.runner)
        let answer = check.answer(forInterface: "wlan0")
        #expect(answer == expected)
        #expect(answer.isMetered == (expected == .metered))
    }

    @Test("asks nmcli in terse form for the one field, with a one-second deadline")
    func invocation() {
        let fake = FakeRunner(CommandOutput(status: 0, output: "GENERAL.METERED:no\n"))
        _ = MeteredCheck(nmcli: "/usr/bin/nmcli", runner: fake.runner).answer(forInterface: "wlp2s0")
        #expect(fake.recorded == [FakeRunner.Call(executable: "/usr/bin/nmcli",
                                                  arguments: ["-t", "-f", "GENERAL.METERED", "dev", "show", "wlp2s0"],
                                                  timeout: .seconds(1))])
    }

    @Test("answers unknown without nmcli, when nmcli fails, and when it times out")
    func unknowns() {
        let fake = FakeRunner(CommandOutput(status: 0, output: "GENERAL.METERED:yes\n"))
        #expect(MeteredCheck(nmcli: nil, runner: fake.runner).answer(forInterface: "wlan0") == .unknown)
        #expect(fake.recorded.isEmpty, "no nmcli, nothing run")

        let failing = FakeRunner(CommandOutput(status: 10, output: "Error: Device 'wlan0' not found.\n"))
        #expect(MeteredCheck(nmcli: "/usr/bin/nmcli", runner: failing.runner).answer(forInterface: "wlan0") == .unknown)

        let hung = FakeRunner(nil)
        #expect(MeteredCheck(nmcli: "/usr/bin/nmcli", runner: hung.runner).answer(forInterface: "wlan0") == .unknown)
    }

    @Test("reuses an answer for a few seconds per interface, then asks again")
    func caching() {
        let fake = FakeRunner(CommandOutput(status: 0, output: "GENERAL.METERED:no\n"))
        let clock = ManualClock()
        let check = MeteredCheck(nmcli: "/usr/bin/nmcli", timeout: .seconds(1), cacheDuration: .seconds(5),
                                 runner: fake.runner, now: { clock.now })
        #expect(check.answer(forInterface: "wlan0") == .notMetered)
        fake.answer(with: CommandOutput(status: 0, output: "GENERAL.METERED:yes\n"))
        clock.advance(by: .seconds(4))
        #expect(check.answer(forInterface: "wlan0") == .notMetered)
        #expect(fake.recorded.count == 1)

        #expect(check.answer(forInterface: "wlan1") == .metered, "another interface is asked about separately")
        #expect(fake.recorded.count == 2)

        clock.advance(by: .seconds(2))
        #expect(check.answer(forInterface: "wlan0") == .metered)
        #expect(fake.recorded.count == 3)
    }

    @Test("finds nmcli on PATH, and not where it is absent")
    func findNmcli() throws {
        let sysfs = try FakeSysfs()   // any empty folder will do
        #expect(MeteredCheck.findNmcli(path: sysfs.root) == nil)
        #expect(MeteredCheck.findNmcli(path: "") == nil)
    }
}

@Suite("Command runner")
struct CommandRunnerTests {
    @Test("captures a program's output and exit status")
    func output() throws {
        let result = try #require(CommandRunner.run("/bin/sh", ["-c", "echo GENERAL.METERED:$LC_ALL; exit 3"], timeout: .seconds(5)))
        #expect(result == CommandOutput(status: 3, output: "GENERAL.METERED:C\n"))
    }

    @Test("kills a program that outlives its deadline and answers nothing")
    func deadline() {
        let clock = ContinuousClock()
        let start = clock.now
        #expect(CommandRunner.run("/bin/sleep", ["10"], timeout: .milliseconds(300)) == nil)
        #expect(clock.now - start < .seconds(2))
    }

    @Test("kills a program that closed its output but did not exit")
    func closedButRunning() {
        let clock = ContinuousClock()
        let start = clock.now
        #expect(CommandRunner.run("/bin/sh", ["-c", "exec >&-; sleep 10"], timeout: .milliseconds(300)) == nil)
        #expect(clock.now - start < .seconds(2))
    }

    @Test("answers nothing for a program that does not exist")
    func missing() {
        #expect(CommandRunner.run("/nonexistent/nmcli", [], timeout: .seconds(1)) == nil)
    }
}
