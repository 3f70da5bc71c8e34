/// The whole tree a ``NodeTracker`` knows at one instant, including detached nodes that still
/// have live objects. Nodes are in attach order, so every parent precedes its children.
public struct TreeSnapshot: Sendable, Equatable {
    /// The sequence number of the last event that this snapshot includes.
    public let sequence: UInt64
    /// The nodes in attach order.
    public let nodes: [NodeSnapshot]
    /// Every test that nodes were attached under so far, in order, released nodes' tests included.
    public let tests: [TestIdentity]

    /// Creates a snapshot.
    public init(sequence: UInt64, nodes: [NodeSnapshot], tests: [TestIdentity] = []) {
        self.sequence = sequence
        self.nodes = nodes
        self.tests = tests
    }

    /// The node with the given id, if the snapshot has it.
    public func node(_ id: NodeID) -> NodeSnapshot? {
        nodes.first { $0.id == id }
    }

    /// The children of `parent` (roots when `nil`), in attach order.
    public func children(of parent: NodeID?) -> [NodeSnapshot] {
        nodes.filter { $0.parent == parent }
    }

    /// An indented text rendering, one node a line, for logs and samples.
    public func renderedText() -> String {
        var lines: [String] = []
        let childrenByParent = Dictionary(grouping: nodes.compactMap { node in node.parent.map { ($0, node) } }, by: \.0)
            .mapValues { $0.map(\.1) }
        func visit(_ node: NodeSnapshot, depth: Int) {
            let indent = String(repeating: "  ", count: depth)
            let alive = node.objects.filter(\.isAlive).map(\.role.rawValue).joined(separator: ",")
            let mark = node.isDetached ? "detached" : (node.state?.description ?? "attached")
            lines.append("\(indent)\(node.kind) \(node.name) [\(mark)] {\(alive)}")
            for child in childrenByParent[node.id] ?? [] { visit(child, depth: depth + 1) }
        }
        let ids = Set(nodes.map(\.id))
        for root in nodes where root.parent.map({ !ids.contains($0) }) ?? true {
            visit(root, depth: 0)
        }
        return lines.joined(separator: "\n")
    }
}

/// One node of a ``TreeSnapshot``.
public struct NodeSnapshot: Sendable, Equatable {
    /// The node's id.
    public let id: NodeID
    /// Its parent, `nil` for a root.
    public let parent: NodeID?
    /// What kind of unit it is.
    public let kind: NodeKind
    /// Its name, usually the type name of its principal object.
    public let name: String
    /// Its last reported lifecycle state, if any.
    public let state: NodeState?
    /// When it was attached (host monotonic nanoseconds).
    public let attachedAt: UInt64
    /// When it was detached, if it was.
    public let detachedAt: UInt64?
    /// Its objects, by index.
    public let objects: [ObjectSnapshot]
    /// Where it was attached and under which test.
    public let origin: NodeOrigin

    /// Creates a node snapshot.
    public init(
        id: NodeID, parent: NodeID?, kind: NodeKind, name: String, state: NodeState?,
        attachedAt: UInt64, detachedAt: UInt64?, objects: [ObjectSnapshot], origin: NodeOrigin = .unknown
    ) {
        self.origin = origin
        self.id = id
        self.parent = parent
        self.kind = kind
        self.name = name
        self.state = state
        self.attachedAt = attachedAt
        self.detachedAt = detachedAt
        self.objects = objects
    }

    /// Whether the node has left the tree.
    public var isDetached: Bool { detachedAt != nil }
}

/// One watched object of a ``NodeSnapshot``.
public struct ObjectSnapshot: Sendable, Equatable {
    /// The object's index within its node.
    public let index: UInt16
    /// Its role in the node.
    public let role: ObjectRole
    /// Its dynamic type name.
    public let typeName: String
    /// Whether it has not been deallocated yet.
    public let isAlive: Bool

    /// Creates an object snapshot.
    public init(index: UInt16, role: ObjectRole, typeName: String, isAlive: Bool) {
        self.index = index
        self.role = role
        self.typeName = typeName
        self.isAlive = isAlive
    }
}
