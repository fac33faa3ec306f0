import Glibc
import Platform

/// Whether NetworkManager counts a connection as metered (a phone's hotspot, a data plan).
public enum MeteredAnswer: Sendable, Equatable {
    case metered
    case notMetered
    /// NetworkManager does not know, is not running, does not manage the device, or
    /// there is no nmcli to ask. Treated as not metered: most Wi-Fi is not.
    case unknown

    /// Only a definite yes holds transfers back.
    public var isMetered: Bool { self == .metered }
}

/// Asks NetworkManager, through nmcli, whether the connection on an interface is metered.
///
/// Answers are kept for a few seconds: the agent asks whenever it dispatches, and
/// starting nmcli for each transfer would cost more than the question is worth.
public final class MeteredCheck: Sendable {
    /// Runs a program with a deadline; nil when it could not start or did not finish.
    public typealias Runner = @Sendable (_ executable: String, _ arguments: [String], _ timeout: Duration) -> CommandOutput?

    private let nmcli: String?
    private let timeout: Duration
    private let cacheDuration: Duration
    private let runner: Runner
    private let now: @Sendable () -> ContinuousClock.Instant
    private let cache = Locked<[String: (answer: MeteredAnswer, until: ContinuousClock.Instant)]>([:])

    /// - Parameters:
    ///   - nmcli: the nmcli executable; nil when NetworkManager's client is not installed.
    ///   - timeout: how long nmcli may take before the answer is "unknown".
    ///   - cacheDuration: how long an answer is reused for the same interface.
    ///   - runner: how programs are run; tests pass a fake.
    public convenience init(nmcli: String? = MeteredCheck.findNmcli(), timeout: Duration = .seconds(1),
                            cacheDuration: Duration = .seconds(5), runner: Runner? = nil) {
        self.init(nmcli: nmcli, timeout: timeout, cacheDuration: cacheDuration,
                  runner: runner ?? { CommandRunner.run($0, $1, timeout: $2) }, now: { ContinuousClock.now })
    }

    init(nmcli: String?, timeout: Duration, cacheDuration: Duration, runner: @escaping Runner,
         now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.nmcli = nmcli
        self.timeout = timeout
        self.cacheDuration = cacheDuration
        self.runner = runner
        self.now = now
    }

    /// Whether the connection on `interface` is metered, from the cache or from
    /// `nmcli -t -f GENERAL.METERED dev show <interface>`.
    public func answer(forInterface interface: String) -> MeteredAnswer {
        guard let nmcli else { return .unknown }
        let at = now()
        if let cached = cache.withLock({ $0[interface] }), at < cached.until { return cached.answer }
        let answer: MeteredAnswer
        if let result = runner(nmcli, ["-t", "-f", "GENERAL.METERED", "dev", "show", interface], timeout), result.status == 0 {
            answer = Self.parse(result.output)
        } else {
            // Not managed by NetworkManager, NetworkManager not running, or too slow.
            answer = .unknown
        }
        cache.withLock { $0[interface] = (answer, at.advanced(by: cacheDuration)) }
        return answer
    }

    /// Reads nmcli's terse output, `GENERAL.METERED:yes (guessed)`, or just the value.
    static func parse(_ output: String) -> MeteredAnswer {
        for line in output.split(whereSeparator: \.isNewline) {
            var value = Substring(line)
            if let colon = line.firstIndex(of: ":") {
                guard line[..<colon] == "GENERAL.METERED" else { continue }
                value = line[line.index(after: colon)...]
            }
            switch value.split(separator: " ").first.map(String.init)?.lowercased() {
            case "yes": return .metered
            case "no": return .notMetered
            case "unknown": return .unknown
            default: continue
            }
        }
        return .unknown
    }

    /// nmcli on `PATH` (or the usual places when PATH is unset), if installed.
    public static func findNmcli(path: String? = ProcessEnvironment.current["PATH"]) -> String? {
        ChildProcess.find("nmcli", path: path)
    }
}
