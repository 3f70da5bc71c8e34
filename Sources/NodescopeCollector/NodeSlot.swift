import NodescopeWire

/// Where a stored node is in the leak state machine (internal; ``NodeStatus`` is what queries show).
enum NodePhase: UInt8 {
    /// Attached; ``NodeSlot/state`` holds its last reported state.
    case attached
    /// Detached with an object alive, grace running.
    case detached
    /// Grace ran out with an object alive.
    case leaked
    /// Was leaked, then fully released.
    case lateRelease
    /// Was detached when its session ended, without a definite verdict.
    case unverified
    /// Detached and released cleanly, kept only because nodes below it are still in the tree.
    case anchor
    /// A parent that the collector never knew (or no longer knows), kept for its children.
    case placeholder
}

/// One object of a stored node: interned ids instead of strings (12 bytes).
struct ObjectSlot {
    /// The role's string id, 0 for none.
    var role: UInt32
    /// The type name's string id.
    var typeName: UInt32
    /// The object's index within its node.
    var index: UInt16
    /// Whether it has not been released.
    var isAlive: Bool

    init(role: UInt32, typeName: UInt32, index: UInt16, isAlive: Bool) {
        self.role = role
        self.typeName = typeName
        self.index = index
        self.isAlive = isAlive
    }

    /// The object an `objectAdded` frame announces, alive.
    init(_ frame: ObjectAddedFrame) {
        self.init(role: frame.roleStringID, typeName: frame.typeNameStringID, index: frame.objectIndex, isAlive: true)
    }
}

/// A node as the collector stores it: compact, no strings (80 bytes plus its arrays).
///
/// Fields are declared largest first so that the struct packs without holes.
struct NodeSlot {
    /// The host's node id; 0 marks a free slot.
    var id: UInt64
    /// Attach time, collector clock.
    var attachedAt: UInt64
    /// Detach time, collector clock; meaningful once detached.
    var detachedAt: UInt64
    /// Child slots; unordered (removal swaps the last child in), sorted by id when read.
    var children: [UInt32]
    /// Objects, sorted by index.
    var objects: [ObjectSlot]
    /// Parent slot, or ``NodeTree/noSlot`` for a root.
    var parent: UInt32
    /// Position in the parent's ``children`` (or in the tree's roots).
    var indexInParent: UInt32
    /// Kind string id (0 for a placeholder never described).
    var kind: UInt32
    /// Name string id, 0 for none.
    var name: UInt32
    /// Depth in the tree, 0 for a root.
    var depth: UInt32
    /// Objects not released yet.
    var aliveCount: UInt32
    /// Index of the node's record in its session's leak list, or ``NodeTree/noSlot``.
    var leakIndex: UInt32
    /// The session's id of the node's attach site (`defineSite`), 0 when unknown.
    var site: UInt32 = 0
    /// The session's id of the test the node was attached under (`defineTest`), 0 for none.
    var test: UInt32 = 0
    /// Leak-machine phase.
    var phase: NodePhase
    /// Last reported ``WireNodeState`` raw value, 0 for none.
    var state: UInt8

    /// An unused slot.
    static let free = NodeSlot(
        id: 0, attachedAt: 0, detachedAt: 0, children: [], objects: [], parent: NodeTree.noSlot,
        indexInParent: 0, kind: 0, name: 0, depth: 0, aliveCount: 0, leakIndex: NodeTree.noSlot,
        phase: .attached, state: 0)

    /// The status queries show for this node.
    var status: NodeStatus {
        switch phase {
        case .attached:
            switch state {
            case 1: .started
            case 2: .active
            case 3: .inactive
            case 4: .ended
            default: .attached
            }
        case .detached, .anchor, .placeholder: .detached
        case .leaked: .leaked
        case .lateRelease: .lateRelease
        case .unverified: .unverified
        }
    }

    /// Whether the node is shown as a placeholder.
    var isPlaceholder: Bool { phase == .anchor || phase == .placeholder }

    /// The position of the object with `index` in ``objects``, found by a direct hit (hosts
    /// number objects 0, 1, 2 …) or a binary search.
    func objectPosition(_ index: UInt16) -> Int? {
        let direct = Int(index)
        if direct < objects.count, objects[direct].index == index { return direct }
        var low = 0
        var high = objects.count
        while low < high {
            let middle = (low + high) / 2
            if objects[middle].index < index { low = middle + 1 } else { high = middle }
        }
        return low < objects.count && objects[low].index == index ? low : nil
    }

    /// Where an object with `index` goes to keep ``objects`` sorted, or nil if the index is used.
    func objectInsertionPoint(_ index: UInt16) -> Int? {
        if let last = objects.last {
            if last.index < index { return objects.count }
        } else {
            return 0
        }
        if objectPosition(index) != nil { return nil }
        var low = 0
        var high = objects.count
        while low < high {
            let middle = (low + high) / 2
            if objects[middle].index < index { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
