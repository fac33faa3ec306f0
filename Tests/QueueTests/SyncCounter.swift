import CSQLite
import Foundation
import Glibc

/// SQLite's own file layer with one change: every `xSync` (the fsync that makes a commit
/// survive a power cut) is counted per file before it happens. Installed as the default
/// layer for this test process; files keep SQLite's unix implementation, only their method
/// table is swapped for a copy whose `xSync` and `xClose` count and then call the originals.
enum SyncCounter {
    private struct State {
        /// Per open file (`sqlite3_file*`): its path and its original method table.
        var files: [UnsafeMutableRawPointer: (path: String, methods: UnsafePointer<sqlite3_io_methods>)] = [:]
        /// Per original method table, the counting copy handed out instead.
        var copies: [UnsafeRawPointer: UnsafeMutablePointer<sqlite3_io_methods>] = [:]
        var syncs: [String: Int] = [:]
    }

    // Shared by every connection's thread: only touched under `lock`.
    nonisolated(unsafe) private static var shared = State()
    private static let lock = NSLock()
    nonisolated(unsafe) private static var base: UnsafeMutablePointer<sqlite3_vfs>!

    private static func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&shared)
    }

    /// Makes every connection opened from now on count its syncs. Idempotent.
    static let install: Void = {
        base = sqlite3_vfs_find(nil)
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: base.pointee)
        vfs.pointee.zName = UnsafePointer(strdup("iu-sync-counter"))
        vfs.pointee.pNext = nil
        vfs.pointee.xOpen = { _, name, file, flags, outFlags in
            let rc = SyncCounter.base.pointee.xOpen(SyncCounter.base, name, file, flags, outFlags)
            guard rc == SQLITE_OK, let file, let methods = file.pointee.pMethods, let name else { return rc }
            file.pointee.pMethods = UnsafePointer(SyncCounter.counting(methods, for: file, path: String(cString: name)))
            return rc
        }
        precondition(sqlite3_vfs_register(vfs, 1) == SQLITE_OK)
    }()

    /// Syncs of `path` so far.
    static func syncs(of path: String) -> Int { withState { $0.syncs[path, default: 0] } }

    private static func counting(_ methods: UnsafePointer<sqlite3_io_methods>, for file: UnsafeMutablePointer<sqlite3_file>,
                                 path: String) -> UnsafeMutablePointer<sqlite3_io_methods> {
        withState { s in
            s.files[UnsafeMutableRawPointer(file)] = (path, methods)
            if let copy = s.copies[UnsafeRawPointer(methods)] { return copy }
            let copy = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
            copy.initialize(to: methods.pointee)
            copy.pointee.xSync = { file, flags in
                guard let file else { return SQLITE_MISUSE }
                let original = SyncCounter.withState { s -> UnsafePointer<sqlite3_io_methods>? in
                    guard let entry = s.files[UnsafeMutableRawPointer(file)] else { return nil }
                    s.syncs[entry.path, default: 0] += 1
                    return entry.methods
                }
                guard let original else { return SQLITE_MISUSE }
                return original.pointee.xSync(file, flags)
            }
            copy.pointee.xClose = { file in
                guard let file else { return SQLITE_MISUSE }
                let original = SyncCounter.withState { $0.files.removeValue(forKey: UnsafeMutableRawPointer(file))?.methods }
                guard let original else { return SQLITE_MISUSE }
                // SQLite's close reads its own method table from the file: give it back first.
                file.pointee.pMethods = original
                return original.pointee.xClose(file)
            }
            s.copies[UnsafeRawPointer(methods)] = copy
            return copy
        }
    }
}
