import FoundationEssentials
import Glibc
import Platform

/// The person's trash, as the freedesktop.org Trash specification lays it out: what a
/// file manager shows and can restore from.
///
/// A file on the same file system as `$XDG_DATA_HOME/Trash` goes there. A file elsewhere
/// (a card, a second disk) goes to the trash at the top of its own file system:
/// `$topdir/.Trash/$uid` when an administrator prepared `$topdir/.Trash` (a folder, not a
/// link, with the sticky bit), else `$topdir/.Trash-$uid`. Files are moved with `rename`
/// (never over a name in the trash), never copied: a file that cannot be moved stays where it is.
public struct Trash: Sendable {
    public var paths: XDGPaths

    public init(paths: XDGPaths = XDGPaths()) { self.paths = paths }

    /// Where a file went.
    public struct Trashed: Sendable, Equatable {
        /// The trash folder used (the one holding `files/` and `info/`).
        public var trash: LocalPath
        /// The file's new path, inside `files/`.
        public var file: LocalPath
        /// Its `.trashinfo`, which remembers where it came from.
        public var info: LocalPath
    }

    /// Moves `file` (a regular file or a link) to the trash. `now` goes into the
    /// `.trashinfo` as the deletion date, in local time as the specification asks.
    @discardableResult
    public func moveToTrash(_ file: LocalPath, now: Date = Date()) throws(TrashError) -> Trashed {
        let st: stat
        do throws(SystemError) { st = try FileIO.linkStatus(file) } catch { throw .cannotRead(file, error) }
        guard st.st_mode & S_IFMT == S_IFREG || st.st_mode & S_IFMT == S_IFLNK else { throw .notAFile(file) }
        let device = st.st_dev
        // The folder's real path: `Path=` must name where the file really was.
        let file = Self.realPath(of: file.absolute().parent).appending(file.lastComponent)

        let home = LocalPath(paths.dataHome).appending("Trash")
        if let homeDevice = try? Self.prepare(home), homeDevice == device {
            return try move(file, into: home, infoPath: file.bytes, now: now)
        }
        let top = Self.mountTop(of: file.parent, device: device)
        let trash = try Self.topTrash(top)
        // On a removable disk the path is kept relative to its top, so it still holds when mounted elsewhere.
        return try move(file, into: trash, infoPath: file.relative(to: top).bytes, now: now)
    }

    // MARK: - Which trash

    /// The trash of the file system whose top is `top`: `.Trash/$uid` if the shared
    /// `.Trash` passes the specification's checks, else `.Trash-$uid`.
    private static func topTrash(_ top: LocalPath) throws(TrashError) -> LocalPath {
        let uid = getuid()
        let shared = top.appending(".Trash")
        if let st = try? FileIO.linkStatus(shared), st.st_mode & S_IFMT == S_IFDIR, st.st_mode & S_ISVTX != 0 {
            let mine = shared.appending("\(uid)")
            if (try? prepare(mine)) != nil { return mine }
        }
        let own = top.appending(".Trash-\(uid)")
        do {
            _ = try prepare(own)
        } catch {
            throw TrashError(code: .noTrash, message: "there is no usable trash on the disk of this file (\(own.display): \(error.reason))",
                             action: "the file is left where it is; delete it yourself if you no longer want it", path: own)
        }
        return own
    }

    /// Makes `trash`, `trash/files` and `trash/info` (mode 0700) if missing, and checks
    /// they are real folders owned by this user. Returns the trash folder's device.
    @discardableResult
    static func prepare(_ trash: LocalPath) throws(SystemError) -> dev_t {
        var device: dev_t = 0
        for folder in [trash, trash.appending("files"), trash.appending("info")] {
            do throws(SystemError) { try FileIO.makeFolder(folder, mode: 0o700) } catch {
                // A missing parent ($XDG_DATA_HOME itself) is made too.
                guard error.errno == ENOENT, folder == trash else { throw error }
                try FileIO.makeDirectory(trash.text, mode: 0o700)
            }
            let st = try FileIO.linkStatus(folder)
            guard st.st_mode & S_IFMT == S_IFDIR, st.st_uid == getuid() else { throw SystemError("trash", errno: EPERM, path: folder.display) }
            if folder == trash { device = st.st_dev }
        }
        return device
    }

    /// The mount point of the file system `folder` is on: the highest folder above it on
    /// the same device.
    static func mountTop(of folder: LocalPath, device: dev_t) -> LocalPath {
        var current = folder
        while current.bytes.count > 1 {
            let parent = current.parent
            guard let st = try? FileIO.status(parent), st.st_dev == device else { break }
            current = parent
        }
        return current
    }

    static func realPath(of folder: LocalPath) -> LocalPath {
        (try? FileIO.realPath(folder)) ?? folder
    }

    // MARK: - Moving

    private func move(_ file: LocalPath, into trash: LocalPath, infoPath: [UInt8], now: Date) throws(TrashError) -> Trashed {
        let name = file.lastComponent
        for attempt in 1...10_000 {
            let stored = Self.name(name, attempt: attempt)
            let info = trash.appending("info").appending(LocalPath(bytes: stored.bytes + Array(".trashinfo".utf8)))
            let target = trash.appending("files").appending(stored)
            // The .trashinfo, created exclusively, is what reserves the name; it is on the
            // disk before the file moves, so a crash never leaves a file the trash cannot restore.
            let text = "[Trash Info]\nPath=\(PercentEncoding.encode(infoPath, keepingSlashes: true))\nDeletionDate=\(Self.localDate(now))\n"
            let created: OpenFile
            do throws(SystemError) { created = try OpenFile(info, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600) } catch {
                if error.errno == EEXIST { continue }
                throw .cannotWrite(info, error)
            }
            do throws(SystemError) {
                try Array(text.utf8).withUnsafeBytes { b in Result { () throws(SystemError) in try FileIO.write(created.descriptor, b, path: info.display) } }.get()
                try created.sync()
                try created.close()
            } catch {
                _ = try? FileIO.unlink(info, ifPresent: true)
                throw .cannotWrite(info, error)
            }
            do throws(SystemError) {
                try Self.moveInPlace(file, to: target)
            } catch {
                _ = try? FileIO.unlink(info, ifPresent: true)
                if error.errno == EEXIST { continue }  // a file without its info already has this name
                throw TrashError(code: .cannotMove, message: "\(file.display) could not be moved to the trash (\(error.reason))",
                                 action: "it is left where it is", path: file)
            }
            return Trashed(trash: trash, file: target, info: info)
        }
        throw TrashError(code: .noTrash, message: "the trash holds too many files named \(name.display)", action: "empty the trash", path: trash)
    }

    /// Puts a file moved to the trash back where it was, unless something is there again;
    /// its `.trashinfo` goes once it is back.
    public func putBack(_ trashed: Trashed, to original: LocalPath) throws(TrashError) {
        do throws(SystemError) {
            try Self.moveInPlace(trashed.file, to: original)
        } catch {
            throw TrashError(code: .cannotMove, message: "\(trashed.file.display) could not be put back as \(original.display) (\(error.reason))",
                             action: "restore it from the trash", path: trashed.file)
        }
        _ = try? FileIO.unlink(trashed.info, ifPresent: true)
    }

    /// Moves `file` to `target` without replacing anything there (`EEXIST` if taken). Where
    /// the file system cannot promise that (`FileIO.moveNoReplace`), `target` is looked at first.
    private static func moveInPlace(_ file: LocalPath, to target: LocalPath) throws(SystemError) {
        do throws(SystemError) {
            try FileIO.moveNoReplace(file, to: target)
        } catch where [EINVAL, ENOSYS].contains(error.errno) {
            if FileIO.nameExists(target) { throw SystemError("rename", errno: EEXIST, path: target.display) }
            try FileIO.rename(file, to: target)
        }
    }

    /// `IMG.jpg`, then `IMG.2.jpg`, `IMG.3.jpg`...
    static func name(_ name: LocalPath, attempt: Int) -> LocalPath {
        guard attempt > 1 else { return name }
        let bytes = name.bytes
        if let dot = bytes.lastIndex(of: UInt8(ascii: ".")), dot > 0 {
            return LocalPath(bytes: Array(bytes[..<dot]) + Array(".\(attempt)".utf8) + Array(bytes[dot...]))
        }
        return LocalPath(bytes: bytes + Array(".\(attempt)".utf8))
    }

    /// `2024-05-01T12:34:56`, local time.
    static func localDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }
}
