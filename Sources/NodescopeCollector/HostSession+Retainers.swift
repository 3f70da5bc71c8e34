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
        let phase = slot.map { tree.slots[Int($0)].phase }
        switch phase {
        case .detached?, .leaked?, .lateRelease?, .unverified?:
            break
        case .attached?, .anchor?:
            // Still attached, or released (an anchor stays only for the nodes below it).
            return
        case .placeholder?, nil:
            if awaitingSnapshot || removed.contains(id) { return }
            throw SessionError(.unknownNode, "retainers names node \(id), which was never attached")
        }
        guard let slot else { return }
        let node = tree.slots[Int(slot)]
        guard node.objectPosition(frame.objectIndex) != nil else {
            if awaitingSnapshot { return }
            throw SessionError(
                .unknownObject, "retainers names object \(frame.objectIndex) of node \(id), never added")
        }
        let path = RetainerPath(frame)
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
}
