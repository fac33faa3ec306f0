import Foundation

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
        let process = try ChildProcess(executable, arguments, environment: environment, input: .pipe, output: .pipe, error: .pipe)
        if let stdin { process.standardInput?.write(Data(stdin.utf8)) }
        try? process.standardInput?.close()
        // Read both pipes concurrently so a chatty child never blocks on a full pipe.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errData = process.standardError?.readDataToEndOfFile() ?? Data(); group.leave() }
        let outData = process.standardOutput?.readDataToEndOfFile() ?? Data()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }
}
