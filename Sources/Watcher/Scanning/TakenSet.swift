import Platform

/// An in-memory `TakenFiles`: the agent loads it from its database when a rule starts and
/// adds to it as it takes files.
///
/// A file is known by its fingerprint (device, inode, size, mtime). It is also known by
/// its path when size and mtime to the nanosecond still match but device or inode do not:
/// that is the same card mounted again under another device number, or the folder
/// restored from a backup with its times (`cp -a`, `rsync -a`).
///
/// A rule on a photo library remembers every photo in it for as long as the agent runs,
/// so the memory is kept small: each file is one 48-byte record (its fingerprint, its
/// folder, where its name is), its name's bytes in one shared buffer, each folder's path
/// once, and two tables of record numbers to find it by path and by fingerprint. That is
/// 90 to 120 bytes a file, where dictionaries of paths took 340. Renaming a folder renames
/// one folder entry per folder below it, not every file's path.
public final class TakenSet: TakenFiles {
    private let memory: Locked<Store>

    /// `compactNamesFrom`: how many bytes of names let go are kept before the names are
    /// stored anew (small in tests, so that they do it often).
    init(compactNamesFrom: Int) {
        memory = Locked(Store(compactNamesFrom: compactNamesFrom))
    }

    public convenience init() { self.init(compactNamesFrom: 65_536) }

    public var count: Int { memory.withLock { $0.byPath.count } }

    /// Remembers that the file at `path` with this fingerprint was taken.
    public func insert(_ fingerprint: FileFingerprint, at path: LocalPath) {
        memory.withLock { $0.insert(fingerprint, at: Store.Split(path)) }
    }

    /// Forgets what was taken at `path`: a file there is new again.
    public func remove(_ path: LocalPath) {
        memory.withLock { m in
            guard let (slot, record) = m.find(Store.Split(path)) else { return }
            m.remove(record, pathSlot: slot)
            m.compactNamesIfWorthIt()
        }
    }

    /// Follows a rename: the file (or every file below the folder) at `old` is now at `new`.
    public func move(_ old: LocalPath, to new: LocalPath) {
        memory.withLock { m in
            m.move(old, to: new)
            m.compactNamesIfWorthIt()
        }
    }

    /// The files at `a` and `b` swapped names.
    public func exchange(_ a: LocalPath, _ b: LocalPath) {
        memory.withLock { m in
            LocalPath.exchange(a, b) { m.move($0, to: $1) }
            m.compactNamesIfWorthIt()
        }
    }

    public func identity(takenAt path: LocalPath) -> FileIdentity? {
        memory.withLock { m in
            m.find(Store.Split(path)).map { m.records[Int($0.record)].fingerprint }
        }?.identity
    }

    public func status(of fingerprint: FileFingerprint, at path: LocalPath) -> TakenStatus {
        let split = Store.Split(path)
        return memory.withLock { m in
            if let record = m.owner(of: fingerprint) {
                return m.isAt(record, split) ? .taken : .takenAt(m.path(of: record))
            }
            if let (_, record) = m.find(split) {
                let known = m.records[Int(record)].fingerprint
                if known.size == fingerprint.size, known.mtimeNanoseconds == fingerprint.mtimeNanoseconds { return .taken }
            }
            return .new
        }
    }
}

extension TakenSet {
    /// The records and their tables; every access holds the set's lock.
    private struct Store {
        /// A path as its folder (up to and with its last `/`) and its name: the two put
        /// together again are the path, byte for byte.
        struct Split {
            var folder: ArraySlice<UInt8>
            var name: ArraySlice<UInt8>

            init(_ path: LocalPath) {
                let cut = (path.bytes.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1
                folder = path.bytes[..<cut]
                name = path.bytes[cut...]
            }
        }

        struct Record {
            var fingerprint: FileFingerprint
            /// Its folder's number; `Store.unused` for a record free to be used again.
            var folder: UInt32
            var nameStart: UInt32
            var nameCount: UInt16
        }

        static let unused = UInt32.max

        var records: [Record] = []
        var freeRecords: [Int32] = []
        /// Every record's name, one after the other; a removed or renamed file's bytes stay
        /// until they are half of it.
        var names: [UInt8] = []
        var namesUnused = 0
        let compactNamesFrom: Int
        /// The folders by path (with their last `/`), their paths and their files' numbers
        /// by folder number.
        var folderNumbers: [ArraySlice<UInt8>: UInt32] = [:]
        var folders: [(path: ArraySlice<UInt8>, files: Int)] = []
        var freeFolders: [UInt32] = []
        /// Records by folder and name, and by fingerprint. When several paths have one
        /// fingerprint (hard links), the last one taken or moved is the one found by it.
        var byPath = IndexTable()
        var byFingerprint = IndexTable()

        func name(of record: Record) -> ArraySlice<UInt8> {
            names[Int(record.nameStart)..<Int(record.nameStart) + Int(record.nameCount)]
        }

        func path(of record: Int32) -> LocalPath {
            let r = records[Int(record)]
            return LocalPath(bytes: Array(folders[Int(r.folder)].path) + name(of: r))
        }

        func isAt(_ record: Int32, _ split: Split) -> Bool {
            let r = records[Int(record)]
            return folderNumbers[split.folder] == r.folder && name(of: r).elementsEqual(split.name)
        }

        static func pathHash(folder: UInt32, name: ArraySlice<UInt8>) -> Int {
            var hasher = Hasher()
            hasher.combine(folder)
            name.withUnsafeBytes { hasher.combine(bytes: $0) }
            return hasher.finalize()
        }

        func pathHash(of record: Int32) -> Int {
            let r = records[Int(record)]
            return Self.pathHash(folder: r.folder, name: name(of: r))
        }

        func fingerprintHash(of record: Int32) -> Int { records[Int(record)].fingerprint.hashValue }

        /// The record at `split`, and its slot in `byPath`.
        func find(_ split: Split) -> (slot: Int, record: Int32)? {
            guard let folder = folderNumbers[split.folder] else { return nil }
            return find(folder: folder, name: split.name)
        }

        func find(folder: UInt32, name: ArraySlice<UInt8>) -> (slot: Int, record: Int32)? {
            let slot = byPath.slot(hash: Self.pathHash(folder: folder, name: name)) { i in
                let r = records[Int(i)]
                return r.folder == folder && self.name(of: r).elementsEqual(name)
            }
            return slot.map { ($0, byPath.record(at: $0)) }
        }

        func owner(of fingerprint: FileFingerprint) -> Int32? {
            ownerSlot(of: fingerprint).map { byFingerprint.record(at: $0) }
        }

        private func ownerSlot(of fingerprint: FileFingerprint) -> Int? {
            byFingerprint.slot(hash: fingerprint.hashValue) { records[Int($0)].fingerprint == fingerprint }
        }

        mutating func insert(_ fingerprint: FileFingerprint, at split: Split) {
            let record: Int32
            if let (_, known) = find(split) {
                record = known
                disown(record)
                records[Int(record)].fingerprint = fingerprint
            } else {
                let folder = folderNumber(split.folder)
                record = newRecord(Record(fingerprint: fingerprint, folder: folder, nameStart: 0, nameCount: 0))
                place(record, folder: folder, name: split.name)
            }
            own(record)
        }

        /// Forgets `record`, found in `byPath` at `pathSlot`.
        mutating func remove(_ record: Int32, pathSlot: Int) {
            byPath.remove(at: pathSlot)
            disown(record)
            let r = records[Int(record)]
            namesUnused += Int(r.nameCount)
            leave(r.folder)
            records[Int(record)].folder = Self.unused
            freeRecords.append(record)
        }

        mutating func move(_ old: LocalPath, to new: LocalPath) {
            let (from, to) = (Split(old), Split(new))
            if let (slot, record) = find(from), !(from.folder == to.folder && from.name == to.name) {
                if let (taken, there) = find(to) { remove(there, pathSlot: taken) }
                byPath.remove(at: slot)
                let before = records[Int(record)]
                namesUnused += Int(before.nameCount)
                leave(before.folder)
                place(record, folder: folderNumber(to.folder), name: to.name)
                disown(record)
                own(record)
            }
            moveFolders(within: old.bytes, to: new.bytes)
        }

        /// Renames every folder at or below `old` (a folder's path, without its last `/`).
        private mutating func moveFolders(within old: [UInt8], to new: [UInt8]) {
            let moving = folderNumbers.filter { path, _ in
                path.starts(with: old)
                    && (old.last == UInt8(ascii: "/") || (path.count > old.count && path[path.startIndex + old.count] == UInt8(ascii: "/")))
            }
            guard !moving.isEmpty else { return }
            for (path, _) in moving { folderNumbers[path] = nil }
            var merging: [UInt32: UInt32] = [:]
            for (path, number) in moving {
                let renamed = ArraySlice(new + path.dropFirst(old.count))
                folders[Int(number)].path = renamed
                if let other = folderNumbers[renamed] {
                    // Moved onto a folder remembered already: its files join that folder's.
                    merging[number] = other
                } else {
                    folderNumbers[renamed] = number
                }
            }
            if !merging.isEmpty { merge(merging) }
        }

        /// Moves every file of each folder in `merging` into the folder it maps to, each
        /// replacing the file of its name there, as a rename over it does: one pass over
        /// the records for a whole tree renamed onto another.
        private mutating func merge(_ merging: [UInt32: UInt32]) {
            for record in records.indices {
                let number = records[record].folder
                guard let other = merging[number] else { continue }
                let name = self.name(of: records[record])
                if let (slot, _) = find(folder: number, name: name) { byPath.remove(at: slot) }
                // Counted in first, so that the file it replaces does not leave `other` empty.
                records[record].folder = other
                folders[Int(other)].files += 1
                if let (slot, there) = find(folder: other, name: name) { remove(there, pathSlot: slot) }
                index(Int32(record), byPathHash: Self.pathHash(folder: other, name: name))
            }
            for number in merging.keys {
                folders[Int(number)] = ([], 0)
                freeFolders.append(number)
            }
        }

        private mutating func newRecord(_ value: Record) -> Int32 {
            if let free = freeRecords.popLast() {
                records[Int(free)] = value
                return free
            }
            records.append(value)
            return Int32(records.count - 1)
        }

        /// Gives `record` its folder and name, and finds it by them.
        private mutating func place(_ record: Int32, folder: UInt32, name: ArraySlice<UInt8>) {
            records[Int(record)].folder = folder
            records[Int(record)].nameStart = UInt32(names.count)
            records[Int(record)].nameCount = UInt16(name.count)
            names.append(contentsOf: name)
            folders[Int(folder)].files += 1
            index(record, byPathHash: Self.pathHash(folder: folder, name: name))
        }

        private mutating func index(_ record: Int32, byPathHash hash: Int) {
            if byPath.isFull { byPath = byPath.grown { pathHash(of: $0) } }
            byPath.insert(record, hash: hash)
        }

        /// Makes `record` the one found by its fingerprint.
        private mutating func own(_ record: Int32) {
            let fingerprint = records[Int(record)].fingerprint
            if let slot = ownerSlot(of: fingerprint) {
                byFingerprint.replace(at: slot, with: record)
            } else {
                if byFingerprint.isFull { byFingerprint = byFingerprint.grown { fingerprintHash(of: $0) } }
                byFingerprint.insert(record, hash: fingerprint.hashValue)
            }
        }

        /// Stops finding its fingerprint at `record`, if it did.
        private mutating func disown(_ record: Int32) {
            let fingerprint = records[Int(record)].fingerprint
            if let slot = byFingerprint.slot(hash: fingerprint.hashValue, where: { $0 == record }) {
                byFingerprint.remove(at: slot)
            }
        }

        private mutating func folderNumber(_ path: ArraySlice<UInt8>) -> UInt32 {
            if let known = folderNumbers[path] { return known }
            let stored = ArraySlice(Array(path))
            let number: UInt32
            if let free = freeFolders.popLast() {
                number = free
                folders[Int(number)] = (stored, 0)
            } else {
                number = UInt32(folders.count)
                folders.append((stored, 0))
            }
            folderNumbers[stored] = number
            return number
        }

        /// One file fewer in folder `number`; a folder with none is forgotten.
        private mutating func leave(_ number: UInt32) {
            folders[Int(number)].files -= 1
            guard folders[Int(number)].files == 0 else { return }
            folderNumbers[folders[Int(number)].path] = nil
            folders[Int(number)].path = []
            freeFolders.append(number)
        }

        /// Stores the names anew once those let go are half the buffer. Only at the end of a
        /// public operation: records' name offsets change, and no name is in use then.
        mutating func compactNamesIfWorthIt() {
            guard namesUnused > compactNamesFrom, namesUnused * 2 > names.count else { return }
            var kept: [UInt8] = []
            kept.reserveCapacity(names.count - namesUnused)
            for i in records.indices where records[i].folder != Self.unused {
                let name = self.name(of: records[i])
                records[i].nameStart = UInt32(kept.count)
                kept.append(contentsOf: name)
            }
            names = kept
            namesUnused = 0
        }
    }
}
