/// A node left the tree; its grace starts now.
///
/// Wire layout (type `0x16`): u64 sequence, u64 timeNanos, u64 nodeID.
public struct NodeDetachedFrame: Equatable, Sendable {
    /// The host's event sequence number.
    public var sequence: UInt64
    /// The host's `CLOCK_MONOTONIC` at the event, in nanoseconds.
    public var timeNanos: UInt64
    /// The node, at least 1.
    public var nodeID: UInt64

    /// Creates a node-detached event.
    public init(sequence: UInt64, timeNanos: UInt64, nodeID: UInt64) {
        self.sequence = sequence
        self.timeNanos = timeNanos
        self.nodeID = nodeID
    }
}
