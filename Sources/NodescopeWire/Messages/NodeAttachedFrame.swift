/// A node joined the tree under a parent.
///
/// Wire layout (type `0x13`): u64 sequence, u64 timeNanos, u64 nodeID, u64 parentID,
/// u32 kindStringID, u32 nameStringID.
public struct NodeAttachedFrame: Equatable, Sendable {
    /// The host's event sequence number.
    public var sequence: UInt64
    /// The host's `CLOCK_MONOTONIC` at the event, in nanoseconds.
    public var timeNanos: UInt64
    /// The node's id, at least 1, never reused within a process.
    public var nodeID: UInt64
    /// The parent node's id, or 0 for a root.
    public var parentID: UInt64
    /// The interned id of the node's kind (its type name, such as `LoginFlow`).
    public var kindStringID: UInt32
    /// The interned id of the node's display name, or 0 for none.
    public var nameStringID: UInt32

    /// Creates a node-attached event.
    public init(
        sequence: UInt64,
        timeNanos: UInt64,
        nodeID: UInt64,
        parentID: UInt64,
        kindStringID: UInt32,
        nameStringID: UInt32
    ) {
        self.sequence = sequence
        self.timeNanos = timeNanos
        self.nodeID = nodeID
        self.parentID = parentID
        self.kindStringID = kindStringID
        self.nameStringID = nameStringID
    }
}
