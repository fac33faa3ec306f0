/// The paths a folder's listing showed, each kept as a 64-bit hash: 8 bytes a name, however
/// long, so a folder of a hundred thousand photos is remembered in under a megabyte.
///
/// Two paths with one hash make a name look taken when it is not, which costs one look at
/// the server (the upload's path is asked about before it is avoided), never a file; a name
/// the listing showed is never missed. The hashes are seeded afresh in each process
/// (`Hasher`), so a server cannot choose names that collide.
struct FolderNames {
    /// From the listing, in order for a binary search.
    private var listed: [UInt64]
    /// Made by this agent since.
    private var added: Set<UInt64> = []

    init(hashes: [UInt64]) { listed = hashes.sorted() }

    var count: Int { listed.count + added.count }

    static func hash(_ path: String) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(path)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    func contains(_ path: String) -> Bool {
        let key = Self.hash(path)
        if added.contains(key) { return true }
        var low = 0, high = listed.count
        while low < high {
            let middle = (low + high) / 2
            if listed[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low < listed.count && listed[low] == key
    }

    mutating func insert(_ path: String) { added.insert(Self.hash(path)) }
}
