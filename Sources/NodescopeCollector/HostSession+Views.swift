/// Queries on a session: node descriptions, paths, tree views and the summary.
extension HostSession {
    /// The object as queries show it.
    func objectInfo(_ object: ObjectSlot) -> ObjectInfo {
        ObjectInfo(
            index: object.index, role: strings.text(object.role), typeName: strings.text(object.typeName),
            isAlive: object.isAlive)
    }

    /// The node in `slot` as queries show it; `depth` nil means its depth in the whole tree.
    func nodeInfo(_ slot: UInt32, depth: Int?) -> NodeInfo {
        let node = tree.slots[Int(slot)]
        let parent = node.parent == NodeTree.noSlot ? nil : tree.slots[Int(node.parent)].id
        let detachedAt: UInt64? =
            switch node.phase {
            case .attached, .placeholder: nil
            case .detached, .leaked, .lateRelease, .unverified, .anchor: node.detachedAt
            }
        var paths: [RetainerPath]?
        if detachedAt != nil, !node.isPlaceholder, !retainers.isEmpty {
            let stored = retainers.paths(of: node.id)
            if !stored.isEmpty { paths = stored }
        }
        return NodeInfo(
            id: node.id, parent: parent, kind: strings.text(node.kind), name: strings.text(node.name),
            status: node.status, objects: node.objects.map(objectInfo), attachedAtNanos: node.attachedAt,
            detachedAtNanos: detachedAt, depth: depth ?? Int(node.depth), isPlaceholder: node.isPlaceholder,
            retainers: paths, attachSite: location(ofSite: node.site), test: testInfo(node.test))
    }

    /// The name of a node in paths: its name, else its kind, else `?`.
    func displayName(_ slot: UInt32) -> String {
        let node = tree.slots[Int(slot)]
        if node.name != 0, let name = strings[node.name], !name.isEmpty { return name }
        if node.kind != 0, let kind = strings[node.kind], !kind.isEmpty { return kind }
        return "?"
    }

    /// Whether a path element names the node: its display name or its kind.
    func matches(_ slot: UInt32, _ element: String) -> Bool {
        if displayName(slot) == element { return true }
        let kind = tree.slots[Int(slot)].kind
        return kind != 0 && strings[kind] == element
    }

    /// The most names a path keeps: a hostile host could nest nodes thousands deep, and every
    /// leak record carries its path.
    static let maxPathNames = 64

    /// The display names from the root down to the node; the nearest ``maxPathNames`` of them,
    /// after a leading "…", when the node is deeper than that.
    func path(to slot: UInt32) -> [String] {
        var names: [String] = []
        var current = slot
        while current != NodeTree.noSlot, names.count < Self.maxPathNames {
            names.append(displayName(current))
            current = tree.slots[Int(current)].parent
        }
        if current != NodeTree.noSlot { names.append("…") }
        return names.reversed()
    }

    /// The node a root path names, by the rule of ``TreePathSearch``.
    func find(_ path: [String]) -> UInt32? {
        TreePathSearch.find(
            path, roots: tree.sortedChildren(of: nil), children: { tree.sortedChildren(of: $0) },
            parent: { tree.slots[Int($0)].parent == NodeTree.noSlot ? nil : tree.slots[Int($0)].parent },
            matches: { matches($0, $1) }, isAttached: { tree.slots[Int($0)].status.isAttached })
    }

    /// Every node a path names (``TreePathSearch/findAll``), described.
    func nodes(atPath path: [String]) -> [NodeInfo] {
        TreePathSearch.findAll(
            path, roots: tree.sortedChildren(of: nil), children: { tree.sortedChildren(of: $0) },
            parent: { tree.slots[Int($0)].parent == NodeTree.noSlot ? nil : tree.slots[Int($0)].parent },
            matches: { matches($0, $1) }
        ).map { nodeInfo($0, depth: 0) }
    }

    /// The tree, or the subtree at `rootPath`, down to `depth` levels below its roots.
    func view(rootPath: [String]?, depth: Int?) -> TreeView {
        var result = TreeView(session: id, pid: pid, processName: processName, nodes: [], counts: counts)
        let roots: [UInt32]
        if let rootPath, !rootPath.isEmpty {
            guard let found = find(rootPath) else { return result }
            roots = [found]
        } else {
            roots = tree.sortedChildren(of: nil)
        }
        let limit = depth.map { max(0, $0) }
        result.nodes.reserveCapacity(limit == nil ? tree.count : roots.count)
        var stack: [(UInt32, Int)] = roots.reversed().map { ($0, 0) }
        while let (slot, level) = stack.popLast() {
            result.nodes.append(nodeInfo(slot, depth: level))
            let children = tree.slots[Int(slot)].children
            guard !children.isEmpty else { continue }
            if let limit, level >= limit {
                result.truncatedChildren[tree.slots[Int(slot)].id] = children.count
                continue
            }
            for child in tree.sortedChildren(of: slot).reversed() { stack.append((child, level + 1)) }
        }
        return result
    }

    /// How the session ended; nil while the host is connected.
    var sessionEnd: SessionEnd? { phase.ending?.sessionEnd }

    /// Where the session's nodes stand (``NodeCounts``): the verdicts of its leak records, the
    /// attached nodes and those awaiting release.
    var counts: NodeCounts {
        let cut = sessionEnd == .exitFlushCut
        return NodeCounts(
            attached: liveNodes, awaitingRelease: tree.slots.count { $0.id != 0 && $0.phase == .detached },
            records: leakRecords, flushCut: { _ in cut })
    }

    /// The session at a glance.
    var summary: ProcessSummary {
        let counts = counts
        return ProcessSummary(
            session: id, pid: pid, processName: processName, connectedAtNanos: connectedAt, endedAtNanos: endedAt,
            endedNormally: phase.ending?.normally, liveNodes: counts.attached, leaks: counts.leaked, eventsIngested: eventsIngested,
            droppedReported: droppedReported, startedAtNanos: processStartedAt, awaitingRelease: counts.awaitingRelease,
            graceNanos: settings.graceNanos, counts: counts, end: sessionEnd)
    }
}
