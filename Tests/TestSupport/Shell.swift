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
