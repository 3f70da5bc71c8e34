import NodescopeWire

/// Snapshots: the replay frames build a new tree, which replaces the session's tree at the end.
extension HostSession {
    /// The snapshot that `frame` opens (in the phases `live` and `awaitingSnapshot`).
    func beginSnapshot(_ frame: SnapshotBeginFrame) throws(SessionError) -> SnapshotBuild {
        if let lastSequence, frame.sequence < lastSequence {
            throw SessionError(
                .sequenceRegression,
                "snapshot at sequence \(frame.sequence) is older than the event at sequence \(lastSequence)")
        }
        guard Int(frame.nodeCount) <= settings.maxNodesPerSession else {
            throw SessionError(
                .tooManyNodes, "snapshot of \(frame.nodeCount) nodes exceeds \(settings.maxNodesPerSession) nodes")
        }
        return SnapshotBuild(sequence: frame.sequence, expectedNodes: frame.nodeCount)
    }

    private func checkReplay(_ sequence: UInt64, _ frame: String, in build: SnapshotBuild) throws(SessionError) {
        guard sequence == build.sequence else {
            throw SessionError(
                .sequenceRegression,
                "\(frame) inside the snapshot at sequence \(build.sequence) carries sequence \(sequence)")
        }
    }

    /// The slot of a node of the snapshot being received.
    private func replaySlot(_ nodeID: UInt64, _ frame: String, in build: SnapshotBuild) throws(SessionError) -> UInt32 {
        guard let slot = build.tree.slot(of: nodeID), build.tree.slots[Int(slot)].phase != .placeholder else {
            throw SessionError(.unknownNode, "\(frame) in a snapshot names node \(nodeID) before its nodeAttached")
        }
        return slot
    }

    mutating func replayAttach(_ frame: NodeAttachedFrame, into build: inout SnapshotBuild) throws(SessionError) {
        try checkReplay(frame.sequence, "nodeAttached", in: build)
        guard build.attachedNodes < build.expectedNodes else {
            throw SessionError(
                .snapshotCountMismatch, "snapshot announced \(build.expectedNodes) nodes and sends more")
        }
        let plan = try planAttach(frame, in: build.tree, removed: nil)
        _ = Self.applyAttach(frame, plan: plan, at: collectorTime(frame.timeNanos), in: &build.tree)
        build.attachedNodes += 1
        eventsIngested &+= 1
    }

    mutating func replayObjectAdded(_ frame: ObjectAddedFrame, into build: inout SnapshotBuild) throws(SessionError) {
        try checkReplay(frame.sequence, "objectAdded", in: build)
        let slot = try replaySlot(frame.nodeID, "objectAdded", in: build)
        try checkObject(frame, slot: slot, in: build.tree)
        _ = build.tree.addObject(ObjectSlot(frame), to: slot)
        eventsIngested &+= 1
    }

    mutating func replayStateChanged(_ frame: StateChangedFrame, into build: inout SnapshotBuild) throws(SessionError) {
        try checkReplay(frame.sequence, "stateChanged", in: build)
        let slot = try replaySlot(frame.nodeID, "stateChanged", in: build)
        build.tree.slots[Int(slot)].state = frame.state.rawValue
        eventsIngested &+= 1
    }

    mutating func replayDetached(_ frame: NodeDetachedFrame, into build: inout SnapshotBuild) throws(SessionError) {
        try checkReplay(frame.sequence, "nodeDetached", in: build)
        let slot = try replaySlot(frame.nodeID, "nodeDetached", in: build)
        guard build.tree.slots[Int(slot)].phase == .attached else {
            throw SessionError(.alreadyDetached, "nodeDetached in a snapshot for node \(frame.nodeID) a second time")
        }
        build.tree.slots[Int(slot)].phase = .detached
        build.tree.slots[Int(slot)].detachedAt = collectorTime(frame.timeNanos)
        eventsIngested &+= 1
    }

    mutating func replayReleased(_ frame: ObjectReleasedFrame, into build: inout SnapshotBuild) throws(SessionError) {
        try checkReplay(frame.sequence, "objectReleased", in: build)
        let slot = try replaySlot(frame.nodeID, "objectReleased", in: build)
        try checkRelease(frame, slot: slot, in: build.tree)
        _ = build.tree.releaseObject(frame.objectIndex, of: slot)
        eventsIngested &+= 1
    }

    /// Replaces the tree with the snapshot's.
    ///
    /// Nodes absent from the snapshot disappear (they were released during the gap: a leaked one
    /// becomes a late release, released at the latest now). Nodes present keep their leak
    /// verdicts: a flagged node that is still detached and alive stays leaked. Detached nodes keep
    /// the detach time of their frame, and are flagged if their grace ended before the host's
    /// watermark (a watermark from before the snapshot: the snapshot is newer still). A parent
    /// missing from the snapshot but known before is kept as a placeholder with its old names,
    /// so a ghost stays under its former parent.
    ///
    /// The build's tree is taken (the build is left empty): its caller leaves the phase
    /// `receivingSnapshot` for `live`.
    mutating func endSnapshot(
        _ build: inout SnapshotBuild, sequence: UInt64, now: UInt64, into changes: inout [TreeChange]
    ) throws(SessionError) {
        guard sequence == build.sequence else {
            throw SessionError(
                .snapshotNesting, "snapshotEnd at sequence \(sequence) closes the snapshot begun at \(build.sequence)")
        }
        guard build.attachedNodes == build.expectedNodes else {
            throw SessionError(
                .snapshotCountMismatch,
                "snapshot announced \(build.expectedNodes) nodes and sent \(build.attachedNodes)")
        }
        var next = NodeTree()
        swap(&next, &build.tree)

        closeRecordsOfVanishedNodes(in: next, now: now)
        keepFormerParents(in: &next, now: now)
        judge(&next, now: now)

        tree = next
        tree.recomputeDepths()
        // Paths of nodes that the snapshot no longer holds are done with (their records keep theirs).
        retainers.removeAll { id in tree.slot(of: id).map { tree.slots[Int($0)].isPlaceholder } ?? true }
        var live = 0
        var unrecordedLeaks = 0
        deadlines.removeAll()
        for slot in tree.usedSlots {
            let node = tree.slots[Int(slot)]
            switch node.phase {
            case .attached: live += 1
            case .detached: queueDeadline(slot)
            case .leaked where node.leakIndex == NodeTree.noSlot: unrecordedLeaks += 1
            default: break
            }
        }
        liveNodes = live
        openLeaks = unrecordedLeaks + leakRecords.count(where: { $0.verdict != .lateRelease })
        lastSequence = sequence
        changes.append(.resynced)
        processDue(into: &changes)
    }

    /// Leaked nodes of the old tree that the snapshot no longer holds were released in the gap.
    private mutating func closeRecordsOfVanishedNodes(in next: NodeTree, now: UInt64) {
        for slot in tree.usedSlots {
            let old = tree.slots[Int(slot)]
            guard old.phase == .leaked else { continue }
            if let kept = next.slot(of: old.id), next.slots[Int(kept)].phase != .placeholder { continue }
            _ = updateRecordToLateRelease(old.leakIndex, at: now)
        }
    }

    /// Fills the snapshot's placeholders (parents it does not hold) from the old tree, linking
    /// them to their own former parents, so paths and ghost placement survive the resync.
    private func keepFormerParents(in next: inout NodeTree, now: UInt64) {
        var work = next.usedSlots.filter { next.slots[Int($0)].phase == .placeholder }
        while let slot = work.popLast() {
            guard let oldSlot = tree.slot(of: next.slots[Int(slot)].id) else { continue }
            let old = tree.slots[Int(oldSlot)]
            next.slots[Int(slot)].kind = old.kind
            next.slots[Int(slot)].name = old.name
            next.slots[Int(slot)].site = old.site
            next.slots[Int(slot)].test = old.test
            next.slots[Int(slot)].attachedAt = old.attachedAt
            // Released during the gap; detached then too, if it was not detached before.
            let wasDetached = old.phase != .attached && old.phase != .placeholder
            next.slots[Int(slot)].detachedAt = wasDetached ? old.detachedAt : now
            next.slots[Int(slot)].state = old.state
            next.slots[Int(slot)].phase = .anchor
            for object in old.objects {
                var released = object
                released.isAlive = false
                _ = next.addObject(released, to: slot)
            }
            guard old.parent != NodeTree.noSlot else { continue }
            let parentID = tree.slots[Int(old.parent)].id
            let parent: UInt32
            if let existing = next.slot(of: parentID) {
                parent = existing
            } else {
                parent = next.insert(
                    id: parentID, parent: NodeTree.noSlot, kind: 0, name: 0, attachedAt: old.attachedAt,
                    phase: .placeholder)
                work.append(parent)
            }
            if !next.isAncestor(slot, of: parent) { next.attachRoot(slot, under: parent) }
        }
    }

    /// Applies the leak check to the snapshot's nodes, children before parents.
    private mutating func judge(_ next: inout NodeTree, now: UInt64) {
        for index in next.slots.indices.reversed() where next.slots[index].id != 0 {
            let slot = UInt32(truncatingIfNeeded: index)
            let node = next.slots[index]
            switch node.phase {
            case .detached:
                var wasFlagged = false
                if let oldSlot = tree.slot(of: node.id) {
                    let old = tree.slots[Int(oldSlot)]
                    if old.phase == .leaked || old.phase == .lateRelease {
                        wasFlagged = true
                        next.slots[index].leakIndex = old.leakIndex
                    }
                }
                switch VerdictRules.resynced(wasFlagged: wasFlagged, hasAliveObject: node.aliveCount > 0) {
                case .leaked:
                    next.slots[index].phase = .leaked
                case .lateRelease:
                    next.slots[index].phase = .lateRelease
                    _ = updateRecordToLateRelease(next.slots[index].leakIndex, at: now)
                case .awaitingRelease:
                    break
                case .released:
                    // The host should have left it out.
                    removed.insert(node.id)
                    next.slots[index].phase = .anchor
                    _ = next.removeEmptyPlaceholders(from: slot)
                }
            case .anchor, .placeholder:
                _ = next.removeEmptyPlaceholders(from: slot)
            case .attached, .leaked, .lateRelease, .unverified:
                break
            }
        }
    }
}
