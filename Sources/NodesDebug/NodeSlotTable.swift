/// A map from node ids to integers, built for a hot path: open addressing
/// with linear probing and a multiplicative hash, instead of a dictionary's SipHash (a fair
/// part of every event's cost). Ids are never 0, so 0 marks an empty bucket; deletion shifts
/// the following entries back, so no tombstones build up.
///
/// (The registry itself now keeps a denser variant of the same table, slots only, comparing
/// ids in its records: see ``NodeRegistry``.)
struct NodeSlotTable {
    private var keys: [UInt64]
    private var values: [Int32]
    private var mask: Int
    private(set) var count = 0

    init(capacity: Int = 64) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        keys = Array(repeating: 0, count: size)
        values = Array(repeating: 0, count: size)
        mask = size - 1
    }

    @inline(__always)
    private func bucket(of key: UInt64) -> Int {
        // Fibonacci hashing: spreads sequential ids over the table.
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 20) & mask
    }

    /// The slot of `key`, if present.
    subscript(key: UInt64) -> Int? {
        var index = bucket(of: key)
        while true {
            let found = keys[index]
            if found == key { return Int(values[index]) }
            if found == 0 { return nil }
            index = (index &+ 1) & mask
        }
    }

    /// Sets the slot of `key` (not 0).
    mutating func set(_ key: UInt64, to value: Int) {
        if (count + 1) * 2 > keys.count { grow() }
        var index = bucket(of: key)
        while keys[index] != 0, keys[index] != key { index = (index &+ 1) & mask }
        if keys[index] == 0 { count += 1 }
        keys[index] = key
        values[index] = Int32(truncatingIfNeeded: value)
    }

    /// Removes `key` if present.
    mutating func remove(_ key: UInt64) {
        var index = bucket(of: key)
        while keys[index] != key {
            if keys[index] == 0 { return }
            index = (index &+ 1) & mask
        }
        keys[index] = 0
        count -= 1
        // Backward-shift: move later entries of the same probe run into the hole.
        var hole = index
        var next = (index &+ 1) & mask
        while keys[next] != 0 {
            let home = bucket(of: keys[next])
            // The entry at `next` may move to `hole` only if its home is not in (hole, next].
            let distanceToHole = (next &- home) & mask
            let distanceToNext = (next &- hole) & mask
            if distanceToHole >= distanceToNext {
                keys[hole] = keys[next]
                values[hole] = values[next]
                keys[next] = 0
                hole = next
            }
            next = (next &+ 1) & mask
        }
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldValues = values
        keys = Array(repeating: 0, count: oldKeys.count * 2)
        values = Array(repeating: 0, count: oldKeys.count * 2)
        mask = keys.count - 1
        count = 0
        for index in oldKeys.indices where oldKeys[index] != 0 { set(oldKeys[index], to: Int(oldValues[index])) }
    }
}
