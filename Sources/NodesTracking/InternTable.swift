/// Values shared by many records, each kept once and referred to by a 32-bit id.
///
/// The registry keeps a node's name, kind and origin, and an object's role and type name, as one
/// id each: nodes of one type attached at one site share them. An id stays until the table
/// holds twice as many values as its last sweep kept (and over 1,024): then its holder marks the
/// ids its records still use and the table forgets the others (``sweep(keeping:)``), so that
/// names made at run time do not pile up. Nothing counts uses as records come and go: a count
/// per use cost two writes of the table for every object an app attaches and releases, and a
/// sweep, rare, reads the records once.
///
/// A few recently used values sit in a small cache picked by a caller's hint, so that the
/// common case (the same few types over and over) is an equality check, not a hash.
struct InternTable<Value: Hashable & Sendable>: Sendable {
    private var values: [Value?] = []
    private var ids: [Value: UInt32] = [:]
    private var freeIDs: [UInt32] = []
    private var cacheValues: [Value?] = Array(repeating: nil, count: Self.cacheSize)
    private var cacheIDs: [UInt32] = Array(repeating: 0, count: Self.cacheSize)
    /// How many values are kept.
    private(set) var count = 0
    /// The count past which a sweep is due.
    private var sweepAt = Self.leastSweep

    private static var cacheSize: Int { 8 }
    private static var leastSweep: Int { 1_024 }

    /// The value of `id`.
    subscript(id: UInt32) -> Value {
        values[Int(id)]!
    }

    /// Every id given so far is below this.
    var idLimit: Int { values.count }

    /// How many sweeps have forgotten values: an id known from before a sweep may now be another
    /// value's.
    private(set) var sweeps = 0

    /// The id of `value`, added when new. `hint` picks the cache entry: equal values should give
    /// equal hints.
    mutating func id(of value: Value, hint: Int) -> UInt32 {
        let entry = hint & (Self.cacheSize - 1)
        if let cached = cacheValues[entry], cached == value { return cacheIDs[entry] }
        let id: UInt32
        if let found = ids[value] {
            id = found
        } else {
            if let reused = freeIDs.popLast() {
                id = reused
                values[Int(id)] = value
            } else {
                id = UInt32(values.count)
                values.append(value)
            }
            ids[value] = id
            count += 1
        }
        cacheValues[entry] = value
        cacheIDs[entry] = id
        return id
    }

    /// Whether the table holds twice as many values as its last sweep kept, and over 1,024:
    /// its holder then marks the ids in use and calls ``sweep(keeping:)``. Asked only where no
    /// id that a record no longer holds is still to be read: before a change that gives ids,
    /// never between a release and the reading of its names.
    var isSweepDue: Bool { count > sweepAt }

    /// Forgets every value whose id is not marked in `used` (indexed by id, ``idLimit`` long).
    mutating func sweep(keeping used: [Bool]) {
        precondition(used.count == values.count, "a sweep's marks cover every id")
        var forgot = false
        for index in values.indices where !used[index] {
            guard let value = values[index] else { continue }
            ids[value] = nil
            values[index] = nil
            freeIDs.append(UInt32(index))
            count -= 1
            forgot = true
        }
        sweepAt = Swift.max(Self.leastSweep, count * 2)
        guard forgot else { return }
        sweeps += 1
        for entry in 0..<Self.cacheSize { cacheValues[entry] = nil }
    }
}
