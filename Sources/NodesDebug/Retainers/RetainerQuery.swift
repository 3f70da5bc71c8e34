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

    /// The query that explains `nodes`, from the tracker's `records`.
    init(explaining nodes: Set<NodeID>, in records: [NodeRegistry.Record]) {
        guard !nodes.isEmpty else { return }
        for record in records {
            let id = record.id.rawValue
            if record.detachedAt == nil {
                for object in record.objects where object.isAlive {
                    attached.append(RetainerAnalysis.NodeObject(nodeID: id, address: object.address))
                }
                continue
            }
            guard record.aliveCount > 0 else { continue }
            let explained = nodes.contains(record.id)
            for (index, object) in record.objects.enumerated() where object.isAlive {
                detached.append(RetainerAnalysis.NodeObject(nodeID: id, address: object.address))
                if explained {
                    targets.append(
                        RetainerAnalysis.Target(
                            nodeID: id, objectIndex: UInt16(index), address: object.address, typeName: object.typeName))
                }
            }
        }
        targets.sort { ($0.nodeID, $0.objectIndex) < ($1.nodeID, $1.objectIndex) }
    }
}
