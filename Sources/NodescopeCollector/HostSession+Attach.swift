import NodescopeWire

/// How an attach will change a tree, worked out (and checked) before anything changes.
struct AttachPlan {
    /// A placeholder with the node's id, to be filled in instead of inserting a new node.
    var upgrade: UInt32?
    /// The parent's slot, or ``NodeTree/noSlot``.
    var parent: UInt32
    /// Whether the parent is unknown and gets a placeholder.
    var createsParentPlaceholder: Bool
}

extension HostSession {
    /// Checks an attach against `tree` (the live one, or a snapshot's) and plans it.
    ///
    /// `removed` is consulted for deltas only: a snapshot replaces the tree, so ids removed
    /// before do not matter to it.
    func planAttach(
        _ frame: NodeAttachedFrame, in tree: NodeTree, removed: RemovedNodeLog?
    ) throws(SessionError) -> AttachPlan {
        let id = frame.nodeID
        guard id != 0 else { throw SessionError(.unknownNode, "nodeAttached names node 0") }
        guard frame.parentID != id else {
            throw SessionError(.unknownNode, "nodeAttached names node \(id) as its own parent")
        }
        try checkString(frame.kindStringID, optional: false, "kind", of: "nodeAttached")
        try checkString(frame.nameStringID, optional: true, "name", of: "nodeAttached")
        let wasRemoved = removed?.contains(id) ?? false
        var upgrade: UInt32?
        if let existing = tree.slot(of: id) {
            // A node that children named as their parent before it was attached itself.
            guard tree.slots[Int(existing)].phase == .placeholder, !wasRemoved else {
                throw SessionError(.duplicateNode, "nodeAttached for node \(id), which is already in the tree")
            }
            upgrade = existing
        } else if wasRemoved {
            throw SessionError(
                .duplicateNode, "nodeAttached for node \(id), which was attached before (ids are never reused)")
        }
        var parent = NodeTree.noSlot
        var createsPlaceholder = false
        if frame.parentID != 0 {
            if let known = tree.slot(of: frame.parentID) {
                if let upgrade, tree.isAncestor(upgrade, of: known) {
                    throw SessionError(
                        .unknownNode, "nodeAttached puts node \(id) under its own descendant \(frame.parentID)")
                }
                parent = known
            } else {
                createsPlaceholder = true
            }
        }
        let added = (upgrade == nil ? 1 : 0) + (createsPlaceholder ? 1 : 0)
        guard tree.count + added <= settings.maxNodesPerSession else {
            throw SessionError(.tooManyNodes, "the host's tree would exceed \(settings.maxNodesPerSession) nodes")
        }
        return AttachPlan(upgrade: upgrade, parent: parent, createsParentPlaceholder: createsPlaceholder)
    }

    /// Applies a planned attach; returns the node's slot and the parent placeholder created, if any.
    static func applyAttach(
        _ frame: NodeAttachedFrame, plan: AttachPlan, at time: UInt64, in tree: inout NodeTree
    ) -> (slot: UInt32, placeholder: UInt32?) {
        var parent = plan.parent
        var placeholder: UInt32?
        if plan.createsParentPlaceholder {
            parent = tree.insert(
                id: frame.parentID, parent: NodeTree.noSlot, kind: 0, name: 0, attachedAt: time, phase: .placeholder)
            placeholder = parent
        }
        guard let slot = plan.upgrade else {
            let slot = tree.insert(
                id: frame.nodeID, parent: parent, kind: frame.kindStringID, name: frame.nameStringID,
                attachedAt: time, phase: .attached)
            return (slot, placeholder)
        }
        tree.slots[Int(slot)].kind = frame.kindStringID
        tree.slots[Int(slot)].name = frame.nameStringID
        tree.slots[Int(slot)].attachedAt = time
        tree.slots[Int(slot)].phase = .attached
        tree.slots[Int(slot)].state = 0
        tree.slots[Int(slot)].site = 0
        tree.slots[Int(slot)].test = 0
        if parent != NodeTree.noSlot {
            tree.attachRoot(slot, under: parent)
            tree.recomputeDepths(below: slot)
        }
        return (slot, placeholder)
    }
}
