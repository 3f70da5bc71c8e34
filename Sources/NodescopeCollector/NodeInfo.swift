/// One node of a host's tree, as returned by queries and change notifications.
///
/// Built on demand from the collector's compact storage; holding one does not keep anything alive.
public struct NodeInfo: Sendable, Equatable, Codable {
    /// The host's id of the node (never reused within its process).
    public var id: UInt64
    /// The parent's id, or nil for a root of the host's tree. A view focused on a subtree keeps
    /// the real parent of its root here.
    public var parent: UInt64?
    /// The node's kind (its type name, such as `LoginFlow` or `Flow`); empty for a placeholder
    /// whose node was never described.
    public var kind: String
    /// The node's display name; empty when the host sent none.
    public var name: String
    /// The node's lifecycle and leak status.
    public var status: NodeStatus
    /// The node's objects, in index order.
    public var objects: [ObjectInfo]
    /// When the node was attached, in nanoseconds of the collector's clock.
    public var attachedAtNanos: UInt64
    /// When the node was detached, in nanoseconds of the collector's clock; nil while attached.
    public var detachedAtNanos: UInt64?
    /// The node's depth: 0 for the roots of the view (of the whole tree in change notifications).
    public var depth: Int
    /// True for a node kept only to hold the place of nodes below it: a node that was released
    /// cleanly while a descendant (such as a leaked ghost) is still in the tree, or a parent the
    /// collector never knew. Its status is ``NodeStatus/detached``.
    public var isPlaceholder: Bool
    /// Why the node's objects are alive, for a detached node whose host sent retainer paths
    /// (protocol version 2): one path per analysed object, sorted by object index. Nil (absent
    /// in JSON) when there is none, and for attached nodes.
    public var retainers: [RetainerPath]?
    /// Where the node was attached (protocol version 2); nil (absent in JSON) when the host
    /// did not say.
    public var attachSite: SourceSite?
    /// The test the node was attached under (protocol version 2); nil (absent) for none.
    public var test: TestInfo?

    /// Creates a node description.
    public init(
        id: UInt64,
        parent: UInt64?,
        kind: String,
        name: String,
        status: NodeStatus,
        objects: [ObjectInfo],
        attachedAtNanos: UInt64,
        detachedAtNanos: UInt64?,
        depth: Int,
        isPlaceholder: Bool = false,
        retainers: [RetainerPath]? = nil,
        attachSite: SourceSite? = nil,
        test: TestInfo? = nil
    ) {
        self.attachSite = attachSite
        self.test = test
        self.id = id
        self.parent = parent
        self.kind = kind
        self.name = name
        self.status = status
        self.objects = objects
        self.attachedAtNanos = attachedAtNanos
        self.detachedAtNanos = detachedAtNanos
        self.depth = depth
        self.isPlaceholder = isPlaceholder
        self.retainers = retainers
    }

    /// The name shown for the node and used in paths: ``name``, or ``kind`` when the name is
    /// empty, or `?` when both are.
    public var displayName: String {
        if !name.isEmpty { return name }
        return kind.isEmpty ? "?" : kind
    }
}
