import Foundation
import Platform

/// Runs programs from tests.
public enum Shell {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs `executable` to completion and returns its stdout, throwing if it failed.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> String {
        let r = try capture(executable, arguments, environment: environment)
        guard r.status == 0 else { throw TestFailure("\(executable) \(arguments) exited \(r.status): \(r.stderr)") }
        return r.stdout
    }

    /// Runs `executable` to completion and returns everything it said.
    public static func capture(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                               stdin: String? = nil) throws -> Result {
        guard let finished = try ChildProcess.run(executable, arguments, environment: environment, input: stdin, limit: Int.max) else {
            throw TestFailure("\(executable) could not be waited for")
        }
        return Result(status: finished.status, stdout: finished.output, stderr: finished.errors)
    }
}

/// Renames no test can make with Glibc's module alone.
public enum Renames {
    /// Swaps the names of `a` and `b` in one step (`renameat2` with `RENAME_EXCHANGE`, what
    /// `mv --exchange` does), through Python's ctypes: Swift's Glibc module has no `renameat2`.
    public static func exchange(_ a: String, _ b: String) throws {
        let program = """
            import ctypes, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            AT_FDCWD, RENAME_EXCHANGE = -100, 2
            if libc.renameat2(AT_FDCWD, os.fsencode(sys.argv[1]), AT_FDCWD, os.fsencode(sys.argv[2]), RENAME_EXCHANGE) != 0:
                sys.exit(os.strerror(ctypes.get_errno()))
            """
        try Shell.run("/usr/bin/python3", ["-c", program, a, b])
    }
}
