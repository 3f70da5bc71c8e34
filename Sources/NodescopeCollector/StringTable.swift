/// The strings a host interned on its connection, by id.
///
/// Hosts number ids 1, 2, 3 … in the order of definition, so those live in an array; any other
/// id goes to a dictionary.
struct StringTable {
    private(set) var dense: [String] = []
    private(set) var sparse: [UInt32: String] = [:]
    /// Strings defined.
    private(set) var count = 0
    /// UTF-8 bytes held.
    private(set) var byteCount = 0

    /// The string with `id`, if defined.
    @inline(__always)
    subscript(id: UInt32) -> String? {
        if id != 0, Int(id) <= dense.count { return dense[Int(id) - 1] }
        return sparse[id]
    }

    /// Whether `id` is defined.
    @inline(__always)
    func contains(_ id: UInt32) -> Bool {
        (id != 0 && Int(id) <= dense.count) || sparse[id] != nil
    }

    /// Defines `id`; the caller has checked that it is new and not 0.
    mutating func define(_ id: UInt32, _ value: String) {
        if Int(id) == dense.count + 1 {
            dense.append(value)
        } else {
            sparse[id] = value
        }
        count += 1
        byteCount += value.utf8.count
    }

    /// The string with `id`, or "" for 0 or an undefined id.
    func text(_ id: UInt32) -> String {
        self[id] ?? ""
    }

    /// The table with only the strings whose ids `isUsed` accepts, under the same ids, in
    /// storage of its own: an ended session keeps only what its tree, leaks and origins name,
    /// and the memory of the others is given back.
    func keeping(where isUsed: (UInt32) -> Bool) -> StringTable {
        var kept = StringTable()
        // Ascending ids: a run 1, 2, 3 … that survives whole stays dense.
        for (offset, value) in dense.enumerated() where isUsed(UInt32(offset + 1)) {
            kept.define(UInt32(offset + 1), value)
        }
        for id in sparse.keys.sorted() where isUsed(id) {
            if let value = sparse[id] { kept.define(id, value) }
        }
        return kept
    }
}
