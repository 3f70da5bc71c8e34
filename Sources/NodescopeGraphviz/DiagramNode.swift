/// One box of a ``Diagram``: a node of the tree with its type name, kind, parts and state.
public struct DiagramNode: Sendable, Equatable {
    /// The node's identity; unique within a diagram.
    public var id: UInt64
    /// The id of the parent node, or `nil` for a root. Children are drawn in the order of
    /// ``Diagram/nodes``.
    public var parent: UInt64?
    /// The bold first line of the box, normally the type name, such as "FeedFlow".
    public var title: String
    /// The small second line of the box, such as "Flow", "Router" or "Module"; may be empty.
    public var kind: String
    /// The node's objects that are alive, one line each, such as "worker: FeedRefreshWorker ×2".
    public var parts: [String]
    /// The node's objects that are already released, drawn struck through and grey.
    public var releasedParts: [String]
    /// What the node is doing; decides its colours.
    public var state: DiagramNodeState
    /// An optional last line, such as "leaked 1.2 s after detach"; several lines when it holds
    /// newlines.
    public var note: String?
    /// Text shown when the pointer rests on the box (SVG): more than the box has room for.
    /// Lines are separated by newlines.
    public var tooltip: String?

    /// Creates a node.
    public init(
        id: UInt64,
        parent: UInt64?,
        title: String,
        kind: String = "",
        parts: [String] = [],
        releasedParts: [String] = [],
        state: DiagramNodeState = .active,
        note: String? = nil,
        tooltip: String? = nil
    ) {
        self.id = id
        self.parent = parent
        self.title = title
        self.kind = kind
        self.parts = parts
        self.releasedParts = releasedParts
        self.state = state
        self.note = note
        self.tooltip = tooltip
    }
}
