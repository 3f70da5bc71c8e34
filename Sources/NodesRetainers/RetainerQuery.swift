import NodesTracking

/// What a retainer analysis is asked, as the tracker knows it: the objects to explain, the
/// objects of attached nodes (roots where a holder path starts), and the alive objects of every
/// detached node (the leaking set). Addresses are obfuscated.
struct RetainerQuery {
    /// The alive objects of the nodes to explain.
    var targets: [RetainerAnalysis.Target] = []
    /// The alive objects of attached nodes.
    var attached: [RetainerAnalysis.NodeObject] = []
    /// The alive objects of detached nodes, the targets' included.
    var detached: [RetainerAnalysis.NodeObject] = []

    /// The query that explains nothing.
    init() {}

    /// The query that explains `nodes`, from the tracker's `registry`.
    init(explaining nodes: Set<NodeID>, in registry: NodeRegistry) {
        guard !nodes.isEmpty else { return }
        attached.reserveCapacity(registry.count * 4)
        registry.forEachAliveObject { id, isAttached, index, address, descriptor in
            var object = RetainerAnalysis.NodeObject(nodeID: id, address: address)
            guard !isAttached else {
                attached.append(object)
                return
            }
            object.role = registry.roleName(ofDescriptor: descriptor)
            detached.append(object)
            if nodes.contains(NodeID(rawValue: id)) {
                targets.append(
                    RetainerAnalysis.Target(
                        nodeID: id, objectIndex: index, address: address,
                        typeName: registry.typeName(ofDescriptor: descriptor)))
            }
        }
        targets.sort { ($0.nodeID, $0.objectIndex) < ($1.nodeID, $1.objectIndex) }
    }
}
