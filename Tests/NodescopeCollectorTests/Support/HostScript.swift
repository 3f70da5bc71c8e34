import NodescopeWire

/// Writes a host stream the way an agent would: numbered events, strings interned on first use.
struct HostScript {
    private(set) var sequence: UInt64 = 0
    private var strings: [String: UInt32] = [:]
    private var pending: [WireMessage] = []

    /// The id of `value`, defining it (queued before the next event) the first time.
    mutating func string(_ value: String) -> UInt32 {
        if let id = strings[value] { return id }
        let id = UInt32(strings.count + 1)
        strings[value] = id
        pending.append(.defineString(DefineStringFrame(stringID: id, value: value)))
        return id
    }

    /// The next sequence number (or the snapshot's, inside one).
    private mutating func nextSequence() -> UInt64 {
        if let snapshotSequence { return snapshotSequence }
        sequence += 1
        return sequence
    }

    /// Set while writing a snapshot: every event carries it.
    var snapshotSequence: UInt64?

    /// Takes the frames queued so far.
    mutating func take() -> [WireMessage] {
        defer { pending = [] }
        return pending
    }

    mutating func attach(
        _ id: UInt64, parent: UInt64 = 0, kind: String, name: String = "", at time: UInt64
    ) -> [WireMessage] {
        let kindID = string(kind)
        let nameID = name.isEmpty ? 0 : string(name)
        let frame = NodeAttachedFrame(
            sequence: nextSequence(), timeNanos: time, nodeID: id, parentID: parent, kindStringID: kindID,
            nameStringID: nameID)
        pending.append(.nodeAttached(frame))
        return take()
    }

    mutating func addObject(_ id: UInt64, index: UInt16, role: String, type: String, at time: UInt64) -> [WireMessage] {
        let roleID = role.isEmpty ? 0 : string(role)
        let typeID = string(type)
        pending.append(
            .objectAdded(
                ObjectAddedFrame(
                    sequence: nextSequence(), timeNanos: time, nodeID: id, objectIndex: index, roleStringID: roleID,
                    typeNameStringID: typeID)))
        return take()
    }

    mutating func state(_ id: UInt64, _ state: WireNodeState, at time: UInt64) -> [WireMessage] {
        [.stateChanged(StateChangedFrame(sequence: nextSequence(), timeNanos: time, nodeID: id, state: state))]
    }

    mutating func detach(_ id: UInt64, at time: UInt64) -> [WireMessage] {
        [.nodeDetached(NodeDetachedFrame(sequence: nextSequence(), timeNanos: time, nodeID: id))]
    }

    mutating func release(_ id: UInt64, index: UInt16, at time: UInt64) -> [WireMessage] {
        [
            .objectReleased(
                ObjectReleasedFrame(sequence: nextSequence(), timeNanos: time, nodeID: id, objectIndex: index))
        ]
    }

    /// Opens a snapshot consistent with the last event (or with `sequence`, after a loss).
    mutating func beginSnapshot(nodeCount: UInt32, sequence: UInt64? = nil) -> [WireMessage] {
        if let sequence { self.sequence = sequence }
        snapshotSequence = self.sequence
        pending.append(.snapshotBegin(SnapshotBeginFrame(sequence: self.sequence, nodeCount: nodeCount)))
        return take()
    }

    mutating func endSnapshot() -> [WireMessage] {
        let sequence = snapshotSequence ?? self.sequence
        snapshotSequence = nil
        return [.snapshotEnd(sequence: sequence)]
    }
}
