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

    /// Each thread of process `pid` by name, with the signals it blocks and the signals the
    /// process ignores (`SigBlk`, `SigIgn`), as bit sets: signal N is bit N-1.
    public static func signalMasks(of pid: String) throws -> [(thread: String, blocked: UInt64, ignored: UInt64)] {
        // A thread that ended between the listing and the read is left out.
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").sorted().compactMap { tid in
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8) else { return nil }
            func field(_ name: String) -> Substring? {
                status.split(separator: "\n").first { $0.hasPrefix(name + ":") }?.split(separator: ":").last
            }
            let mask = { (name: String) in UInt64(field(name)?.trimmingCharacters(in: .whitespaces) ?? "", radix: 16) ?? 0 }
            return (String(field("Name")?.trimmingCharacters(in: .whitespaces) ?? tid), mask("SigBlk"), mask("SigIgn"))
        }
    }

    /// The threads of process `pid` (this process by default), each with its name; a thread
    /// that ended between the listing and the read is left out.
    public static func threads(of pid: String = "self") -> [(id: String, name: String)] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).compactMap { tid in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8)).map {
                (tid, $0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
    }
}
