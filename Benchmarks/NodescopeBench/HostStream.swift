import NodescopeWire

/// A synthetic host stream for the collector benchmarks: hello, an empty snapshot, then per
/// node an attach, three objects, a state change, and (for churn) a detach and three releases.
enum HostStream {
    /// The frames of one host: `nodes` nodes under one root; with `churn`, each node is then
    /// detached and released (so the live tree stays small).
    static func bytes(nodes: Int, churn: Bool, pid: UInt32 = 1) -> (bytes: [UInt8], events: Int) {
        var encoder = FrameEncoder()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(nodes * (churn ? 220 : 130))
        encoder.encode(.hello(Hello(role: .host, pid: pid, monotonicNanos: 0, wallNanos: 0, processName: "bench-\(pid)")), into: &bytes)
        for (id, value) in ["Flow", "FeedItemFlow", "flow", "context", "worker", "FeedItemFlowImp", "FeedItemContext", "SyncWorker"]
            .enumerated()
        {
            encoder.encode(.defineString(DefineStringFrame(stringID: UInt32(id + 1), value: value)), into: &bytes)
        }
        encoder.encode(.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), into: &bytes)
        encoder.encode(.snapshotEnd(sequence: 0), into: &bytes)
        var sequence: UInt64 = 0
        var events = 0
        func next() -> UInt64 {
            sequence += 1
            events += 1
            return sequence
        }
        encoder.encode(
            .nodeAttached(NodeAttachedFrame(sequence: next(), timeNanos: 1, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 2)),
            into: &bytes)
        for index in 0..<nodes {
            let id = UInt64(index + 2)
            encoder.encode(
                .nodeAttached(NodeAttachedFrame(sequence: next(), timeNanos: 1, nodeID: id, parentID: 1, kindStringID: 1, nameStringID: 2)),
                into: &bytes)
            for (object, (role, type)) in [(3, 6), (4, 7), (5, 8)].enumerated() {
                encoder.encode(
                    .objectAdded(
                        ObjectAddedFrame(
                            sequence: next(), timeNanos: 1, nodeID: id, objectIndex: UInt16(object), roleStringID: UInt32(role),
                            typeNameStringID: UInt32(type))), into: &bytes)
            }
            encoder.encode(.stateChanged(StateChangedFrame(sequence: next(), timeNanos: 1, nodeID: id, state: .active)), into: &bytes)
            if churn {
                encoder.encode(.nodeDetached(NodeDetachedFrame(sequence: next(), timeNanos: 2, nodeID: id)), into: &bytes)
                for object in 0..<3 {
                    encoder.encode(
                        .objectReleased(ObjectReleasedFrame(sequence: next(), timeNanos: 2, nodeID: id, objectIndex: UInt16(object))),
                        into: &bytes)
                }
            }
        }
        return (bytes, events)
    }
}
