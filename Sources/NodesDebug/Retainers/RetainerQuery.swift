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
        // By index, through the buffers: a record or an object copied out would retain its
        // strings and arrays, which for a tree of 100,000 nodes costs more than the rest.
        records.withUnsafeBufferPointer { records in
            attached.reserveCapacity(records.count * 4)
            for position in records.indices {
                let id = records[position].id.rawValue
                let isAttached = records[position].detachedAt == nil
                guard isAttached || records[position].aliveCount > 0 else { continue }
                let explained = !isAttached && nodes.contains(records[position].id)
                records[position].objects.withUnsafeBufferPointer { objects in
                    for index in objects.indices where objects[index].isAlive {
                        let object = RetainerAnalysis.NodeObject(nodeID: id, address: objects[index].address)
                        guard !isAttached else {
                            attached.append(object)
                            continue
                        }
                        detached.append(object)
                        if explained {
                            targets.append(
                                RetainerAnalysis.Target(
                                    nodeID: id, objectIndex: UInt16(index), address: objects[index].address,
                                    typeName: objects[index].typeName))
                        }
                    }
                }
            }
        }
        targets.sort { ($0.nodeID, $0.objectIndex) < ($1.nodeID, $1.objectIndex) }
    }
}
