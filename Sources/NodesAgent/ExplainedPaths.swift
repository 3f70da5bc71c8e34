import NodesTracking
import NodescopeWire

/// The retainer paths the agent has found, by node, kept so that a collector that connects
/// later (a restarted daemon, a new `check`) learns them too: an analysis runs once per leak.
///
/// Only the writer thread touches it. It keeps the paths of at most ``maxNodes`` nodes, the
/// most recent ones, and forgets a node once a snapshot shows it released.
struct ExplainedPaths {
    /// The most nodes whose paths are kept.
    static let maxNodes = 256

    private var frames: [UInt64: [RetainersFrame]] = [:]
    /// The nodes in the order their first path came.
    private var order: [UInt64] = []

    /// Whether no path is kept.
    var isEmpty: Bool { frames.isEmpty }

    /// Keeps `found`, each in place of an earlier path of the same object.
    mutating func keep(_ found: [RetainersFrame]) {
        for frame in found {
            var paths = frames[frame.nodeID] ?? []
            if paths.isEmpty { order.append(frame.nodeID) }
            paths.removeAll { $0.objectIndex == frame.objectIndex }
            paths.append(frame)
            frames[frame.nodeID] = paths
        }
        if order.count > Self.maxNodes {
            for node in order.prefix(order.count - Self.maxNodes) { frames[node] = nil }
            order.removeFirst(order.count - Self.maxNodes)
        }
    }

    /// The paths of the objects that `snapshot` shows alive in detached nodes, in the order
    /// they were found; the nodes it no longer has (released) are forgotten.
    mutating func stillAlive(in snapshot: TreeSnapshot) -> [RetainersFrame] {
        guard !frames.isEmpty else { return [] }
        var alive: [UInt64: Set<UInt16>] = [:]
        for node in snapshot.nodes where node.isDetached && frames[node.id.rawValue] != nil {
            alive[node.id.rawValue] = Set(node.objects.lazy.filter(\.isAlive).map(\.index))
        }
        order.removeAll { alive[$0] == nil }
        frames = frames.filter { alive[$0.key] != nil }
        return order.flatMap { node in
            (frames[node] ?? []).filter { alive[node]?.contains($0.objectIndex) ?? false }
        }
    }
}
