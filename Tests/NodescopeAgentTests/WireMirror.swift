import NodescopeWire

/// An independent rebuild of a host's tree from its wire stream, written for the tests only:
/// it checks the agent's stream against the host's own snapshots, so it must not share code
/// with either the agent or the collector.
struct WireMirror {
    struct Node {
        var parent: UInt64
        var kind: String
        var name: String
        var state: String = "-"
        var detached = false
        var objects: [UInt16: (role: String, alive: Bool)] = [:]
    }

    var strings: [UInt32: String] = [:]
    var nodes: [UInt64: Node] = [:]
    var inSnapshot = false
    var dropMarkers: [UInt64] = []
    var snapshotCount = 0
    var goodbye: GoodbyeReason?
    /// The retainers frames, in the order received.
    var retainers: [RetainersFrame] = []

    mutating func apply(_ message: WireMessage) {
        switch message {
        case .defineString(let frame):
            strings[frame.stringID] = frame.value
        case .snapshotBegin:
            nodes = [:]
            inSnapshot = true
            snapshotCount += 1
        case .snapshotEnd:
            inSnapshot = false
        case .nodeAttached(let frame):
            nodes[frame.nodeID] = Node(
                parent: frame.parentID, kind: strings[frame.kindStringID] ?? "?", name: strings[frame.nameStringID] ?? "?")
        case .objectAdded(let frame):
            nodes[frame.nodeID]?.objects[frame.objectIndex] = (strings[frame.roleStringID] ?? "?", true)
        case .stateChanged(let frame):
            nodes[frame.nodeID]?.state = "\(frame.state)"
        case .nodeDetached(let frame):
            nodes[frame.nodeID]?.detached = true
            forgetIfGone(frame.nodeID)
        case .objectReleased(let frame):
            nodes[frame.nodeID]?.objects[frame.objectIndex]?.alive = false
            forgetIfGone(frame.nodeID)
        case .dropped(let count):
            dropMarkers.append(count)
        case .goodbye(let reason):
            goodbye = reason
        case .retainers(let frame):
            retainers.append(frame)
        default:
            break
        }
    }

    private mutating func forgetIfGone(_ id: UInt64) {
        guard let node = nodes[id], node.detached, !node.objects.values.contains(where: \.alive) else { return }
        nodes[id] = nil
    }

    /// The same one-line-per-node form that test-host prints.
    var canonicalLines: [String] {
        nodes.keys.sorted().map { id in
            let node = nodes[id]!
            let alive = node.objects.keys.sorted().filter { node.objects[$0]!.alive }.map { node.objects[$0]!.role }
            return "\(id) \(node.parent) \(node.kind) \(node.name) \(node.state) "
                + "\(node.detached ? "detached" : "attached") [\(alive.joined(separator: ","))]"
        }
    }
}

extension WireMessage {
    /// The host event sequence a message belongs to, if it has one.
    var hostSequence: UInt64? {
        switch self {
        case .snapshotBegin(let frame): frame.sequence
        case .nodeAttached(let frame): frame.sequence
        case .objectAdded(let frame): frame.sequence
        case .stateChanged(let frame): frame.sequence
        case .nodeDetached(let frame): frame.sequence
        case .objectReleased(let frame): frame.sequence
        default: nil
        }
    }
}
