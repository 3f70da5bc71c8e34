/// One of a node's objects was deallocated.
///
/// Wire layout (type `0x17`): u64 sequence, u64 timeNanos, u64 nodeID, u16 objectIndex.
public struct ObjectReleasedFrame: Equatable, Sendable {
    /// The host's event sequence number.
    public var sequence: UInt64
    /// The host's `CLOCK_MONOTONIC` at the event, in nanoseconds.
    public var timeNanos: UInt64
    /// The node the object belonged to, at least 1.
    public var nodeID: UInt64
    /// The object's index, as announced by its ``ObjectAddedFrame``.
    public var objectIndex: UInt16

    /// Creates an object-released event.
    public init(sequence: UInt64, timeNanos: UInt64, nodeID: UInt64, objectIndex: UInt16) {
        self.sequence = sequence
        self.timeNanos = timeNanos
        self.nodeID = nodeID
        self.objectIndex = objectIndex
    }
}
