/// A host's tree, or a subtree of it, at the moment of the query.
///
/// ``wallNanos`` says when the tree stood so: the collector is clockless, so whoever answers
/// (the daemon, a recording's replay) stamps it.
///
/// ``nodes`` is in depth-first pre-order, children in attach order (ascending id). When the view
/// is depth-limited, the nodes whose children were cut are listed in ``truncatedChildren``.
public struct TreeView: Sendable, Equatable, Codable {
    /// The session the tree belongs to.
    public var session: SessionID
    /// The host's process id.
    public var pid: UInt32
    /// The host's process name.
    public var processName: String
    /// The nodes in depth-first pre-order; ``NodeInfo/depth`` is 0 for the view's roots. Empty
    /// when the tree is empty or when the asked root path matched no node.
    public var nodes: [NodeInfo]
    /// For each node whose children were cut by the depth limit: how many children it has.
    /// Encoded as an object keyed by the node id in decimal.
    public var truncatedChildren: [UInt64: Int]
    /// Where the whole process's nodes stand (not only the view's), as `ps` counts them; nil
    /// when unknown (a tree read from a file written before counts existed).
    public var counts: NodeCounts?
    /// When the tree stood so, ns since the Unix epoch: the time of the question for a process
    /// still connected, the end of an ended one, the instant a recording was replayed to. Nil
    /// when unknown (a tree read from a file written before the stamp existed); a diagram's title
    /// states it, so that a tree drawn live and from its recording says the same.
    public var wallNanos: UInt64?

    /// Creates a view.
    public init(
        session: SessionID, pid: UInt32, processName: String, nodes: [NodeInfo],
        truncatedChildren: [UInt64: Int] = [:], counts: NodeCounts? = nil, wallNanos: UInt64? = nil
    ) {
        self.session = session
        self.pid = pid
        self.processName = processName
        self.nodes = nodes
        self.truncatedChildren = truncatedChildren
        self.counts = counts
        self.wallNanos = wallNanos
    }

    private enum CodingKeys: String, CodingKey {
        case session, pid, processName, nodes, truncatedChildren, counts, wallNanos
    }

    /// Decodes a view; ``truncatedChildren`` is read from an object keyed by decimal node ids.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        session = try container.decode(SessionID.self, forKey: .session)
        pid = try container.decode(UInt32.self, forKey: .pid)
        processName = try container.decode(String.self, forKey: .processName)
        nodes = try container.decode([NodeInfo].self, forKey: .nodes)
        let cut = try container.decode([String: Int].self, forKey: .truncatedChildren)
        var truncated: [UInt64: Int] = [:]
        for (key, count) in cut {
            guard let id = UInt64(key) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .truncatedChildren, in: container,
                    debugDescription: "truncatedChildren key \(key) is not a node id")
            }
            truncated[id] = count
        }
        truncatedChildren = truncated
        counts = try container.decodeIfPresent(NodeCounts.self, forKey: .counts)
        wallNanos = try container.decodeIfPresent(UInt64.self, forKey: .wallNanos)
    }

    /// Encodes a view; ``truncatedChildren`` becomes an object keyed by decimal node ids.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(session, forKey: .session)
        try container.encode(pid, forKey: .pid)
        try container.encode(processName, forKey: .processName)
        try container.encode(nodes, forKey: .nodes)
        var cut: [String: Int] = [:]
        for (id, count) in truncatedChildren { cut[String(id)] = count }
        try container.encode(cut, forKey: .truncatedChildren)
        try container.encodeIfPresent(counts, forKey: .counts)
        try container.encodeIfPresent(wallNanos, forKey: .wallNanos)
    }
}
