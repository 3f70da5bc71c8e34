/// The ids of the nodes a session most recently removed as clean, so that a late event for one of
/// them (a state change after its detach, say) can be told apart from an event for a node that
/// never existed.
///
/// Holds the last ``capacity`` ids (a ring with a set for lookups): exact for any event that
/// arrives before that many further nodes were removed.
struct RemovedNodeLog {
    /// How many ids are remembered.
    static let capacity = 65_536

    private var ring: [UInt64] = []
    private var next = 0
    private var members: Set<UInt64> = []

    /// Remembers `id`, forgetting the oldest id when full.
    mutating func insert(_ id: UInt64) {
        guard members.insert(id).inserted else { return }
        if ring.count < Self.capacity {
            ring.append(id)
        } else {
            members.remove(ring[next])
            ring[next] = id
            next = (next + 1) % Self.capacity
        }
    }

    /// How many ids are remembered.
    var count: Int { ring.count }

    /// Whether `id` was removed recently.
    func contains(_ id: UInt64) -> Bool {
        members.contains(id)
    }

    /// Forgets everything (and frees the memory).
    mutating func removeAll() {
        ring = []
        members = []
        next = 0
    }
}
