import Glibc
import Platform

/// Why a file could not go to the trash. The file is never deleted instead.
public struct TrashError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        case notFound = "not_found"
        case notAFile = "not_a_file"
        case noTrash = "no_trash"
        case cannotMove = "cannot_move"
        case cannotWrite = "cannot_write"
    }

    public var code: Code
    public var message: String
    public var action: String
    public var path: LocalPath?

    public var description: String { "\(message); \(action)" }

    static func cannotRead(_ file: LocalPath, _ error: SystemError) -> TrashError {
        TrashError(code: error.errno == ENOENT ? .notFound : .cannotMove,
                   message: error.errno == ENOENT ? "\(file.display) is no longer there" : "\(file.display): \(error.reason)",
                   action: error.errno == ENOENT ? "nothing to move to the trash" : "it is left where it is", path: file)
    }

    static func notAFile(_ file: LocalPath) -> TrashError {
        TrashError(code: .notAFile, message: "\(file.display) is not a file", action: "only files are moved to the trash", path: file)
    }

    static func cannotWrite(_ info: LocalPath, _ error: SystemError) -> TrashError {
        TrashError(code: .cannotWrite, message: "the trash cannot be written (\(error))", action: "the file is left where it is", path: info)
    }
}
