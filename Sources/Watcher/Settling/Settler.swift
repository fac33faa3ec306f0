import Platform

/// Holds candidates until their size and mtime have stood still for the settle window.
///
/// A camera app or a copy closes the file when done, but some writers close and reopen
/// (or pause) mid-file. Each touch (another `IN_CLOSE_WRITE`, another sighting) restarts
/// the wait; when a wait ends the file is looked at again, and only a file that has not
/// changed since is settled. Deadlines are all "last touch + window", so they come due in
/// the order of the touches: a queue in touch order, with stale entries skipped, gives the
/// next deadline without a search. Pure: the clock and the look at the file are passed in.
struct Settler {
    let window: Duration

    private struct Entry {
        var fingerprint: FileFingerprint
        var noticedBy: FoundFile.NoticedBy
        var generation: UInt64
    }

    /// A candidate whose wait is over.
    struct Settled: Equatable {
        var path: LocalPath
        var fingerprint: FileFingerprint
        var noticedBy: FoundFile.NoticedBy
    }

    private var entries: [LocalPath: Entry] = [:]
    private var queue: [(deadline: ContinuousClock.Instant, path: LocalPath, generation: UInt64)] = []
    /// Longer waits (`postpone`), out of touch order; few at a time, searched.
    private var postponed: [(deadline: ContinuousClock.Instant, path: LocalPath, generation: UInt64)] = []
    private var head = 0
    private var nextGeneration: UInt64 = 0

    init(window: Duration) { self.window = window }

    var count: Int { entries.count }
    func isPending(_ path: LocalPath) -> Bool { entries[path] != nil }

    /// Whether the file with this device and inode waits, under any name. A walk through
    /// every wait: asked only for a new file at a name the memory holds for another file.
    func isPending(_ identity: FileIdentity) -> Bool { entries.values.contains { $0.fingerprint.identity == identity } }

    /// (Re)starts the wait for `path`, last seen with `fingerprint`.
    mutating func touch(_ path: LocalPath, _ fingerprint: FileFingerprint, noticedBy: FoundFile.NoticedBy,
                        now: ContinuousClock.Instant) {
        nextGeneration += 1
        entries[path] = Entry(fingerprint: fingerprint, noticedBy: noticedBy, generation: nextGeneration)
        queue.append((now + window, path, nextGeneration))
    }

    /// Waits for `path`, last seen with `fingerprint`, until `deadline` rather than one
    /// window (a file that looks cut short); a touch meanwhile ends this wait.
    mutating func postpone(_ path: LocalPath, _ fingerprint: FileFingerprint, noticedBy: FoundFile.NoticedBy,
                           until deadline: ContinuousClock.Instant) {
        nextGeneration += 1
        entries[path] = Entry(fingerprint: fingerprint, noticedBy: noticedBy, generation: nextGeneration)
        postponed.removeAll { entries[$0.path]?.generation != $0.generation }
        postponed.append((deadline, path, nextGeneration))
    }

    mutating func remove(_ path: LocalPath) { entries[path] = nil }

    /// Forgets everything at or below `folder`.
    mutating func removeAll(under folder: LocalPath) {
        entries = entries.filter { !$0.key.isWithin(folder) }
    }

    mutating func removeAll() {
        entries = [:]
        queue = []
        postponed = []
        head = 0
    }

    /// Follows a rename inside the tree: the wait goes on under the new name(s).
    mutating func move(_ old: LocalPath, to new: LocalPath, now: ContinuousClock.Instant) {
        let moving = entries.filter { $0.key.isWithin(old) }
        for (path, entry) in moving {
            entries[path] = nil
            touch(path.moved(from: old, to: new), entry.fingerprint, noticedBy: entry.noticedBy, now: now)
        }
    }

    /// When the next wait ends; nil when nothing waits.
    mutating func nextDeadline() -> ContinuousClock.Instant? {
        dropStale()
        var next = head < queue.count ? queue[head].deadline : nil
        for wait in postponed where entries[wait.path]?.generation == wait.generation {
            next = next.map { min($0, wait.deadline) } ?? wait.deadline
        }
        return next
    }

    /// Ends every wait due at `now`: a file that `look` finds unchanged is settled and
    /// returned; a changed one waits again; one that is gone (nil) is forgotten.
    mutating func settle(now: ContinuousClock.Instant, look: (LocalPath) -> FileFingerprint?) -> [Settled] {
        var settled: [Settled] = []
        var due: [(path: LocalPath, generation: UInt64)] = postponed.filter { $0.deadline <= now }.map { ($0.path, $0.generation) }
        postponed.removeAll { $0.deadline <= now }
        while true {
            dropStale()
            guard head < queue.count, queue[head].deadline <= now else { break }
            due.append((queue[head].path, queue[head].generation))
            head += 1
        }
        for (path, generation) in due {
            guard let entry = entries[path], entry.generation == generation else { continue }
            switch look(path) {
            case nil:
                entries[path] = nil
            case let current? where current == entry.fingerprint:
                entries[path] = nil
                settled.append(Settled(path: path, fingerprint: current, noticedBy: entry.noticedBy))
            case let current?:
                touch(path, current, noticedBy: entry.noticedBy, now: now)
            }
        }
        compact()
        return settled
    }

    private mutating func dropStale() {
        while head < queue.count, entries[queue[head].path]?.generation != queue[head].generation { head += 1 }
    }

    /// Lets go of the room a sweep of a large folder took, once most of it is unused:
    /// arrays and dictionaries keep their largest size until they are made anew.
    private mutating func compact() {
        if head > 1024, head * 2 > queue.count {
            queue = Array(queue[head...])
            head = 0
        }
        if entries.capacity > 1024, entries.count * 8 < entries.capacity {
            entries = entries.filter { _ in true }
        }
    }
}
