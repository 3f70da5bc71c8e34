import NodescopeWire

/// Turns a tracker's snapshots and events into the host stream's frames for one connection,
/// defining each string (kinds, names, roles, type names) the first time it is used.
///
/// A new connection needs a new encoder: string ids are per connection.
struct HostStreamEncoder {
    private var encoder = FrameEncoder()
    private var strings: [String: UInt32] = [:]
    private var nextStringID: UInt32 = 1

    /// Appends the frames of `snapshot`: begin, each node as the events that rebuild it, end.
    mutating func encode(_ snapshot: TreeSnapshot, into buffer: inout [UInt8]) {
        let sequence = snapshot.sequence
        encoder.encode(
            .snapshotBegin(SnapshotBeginFrame(sequence: sequence, nodeCount: UInt32(clamping: snapshot.nodes.count))),
            into: &buffer)
        for node in snapshot.nodes {
            let id = node.id.rawValue
            let kind = intern(node.kind.rawValue, into: &buffer)
            let name = intern(node.name, into: &buffer)
            encoder.encode(
                .nodeAttached(
                    NodeAttachedFrame(
                        sequence: sequence, timeNanos: node.attachedAt, nodeID: id, parentID: node.parent?.rawValue ?? 0,
                        kindStringID: kind, nameStringID: name)), into: &buffer)
            for object in node.objects {
                let role = intern(object.role.rawValue, into: &buffer)
                let typeName = intern(object.typeName, into: &buffer)
                encoder.encode(
                    .objectAdded(
                        ObjectAddedFrame(
                            sequence: sequence, timeNanos: node.attachedAt, nodeID: id, objectIndex: object.index,
                            roleStringID: role, typeNameStringID: typeName)), into: &buffer)
            }
            for object in node.objects where !object.isAlive {
                encoder.encode(
                    .objectReleased(
                        ObjectReleasedFrame(
                            sequence: sequence, timeNanos: node.detachedAt ?? node.attachedAt, nodeID: id,
                            objectIndex: object.index)), into: &buffer)
            }
            if let state = node.state, let wireState = WireNodeState(rawValue: state.rawValue) {
                encoder.encode(
                    .stateChanged(
                        StateChangedFrame(
                            sequence: sequence, timeNanos: node.attachedAt, nodeID: id, state: wireState)), into: &buffer)
            }
            if let detachedAt = node.detachedAt {
                encoder.encode(
                    .nodeDetached(
                        NodeDetachedFrame(
                            sequence: sequence, timeNanos: detachedAt, nodeID: id)), into: &buffer)
            }
        }
        encoder.encode(.snapshotEnd(sequence: sequence), into: &buffer)
    }

    /// Appends the frame of one event (and the definitions of any new strings it uses).
    mutating func encode(_ event: DebugInformation, into buffer: inout [UInt8]) {
        let (sequence, time, id) = (event.sequence, event.time, event.node.rawValue)
        switch event.change {
        case .attached(let parent, let kind, let name):
            let kindID = intern(kind.rawValue, into: &buffer)
            let nameID = intern(name, into: &buffer)
            encoder.encode(
                .nodeAttached(
                    NodeAttachedFrame(
                        sequence: sequence, timeNanos: time, nodeID: id, parentID: parent?.rawValue ?? 0,
                        kindStringID: kindID, nameStringID: nameID)), into: &buffer)
        case .objectAdded(let index, let role, let typeName):
            let roleID = intern(role.rawValue, into: &buffer)
            let typeID = intern(typeName, into: &buffer)
            encoder.encode(
                .objectAdded(
                    ObjectAddedFrame(
                        sequence: sequence, timeNanos: time, nodeID: id, objectIndex: index,
                        roleStringID: roleID, typeNameStringID: typeID)), into: &buffer)
        case .stateChanged(let state):
            guard let wireState = WireNodeState(rawValue: state.rawValue) else { return }
            encoder.encode(
                .stateChanged(
                    StateChangedFrame(
                        sequence: sequence, timeNanos: time, nodeID: id, state: wireState)), into: &buffer)
        case .detached:
            encoder.encode(.nodeDetached(NodeDetachedFrame(sequence: sequence, timeNanos: time, nodeID: id)), into: &buffer)
        case .released(let index, _, _):
            encoder.encode(
                .objectReleased(
                    ObjectReleasedFrame(
                        sequence: sequence, timeNanos: time, nodeID: id, objectIndex: index)), into: &buffer)
        }
    }

    /// Appends any other message (hello, dropped, goodbye).
    mutating func encode(_ message: WireMessage, into buffer: inout [UInt8]) {
        encoder.encode(message, into: &buffer)
    }

    private mutating func intern(_ string: String, into buffer: inout [UInt8]) -> UInt32 {
        if let id = strings[string] { return id }
        let id = nextStringID
        nextStringID &+= 1
        strings[string] = id
        encoder.encode(.defineString(DefineStringFrame(stringID: id, value: string)), into: &buffer)
        return id
    }
}
