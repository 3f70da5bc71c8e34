/// A node moved to another lifecycle state.
///
/// Wire layout (type `0x15`): u64 sequence, u64 timeNanos, u64 nodeID, u8 state.
public struct StateChangedFrame: Equatable, Sendable {
    /// The host's event sequence number.
    public var sequence: UInt64
    /// The host's `CLOCK_MONOTONIC` at the event, in nanoseconds.
    public var timeNanos: UInt64
    /// The node, at least 1.
    public var nodeID: UInt64
    /// The node's new state.
    public var state: WireNodeState

    /// Creates a state-changed event.
    public init(sequence: UInt64, timeNanos: UInt64, nodeID: UInt64, state: WireNodeState) {
        self.sequence = sequence
        self.timeNanos = timeNanos
        self.nodeID = nodeID
        self.state = state
    }
}
