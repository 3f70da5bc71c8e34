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
    /// In a difference of two trees: only in the second tree. Drawn green.
    case added
    /// In a difference of two trees: only in the first tree. Drawn red and dashed.
    case removed
    /// In a difference of two trees: in both, with a different kind, objects or state. Drawn amber.
    case changed
    /// In a difference of two trees: the same in both. Drawn grey.
    case unchanged

    /// The states of a difference of two trees, whose diagrams get a legend of their own.
    static let differenceStates: [DiagramNodeState] = [.added, .removed, .changed, .unchanged]

    /// Whether a node in this state must stay visible when sibling runs are collapsed.
    var needsAttention: Bool {
        switch self {
        case .detached, .leaked, .lateRelease, .unverified, .added, .removed, .changed: true
        case .active, .inactive, .collapsed, .unchanged: false
        }
    }

    /// Whether the node is no longer attached to its parent, or is not in the second tree of a
    /// difference (its edge is drawn dashed).
    var isDetachedFromParent: Bool {
        switch self {
        case .detached, .leaked, .lateRelease, .unverified, .removed: true
        case .active, .inactive, .collapsed, .added, .changed, .unchanged: false
        }
    }
}
