/// One lifecycle event of the node tree: what the runtime and the generic tracking API emit.
///
/// Events carry a sequence number that is strictly increasing per ``NodeTracker``; a
/// ``TreeSnapshot`` carries the sequence number it is consistent with, so a consumer can splice
/// a snapshot and the events that follow it without gaps or duplicates.
public struct DebugInformation: Sendable, Equatable, CustomStringConvertible {
    /// What happened to the node.
    public enum Change: Sendable, Equatable {
        /// The node joined the tree under `parent` (`nil` for a root).
        case attached(parent: NodeID?, kind: NodeKind, name: String)
        /// An object of the node is now watched for release.
        case objectAdded(index: UInt16, role: ObjectRole, typeName: String)
        /// The node's lifecycle state changed.
        case stateChanged(NodeState)
        /// The node left the tree; its objects are expected to be released now.
        case detached
        /// An object of the node was deallocated.
        case released(index: UInt16, role: ObjectRole, typeName: String)
    }

    /// The tracker-wide sequence number of this event, starting at 1.
    public let sequence: UInt64
    /// When it happened, in nanoseconds of the host's monotonic clock.
    public let time: UInt64
    /// The node it happened to.
    public let node: NodeID
    /// What happened.
    public let change: Change
    /// For an ``Change/attached(parent:kind:name:)`` event: where the node was attached and
    /// under which test; `nil` for other events.
    public let origin: NodeOrigin?

    /// Creates an event; the tracker does this, tests may too.
    public init(sequence: UInt64, time: UInt64, node: NodeID, change: Change, origin: NodeOrigin? = nil) {
        self.sequence = sequence
        self.time = time
        self.node = node
        self.change = change
        self.origin = origin
    }

    /// A one-line summary such as `#3 attached under #1 Flow LoggedInFlow`.
    public var description: String {
        switch change {
        case .attached(let parent, let kind, let name):
            "\(node) attached under \(parent.map(\.description) ?? "root") \(kind) \(name)"
        case .objectAdded(let index, let role, let typeName):
            "\(node) object \(index) \(role) \(typeName)"
        case .stateChanged(let state):
            "\(node) \(state)"
        case .detached:
            "\(node) detached"
        case .released(let index, let role, let typeName):
            "\(node) released \(index) \(role) \(typeName)"
        }
    }
}

/// Receives the events of a ``NodeTracker``.
///
/// `receive` is called synchronously, in sequence order, while the tracker holds its lock: it
/// must be quick (append, enqueue) and must not call back into the tracker.
public protocol DebugSink: AnyObject, Sendable {
    /// Takes one event.
    func receive(_ event: DebugInformation)
}
