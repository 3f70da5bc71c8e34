/// The retainer paths of one session's detached nodes, by node id, and the bound on how many a
/// session may send.
///
/// The bound counts every path accepted over the session's life (a path that replaces another
/// counts again), so the memory that paths take, here and in the leak records that copy them,
/// never exceeds it, whatever a host sends.
struct RetainerStore {
    /// Each node's paths, sorted by object index, one per object.
    private var paths: [UInt64: [RetainerPath]] = [:]
    /// Paths accepted so far.
    private(set) var accepted = 0
    /// About how many bytes the accepted paths took.
    private(set) var acceptedBytes = 0
    /// Paths refused by the bound.
    private(set) var refused = 0

    /// Whether no node has a path (checked before any lookup, so trees without retainers cost
    /// nothing more to read).
    var isEmpty: Bool { paths.isEmpty }

    /// The paths of node `id`, sorted by object index.
    func paths(of id: UInt64) -> [RetainerPath] {
        paths[id] ?? []
    }

    /// Stores `path` for node `id`, replacing the path of the same object, unless the session
    /// has used up its bound (`maxCount` paths, `maxBytes` bytes): then it is refused and false
    /// is returned.
    mutating func store(_ path: RetainerPath, for id: UInt64, maxCount: Int, maxBytes: Int) -> Bool {
        let bytes = path.approximateBytes
        guard accepted < maxCount, acceptedBytes + bytes <= maxBytes else {
            refused += 1
            return false
        }
        accepted += 1
        acceptedBytes += bytes
        paths[id, default: []].insertOrReplace(path)
        return true
    }

    /// Forgets the paths of node `id`.
    mutating func remove(_ id: UInt64) {
        paths[id] = nil
    }

    /// Forgets the paths of the nodes for which `isGone` is true.
    mutating func removeAll(where isGone: (UInt64) -> Bool) {
        guard !paths.isEmpty else { return }
        for id in paths.keys where isGone(id) { paths[id] = nil }
    }
}

extension [RetainerPath] {
    /// Inserts `path` in object-index order, replacing the path of the same object.
    mutating func insertOrReplace(_ path: RetainerPath) {
        if let position = firstIndex(where: { $0.objectIndex >= path.objectIndex }) {
            if self[position].objectIndex == path.objectIndex {
                self[position] = path
            } else {
                insert(path, at: position)
            }
        } else {
            append(path)
        }
    }
}
