import NodescopeWire

/// Retainer paths (protocol version 2): why an object of a detached node is still alive.
extension HostSession {
    /// Stores the path a `retainers` frame carries, on the node and on its leak record if it
    /// has one (whose fingerprint then includes it), and tells subscribers.
    ///
    /// The frame follows the rules of the other frames about nodes: a node or object the
    /// session never knew is a violation (`unknownNode`, `unknownObject`); a node it removed as
    /// released changes nothing. Besides:
    /// - a node that is still attached changes nothing: an analysis only explains a detached
    ///   node, and a path is advice, not worth closing a host's connection over;
    /// - between `dropped` and its snapshot the tree is stale: the path is kept when the node
    ///   is known and detached, and anything else changes nothing;
    /// - beyond the session's bound (``CollectorSettings/maxRetainerPathsPerSession``,
    ///   ``CollectorSettings/maxRetainerBytesPerSession``) a path is ignored.
    mutating func noteRetainers(_ frame: RetainersFrame, into changes: inout [TreeChange]) throws(SessionError) {
        let id = frame.nodeID
        let slot = tree.slot(of: id)
        let nodePhase = slot.map { tree.slots[Int($0)].phase }
        switch nodePhase {
        case .detached?, .leaked?, .lateRelease?, .unverified?:
            break
        case .attached?, .anchor?:
            // Still attached, or released (an anchor stays only for the nodes below it).
            return
        case .placeholder?, nil:
            if phase.isStale || removed.contains(id) { return }
            throw SessionError(.unknownNode, "retainers names node \(id), which was never attached")
        }
        guard let slot else { return }
        let node = tree.slots[Int(slot)]
        guard node.objectPosition(frame.objectIndex) != nil else {
            if phase.isStale { return }
            throw SessionError(
                .unknownObject, "retainers names object \(frame.objectIndex) of node \(id), never added")
        }
        var path = RetainerPath(frame)
        nameHolderNodes(in: &path, heldType: node.objectPosition(frame.objectIndex).map { strings.text(node.objects[$0].typeName) })
        guard
            retainers.store(
                path, for: id, maxCount: settings.maxRetainerPathsPerSession, maxBytes: settings.maxRetainerBytesPerSession)
        else { return }
        var record: LeakRecord?
        if Int(node.leakIndex) < leakRecords.count {
            leakRecords[Int(node.leakIndex)].noteRetainers(path)
            record = leakRecords[Int(node.leakIndex)]
        }
        changes.append(.retainersFound(id: id, path: path, record: record))
    }

    /// Names the node of each hop whose holder is a node's object, by its path and occurrence
    /// (``RetainerPath/Hop/holderNodePath``), where a person could not tell it apart
    /// otherwise: the holder is of the held object's type (`heldType`), or its node's path
    /// has a name that several siblings share (the second login's node beside the first's ghost).
    func nameHolderNodes(in path: inout RetainerPath, heldType: String?) {
        for index in path.hops.indices {
            guard let holder = path.hops[index].holderNodeID, let holderSlot = tree.slot(of: holder) else { continue }
            let (names, shared) = occurrencePath(to: holderSlot)
            if shared || path.hops[index].holder == heldType { path.hops[index].holderNodePath = names }
        }
    }

    /// The path of display names to `slot`, each name followed by its occurrence among the
    /// siblings of that name (``NameOccurrence``, the rule of `diff`: attached ones first, the
    /// first unsuffixed, the second `#1`): `AppFlow › LoggedInFlow#1 › SettingsFlow` names the
    /// first login's detached node while the second login's is attached. `shared` tells whether
    /// some name on the path is shared by siblings.
    func occurrencePath(to slot: UInt32) -> (names: [String], shared: Bool) {
        var names: [String] = []
        var shared = false
        var current = slot
        while current != NodeTree.noSlot, names.count < Self.maxPathNames {
            var name = displayName(current)
            let parent = tree.slots[Int(current)].parent
            let siblings = tree.sortedChildren(of: parent == NodeTree.noSlot ? nil : parent)
            let namesakes = siblings.filter { displayName($0) == name }
            if namesakes.count > 1, let position = namesakes.firstIndex(of: current) {
                let numbers = NameOccurrence.numbers(
                    keys: namesakes.map { _ in 0 },
                    attached: namesakes.map { tree.slots[Int($0)].status.isAttached && !tree.slots[Int($0)].isPlaceholder })
                name = NameOccurrence.suffixed(name, numbers[position])
                shared = true
            }
            names.append(name)
            current = parent
        }
        if current != NodeTree.noSlot { names.append("…") }
        return (names.reversed(), shared)
    }
}
