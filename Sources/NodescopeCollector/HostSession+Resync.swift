import NodescopeWire

extension HostSession {
    /// A host stream that rebuilds this session's state in a fresh session: every string, site
    /// and test under the host's own ids, then a snapshot of the tree at the last sequence.
    /// A recording that starts in the middle of a session (or after a gap) begins with it, so
    /// the deltas that follow refer to ids the replay knows.
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
        var nodeCount: UInt32 = 0
        var stack = tree.sortedChildren(of: nil).reversed().map { ($0, UInt64(0)) }
        while let (slot, parentID) = stack.popLast() {
            let node = tree.slots[Int(slot)]
            var childParent = parentID
            if !node.isPlaceholder {
                childParent = node.id
                nodeCount &+= 1
                nodes.append(
                    .nodeAttached(
                        NodeAttachedFrame(
                            sequence: sequence, timeNanos: node.attachedAt, nodeID: node.id, parentID: parentID, kindStringID: node.kind,
                            nameStringID: node.name)))
                for object in node.objects {
                    nodes.append(
                        .objectAdded(
                            ObjectAddedFrame(
                                sequence: sequence, timeNanos: node.attachedAt, nodeID: node.id, objectIndex: object.index,
                                roleStringID: object.role, typeNameStringID: object.typeName)))
                }
                if let state = WireNodeState(rawValue: node.state) {
                    nodes.append(
                        .stateChanged(StateChangedFrame(sequence: sequence, timeNanos: node.attachedAt, nodeID: node.id, state: state)))
                }
                if node.site != 0 || node.test != 0 {
                    nodes.append(.nodeOrigin(NodeOriginFrame(nodeID: node.id, siteID: node.site, testID: node.test)))
                }
                if node.phase != .attached {
                    nodes.append(.nodeDetached(NodeDetachedFrame(sequence: sequence, timeNanos: node.detachedAt, nodeID: node.id)))
                    for object in node.objects where !object.isAlive {
                        nodes.append(
                            .objectReleased(
                                ObjectReleasedFrame(
                                    sequence: sequence, timeNanos: node.detachedAt, nodeID: node.id, objectIndex: object.index)))
                    }
                }
            }
            for child in tree.sortedChildren(of: slot).reversed() { stack.append((child, childParent)) }
        }
        frames.append(.snapshotBegin(SnapshotBeginFrame(sequence: sequence, nodeCount: nodeCount)))
        frames += nodes
        frames.append(.snapshotEnd(sequence: sequence))
        return frames
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
