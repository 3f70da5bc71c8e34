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
}
