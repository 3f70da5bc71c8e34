import NodescopeWire

extension HostSession {
    /// A host stream that rebuilds this session's state in a fresh session: every string, site
    /// and test under the host's own ids, a snapshot of the tree at the last sequence, the
    /// retainer paths the host sent, and the host's watermark. A recording that starts in the
    /// middle of a session (or after a gap) begins with it, so that its replay holds what the
    /// collector held at that moment (paths through released parents, the retain paths and so
    /// the fingerprints, the verdicts whose grace had run out), and the deltas that follow refer
    /// to ids the replay knows.
    ///
    /// Times go out on the host's clock, as the host's own frames do.
    /// - A released node kept for the nodes below it (an anchor) goes out as attached, detached
    ///   and released within the snapshot: the replay keeps it as the same anchor, so a ghost's
    ///   path still names its former parents.
    /// - A parent the collector never knew (a placeholder) is named as its children's parent,
    ///   and the replay keeps a placeholder for it too.
    /// - After the snapshot, each node's retainer paths, then a heartbeat at the host's
    ///   watermark (for a host that sends heartbeats), which flags in the replay what the
    ///   collector had flagged.
    func resyncStream() -> [WireMessage] {
        var frames: [WireMessage] = []
        for (id, value) in strings.definitions() {
            frames.append(.defineString(DefineStringFrame(stringID: id, value: value)))
        }
        for (id, site) in origins.sites.sorted(by: { $0.key < $1.key }) {
            frames.append(.defineSite(DefineSiteFrame(siteID: id, fileStringID: site.file, line: site.line)))
        }
        for (id, test) in origins.tests.sorted(by: { $0.key < $1.key }) {
            frames.append(.defineTest(DefineTestFrame(testID: id, suiteStringID: test.suite, nameStringID: test.name, siteID: test.site)))
        }
        let sequence = lastSequence ?? 0
        var nodes: [WireMessage] = []
        var paths: [WireMessage] = []
        var nodeCount: UInt32 = 0
        var stack = tree.sortedChildren(of: nil).reversed().map { ($0, UInt64(0)) }
        while let (slot, parentID) = stack.popLast() {
            let node = tree.slots[Int(slot)]
            // A placeholder is no node of the host's, but its children name it as their parent.
            let childParent = node.id
            if node.phase != .placeholder {
                nodeCount &+= 1
                appendNode(node, parentID: parentID, sequence: sequence, to: &nodes)
                if !retainers.isEmpty {
                    for path in retainers.paths(of: node.id) { paths.append(.retainers(RetainersFrame(path, nodeID: node.id))) }
                }
            }
            for child in tree.sortedChildren(of: slot).reversed() { stack.append((child, childParent)) }
        }
        frames.append(.snapshotBegin(SnapshotBeginFrame(sequence: sequence, nodeCount: nodeCount)))
        frames += nodes
        frames.append(.snapshotEnd(sequence: sequence))
        frames += paths
        if watermark.heartbeatsSeen, let time = watermark.time {
            frames.append(.heartbeat(monotonicNanos: clock.hostTime(time)))
        }
        return frames
    }

    /// The frames that describe `node` within a snapshot: attached, objects, state, origin,
    /// and for a detached node its detach and the releases of its released objects (an anchor's
    /// objects are all released).
    private func appendNode(_ node: NodeSlot, parentID: UInt64, sequence: UInt64, to nodes: inout [WireMessage]) {
        let attachedAt = clock.hostTime(node.attachedAt)
        nodes.append(
            .nodeAttached(
                NodeAttachedFrame(
                    sequence: sequence, timeNanos: attachedAt, nodeID: node.id, parentID: parentID, kindStringID: node.kind,
                    nameStringID: node.name)))
        for object in node.objects {
            nodes.append(
                .objectAdded(
                    ObjectAddedFrame(
                        sequence: sequence, timeNanos: attachedAt, nodeID: node.id, objectIndex: object.index,
                        roleStringID: object.role, typeNameStringID: object.typeName)))
        }
        if let state = WireNodeState(rawValue: node.state) {
            nodes.append(.stateChanged(StateChangedFrame(sequence: sequence, timeNanos: attachedAt, nodeID: node.id, state: state)))
        }
        if node.site != 0 || node.test != 0 {
            nodes.append(.nodeOrigin(NodeOriginFrame(nodeID: node.id, siteID: node.site, testID: node.test)))
        }
        guard node.phase != .attached else { return }
        let detachedAt = clock.hostTime(node.detachedAt)
        nodes.append(.nodeDetached(NodeDetachedFrame(sequence: sequence, timeNanos: detachedAt, nodeID: node.id)))
        for object in node.objects where !object.isAlive || node.phase == .anchor {
            nodes.append(
                .objectReleased(
                    ObjectReleasedFrame(sequence: sequence, timeNanos: detachedAt, nodeID: node.id, objectIndex: object.index)))
        }
    }
}

extension StringTable {
    /// Every definition, by ascending id.
    func definitions() -> [(UInt32, String)] {
        var result = dense.enumerated().map { (UInt32($0.offset + 1), $0.element) }
        result += sparse.sorted { $0.key < $1.key }
        return result
    }
}

extension Collector {
    /// A host stream that rebuilds `session`'s state in a fresh session (its strings, sites,
    /// tests and a snapshot of its tree), for a recording that starts mid-session; nil for an
    /// unknown session.
    public func resyncStream(_ session: SessionID) -> [WireMessage]? {
        sessionValue(session)?.resyncStream()
    }
}
