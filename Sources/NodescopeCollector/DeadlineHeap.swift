/// The grace deadlines of detached nodes: a binary min-heap ordered by deadline, then node id.
///
/// Entries are not removed when a node is released in time; a reader checks an entry against the
/// node (``HostSession`` does) and drops stale ones as they reach the top.
struct DeadlineHeap {
    /// One deadline.
    struct Entry {
        var deadline: UInt64
        var id: UInt64
        var slot: UInt32

        @inline(__always)
        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : id < other.id
        }
    }

    private var entries: [Entry] = []

    /// The earliest entry.
    var top: Entry? { entries.first }
    /// Entries held (stale ones included).
    var count: Int { entries.count }

    /// Adds an entry.
    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry.
    @discardableResult
    mutating func pop() -> Entry? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let result = entries.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { break }
            var smallest = left
            if left + 1 < entries.count, entries[left + 1].precedes(entries[left]) { smallest = left + 1 }
            guard entries[smallest].precedes(entries[parent]) else { break }
            entries.swapAt(smallest, parent)
            parent = smallest
        }
        return result
    }

    /// Drops every entry.
    mutating func removeAll() {
        entries = []
    }
}
