/// Opens a snapshot: the host replays its whole current state, then sends a snapshot end.
///
/// Wire layout (type `0x11`): u64 sequence, u32 nodeCount.
public struct SnapshotBeginFrame: Equatable, Sendable {
    /// The host event sequence number the snapshot is consistent with; every event frame inside
    /// the snapshot carries this same sequence.
    public var sequence: UInt64
    /// How many nodes the snapshot holds (each one opens with a node-attached frame).
    public var nodeCount: UInt32

    /// Creates a snapshot opening.
    public init(sequence: UInt64, nodeCount: UInt32) {
        self.sequence = sequence
        self.nodeCount = nodeCount
    }
}
