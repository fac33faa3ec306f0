import Foundation

/// What the kernel counts of a thread (`/proc/PID/task/TID/status`).
public enum ThreadStats {
    /// Voluntary plus involuntary context switches of thread `tid` of process `pid` (this
    /// process by default): each wake-up adds one.
    public static func contextSwitches(_ tid: String, of pid: String = "self") throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8)
        return status.split(separator: "\n").filter { $0.contains("ctxt_switches") }
            .compactMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }.reduce(0, +)
    }
}
