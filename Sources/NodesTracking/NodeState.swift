/// A lifecycle state that a node reports while it is attached.
///
/// The raw values are the wire encoding (see docs/PROTOCOL.md).
public enum NodeState: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// The node's flow (or router) has started.
    case started = 1
    /// The node's context (or interactor) is active.
    case active = 2
    /// The node's context (or interactor) is inactive.
    case inactive = 3
    /// The node's flow has ended; a detach follows.
    case ended = 4

    /// The state's name in lower case.
    public var description: String {
        switch self {
        case .started: "started"
        case .active: "active"
        case .inactive: "inactive"
        case .ended: "ended"
        }
    }
}
