/// Values shared by many records, each kept once and referred to by a 32-bit id, with a count
/// of the records that use it.
///
/// The registry keeps a node's name, kind and origin, and an object's role and type name, as one
/// id each: nodes of one type attached at one site share them. An id whose count falls to zero
/// stays until unused ids outnumber used ones (a node type that comes and goes is not hashed
/// again each time), then they are swept, so that names made at run time do not pile up.
///
/// A few recently used values sit in a small cache picked by a caller's hint, so that the
/// common case (the same few types over and over) is an equality check, not a hash.
struct InternTable<Value: Hashable & Sendable>: Sendable {
    private var values: [Value?] = []
    private var counts: [UInt32] = []
    private var ids: [Value: UInt32] = [:]
    private var freeIDs: [UInt32] = []
    /// Ids whose count is zero but which are still in `ids`.
    private var unused = 0
    private var cacheValues: [Value?] = Array(repeating: nil, count: Self.cacheSize)
    private var cacheIDs: [UInt32] = Array(repeating: 0, count: Self.cacheSize)

    private static var cacheSize: Int { 8 }

    /// The value of `id`.
    subscript(id: UInt32) -> Value {
        values[Int(id)]!
    }

    /// How many distinct values are kept (used or awaiting the sweep).
    var count: Int { ids.count }

    /// How many sweeps have run: an id known from before a sweep may now be another value's.
    private(set) var sweeps = 0

    /// The id of `value`, counting one more use. `hint` picks the cache entry: equal values
    /// should give equal hints.
    mutating func retain(_ value: Value, hint: Int) -> UInt32 {
        let entry = hint & (Self.cacheSize - 1)
        if let cached = cacheValues[entry], cached == value {
            let id = cacheIDs[entry]
            retain(id: id)
            return id
        }
        let id: UInt32
        if let found = ids[value] {
            id = found
            retain(id: id)
        } else {
            if let reused = freeIDs.popLast() {
                id = reused
                values[Int(id)] = value
                counts[Int(id)] = 1
            } else {
                id = UInt32(values.count)
                values.append(value)
                counts.append(1)
            }
            ids[value] = id
        }
        cacheValues[entry] = value
        cacheIDs[entry] = id
        return id
    }

    /// Counts one more use of `id`.
    @inline(__always)
    mutating func retain(id: UInt32) {
        // Read once, written once: each access of the array checks its bounds (and a write
        // its uniqueness).
        let index = Int(id)
        let count = counts[index]
        if count == 0 { unused -= 1 }
        counts[index] = count &+ 1
    }

    /// Counts one use of `id` less. A value that nothing uses stays readable by its id until
    /// the next ``sweepIfDue()``: a caller may still read what it just released.
    mutating func release(_ id: UInt32) {
        let index = Int(id)
        let count = counts[index] - 1
        counts[index] = count
        guard count == 0 else { return }
        unused += 1
    }

    /// Forgets the values that nothing uses once they outnumber the used ones (and number over
    /// 1,024). Called only where no id of an unused value is still to be read: before a change
    /// that adds uses, never inside a release.
    mutating func sweepIfDue() {
        if unused > 1_024, unused * 2 > ids.count { sweep() }
    }

    /// Forgets the values that nothing uses.
    private mutating func sweep() {
        for index in counts.indices where counts[index] == 0 {
            guard let value = values[index] else { continue }
            ids[value] = nil
            values[index] = nil
            freeIDs.append(UInt32(index))
        }
        unused = 0
        sweeps += 1
        for entry in 0..<Self.cacheSize { cacheValues[entry] = nil }
    }
}
