/// What a node in a ``Diagram`` is doing, which decides its colour and line style.
public enum DiagramNodeState: String, Sendable, CaseIterable {
    /// Attached and active: drawn with a green border.
    case active
    /// Attached but not active (for example a context that is not yet activated): drawn grey.
    case inactive
    /// Detached and still inside its grace, awaiting release: drawn orange and dashed.
    case detached
    /// Still alive after its grace ran out: drawn red, with a thick border.
    case leaked
    /// Released after being flagged as leaked: drawn purple and dotted.
    case lateRelease
    /// The process ended abnormally before the node's grace ran out: drawn grey and dashed.
    case unverified
    /// A placeholder that stands for hidden nodes, such as "… 240 more FeedItemFlow".
    case collapsed

    /// Whether a node in this state must stay visible when sibling runs are collapsed.
    var needsAttention: Bool {
        switch self {
        case .detached, .leaked, .lateRelease, .unverified: true
        case .active, .inactive, .collapsed: false
        }
    }

    /// Whether the node is no longer attached to its parent (its edge is drawn dashed).
    var isDetachedFromParent: Bool {
        switch self {
        case .detached, .leaked, .lateRelease, .unverified: true
        case .active, .inactive, .collapsed: false
        }
    }
}
