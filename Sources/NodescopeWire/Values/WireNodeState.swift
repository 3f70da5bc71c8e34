/// The lifecycle state of a node, as carried by ``StateChangedFrame``.
public enum WireNodeState: UInt8, Sendable, CaseIterable {
    /// The node's flow was started.
    case started = 1
    /// The node's context is active.
    case active = 2
    /// The node's context is inactive.
    case inactive = 3
    /// The node's flow has ended.
    case ended = 4
}
