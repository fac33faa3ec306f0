/// A hash table of 4-byte record numbers, for a store that keeps its records in an array
/// and its keys inside them: open addressing, linear probing, at most 70% full.
///
/// It keeps no keys: the caller gives each key's hash and says whether a record matches,
/// and gives the hash of a record when the table grows (`grown`, before an `insert` to a
/// full table). A dictionary would keep a copy
/// of every key beside every value, several times what the record number costs.
struct IndexTable {
    private static let empty: Int32 = -1
    private static let removed: Int32 = -2

    private var slots = [Int32](repeating: IndexTable.empty, count: 8)
    /// Slots that are not empty: records and the marks of removed ones.
    private var occupied = 0
    private(set) var count = 0

    private var mask: Int { slots.count - 1 }

    /// The slot of the record for which `matches` holds, among those with this hash.
    func slot(hash: Int, where matches: (Int32) -> Bool) -> Int? {
        var i = hash & mask
        while true {
            let record = slots[i]
            if record == Self.empty { return nil }
            if record >= 0, matches(record) { return i }
            i = (i + 1) & mask
        }
    }

    func record(at slot: Int) -> Int32 { slots[slot] }

    /// Puts `record` in the slot it held: the caller found it with `slot(hash:where:)`.
    mutating func replace(at slot: Int, with record: Int32) { slots[slot] = record }

    mutating func remove(at slot: Int) {
        slots[slot] = Self.removed
        count -= 1
    }

    /// Whether the next `insert` needs a `grown()` table first.
    var isFull: Bool { (occupied + 1) * 10 > slots.count * 7 }

    /// Adds `record`, whose key is not in the table, to a table not full.
    mutating func insert(_ record: Int32, hash: Int) {
        precondition(!isFull, "an IndexTable grows before it is full")
        var i = hash & mask
        while slots[i] >= 0 { i = (i + 1) & mask }
        if slots[i] == Self.empty { occupied += 1 }
        slots[i] = record
        count += 1
    }

    /// This table with room to add: twice the records' number of slots or more, and the
    /// marks of removed records let go.
    func grown(hashOf: (Int32) -> Int) -> IndexTable {
        var size = 8
        while size < (count + 1) * 2 { size *= 2 }
        var table = IndexTable()
        table.slots = [Int32](repeating: Self.empty, count: size)
        for record in slots where record >= 0 {
            var i = hashOf(record) & table.mask
            while table.slots[i] != Self.empty { i = (i + 1) & table.mask }
            table.slots[i] = record
        }
        table.occupied = count
        table.count = count
        return table
    }
}
