import Foundation
import Glibc
import Platform

/// Checks local files and writes them to the queue in one transaction, before any network
/// call. Below every front door: `upload`, `share-to` and the watcher share it. A bad file
/// never stops the good ones.
public enum Intake {
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public var path: LocalPath
        public var problem: String
        public var description: String { "\(path.display): \(problem)" }
    }

    public struct Result: Sendable {
        public var ids: [Int64] = []
        public var refused: [Refusal] = []
        /// Files queued under another name than their own: names that are not UTF-8 text
        /// reach the server with U+FFFD in place of the bytes it cannot store.
        public var renamed: [Renamed] = []
    }

    /// A file that goes to the server as `remoteName`, not under its own name.
    public struct Renamed: Sendable, CustomStringConvertible {
        public var path: LocalPath
        public var remoteName: String
        public var description: String { "\(path.lastComponent.display) goes to the server as \(DisplayText.escape(remoteName))" }
    }

    /// Validates each of `files` and queues the good ones for upload into `remoteFolder`.
    public static func enqueueUploads(_ files: [LocalPath], into remoteFolder: String, account: Account, origin: Origin,
                                      ignoreRules: Bool = false, store: QueueStore) throws -> Result {
        var result = Result()
        var items: [NewTransfer] = []
        let folder = RemotePath.normalize(remoteFolder)
        for file in files {
            switch check(file) {
            case .failure(let refusal): result.refused.append(refusal)
            case .success(let fingerprint):
                let absolute = file.absolute()
                let name = absolute.lastComponent.text
                if String(validating: absolute.lastComponent.bytes, as: UTF8.self) == nil {
                    result.renamed.append(Renamed(path: absolute, remoteName: name))
                }
                items.append(NewTransfer(direction: .upload, origin: origin, accountID: account.id, localPath: absolute,
                                         remotePath: RemotePath.join(folder, name), bytesTotal: fingerprint.size,
                                         fingerprint: fingerprint, ignoreRules: ignoreRules))
            }
        }
        result.ids = try store.enqueue(items)
        return result
    }

    /// Is this something we can upload? Regular, readable files only.
    public static func check(_ file: LocalPath) -> Swift.Result<FileFingerprint, Refusal> {
        var st = stat()
        if file.withCString({ stat($0, &st) }) != 0 {
            let e = errno
            switch e {
            case ENOENT: return .failure(Refusal(path: file, problem: "no such file; check the name"))
            case EACCES: return .failure(Refusal(path: file, problem: "permission denied; you cannot read it or a folder above it"))
            default: return .failure(Refusal(path: file, problem: String(cString: strerror(e))))
            }
        }
        switch FileKind.of(mode: st.st_mode) {
        case .regular: break
        case .directory: return .failure(Refusal(path: file, problem: "is a folder; give the files inside it (e.g. \(file.display)/*)"))
        case .fifo: return .failure(Refusal(path: file, problem: "is a pipe (FIFO), not a file; it has no fixed contents to upload"))
        case .socket: return .failure(Refusal(path: file, problem: "is a socket, not a file"))
        case .device: return .failure(Refusal(path: file, problem: "is a device, not a file"))
        case .other: return .failure(Refusal(path: file, problem: "is not a regular file"))
        }
        // Opening proves we can read it now; the agent reopens it per chunk later.
        let fd = file.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        if fd < 0 {
            let e = errno
            return .failure(Refusal(path: file, problem: e == EACCES ? "permission denied; make it readable (chmod u+r) and try again" : String(cString: strerror(e))))
        }
        defer { close(fd) }
        do { return .success(try FileFingerprint.of(descriptor: fd)) } catch {
            return .failure(Refusal(path: file, problem: error.reason))
        }
    }
}
