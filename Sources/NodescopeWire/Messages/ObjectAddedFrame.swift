/// An object (flow, context, worker, view …) became part of a node and is watched for release.
///
/// Wire layout (type `0x14`): u64 sequence, u64 timeNanos, u64 nodeID, u16 objectIndex,
/// u32 roleStringID, u32 typeNameStringID.
public struct ObjectAddedFrame: Equatable, Sendable {
    /// The host's event sequence number.
    public var sequence: UInt64
    /// The host's `CLOCK_MONOTONIC` at the event, in nanoseconds.
    public var timeNanos: UInt64
    /// The node the object belongs to, at least 1.
    public var nodeID: UInt64
    /// The object's index within its node, used by the release frame.
    public var objectIndex: UInt16
    /// The interned id of the object's role in the node (such as `flow` or `worker`).
    public var roleStringID: UInt32
    /// The interned id of the object's type name.
    public var typeNameStringID: UInt32

    /// Creates an object-added event.
    public init(
        sequence: UInt64,
        timeNanos: UInt64,
        nodeID: UInt64,
        objectIndex: UInt16,
        roleStringID: UInt32,
        typeNameStringID: UInt32
    ) {
        self.sequence = sequence
        self.timeNanos = timeNanos
        self.nodeID = nodeID
        self.objectIndex = objectIndex
        self.roleStringID = roleStringID
        self.typeNameStringID = typeNameStringID
    }
}
