import NodescopeCollector
import NodescopeGraphviz

/// The difference of two trees as a diagram: the union of both trees, matched by path as
/// ``TreeDiff`` matches them, with added nodes green and marked `+`, removed ones red, dashed
/// and marked `−`, changed ones amber with what changed, and the rest grey.
package enum DiffDiagram {
    /// The diagram of the difference between `first` and `second`, without the nodes that
    /// `ignoring` leaves out; `title` is its caption.
    ///
    /// Nodes come in the first tree's order; a node only in the second comes after its
    /// siblings from the first. A node whose parent is in neither (below a placeholder) is a root.
    package static func diagram(_ first: TreeView, _ second: TreeView, ignoring: [String] = [], title: String) -> Diagram {
        let left = TreeDiff.located(in: first, ignoring: ignoring)
        let right = TreeDiff.located(in: second, ignoring: ignoring)
        let leftByPath = Dictionary(left.map { ($0.entry.path, $0) }, uniquingKeysWith: { first, _ in first })
        let rightByPath = Dictionary(right.map { ($0.entry.path, $0) }, uniquingKeysWith: { first, _ in first })

        // Children by parent path ("" for the roots), first tree's nodes first.
        var children: [String: [String]] = [:]
        var listed = Set<String>()
        for item in left + right where listed.insert(item.entry.path).inserted {
            children[item.parentPath.map { "/" + $0 } ?? "", default: []].append(item.entry.path)
        }

        var nodes: [DiagramNode] = []
        nodes.reserveCapacity(listed.count)
        // Depth-first, without recursion: a hostile tree may be deep.
        var stack: [(path: String, parent: UInt64?)] = (children[""] ?? []).reversed().map { ($0, nil) }
        while let (path, parent) = stack.popLast() {
            let id = UInt64(nodes.count + 1)
            nodes.append(node(id: id, parent: parent, path: path, first: leftByPath[path], second: rightByPath[path]))
            for child in (children["/" + path] ?? []).reversed() { stack.append((child, id)) }
        }
        if nodes.isEmpty {
            nodes.append(DiagramNode(id: 1, parent: nil, title: "both trees are empty", state: .collapsed))
        }
        return Diagram(title: title, nodes: nodes)
    }

    /// Draws the difference between `first` and `second` (``diagram(_:_:ignoring:title:)``).
    ///
    /// - Throws: ``ReportError`` when Graphviz fails.
    package static func draw(
        _ first: TreeView, _ second: TreeView, ignoring: [String] = [], title: String, format: DiagramFormat = .svg
    ) throws(ReportError) -> DiagramRenderer.Drawing {
        do {
            return try DiagramRenderer.shared.draw(diagram(first, second, ignoring: ignoring, title: title), format: format)
        } catch {
            throw ReportError("cannot draw the difference: \(error)")
        }
    }

    /// The box of one node of the union.
    static func node(id: UInt64, parent: UInt64?, path: String, first: TreeDiff.Located?, second: TreeDiff.Located?) -> DiagramNode {
        let shown = second ?? first
        let name = shown?.node.displayName ?? path
        let kind = shown?.node.kind ?? ""
        guard let first, let second else {
            // Only on one side: what it holds, and its state when it is not attached.
            guard let only = shown else { return DiagramNode(id: id, parent: parent, title: name, state: .unchanged) }
            let added = first == nil
            var note: String?
            if !only.node.status.isAttached { note = "state: \(only.entry.status)" }
            return DiagramNode(
                id: id, parent: parent, title: (added ? "+ " : "\u{2212} ") + name, kind: kind, parts: parts(only.node),
                state: added ? .added : .removed, note: note, tooltip: path)
        }
        var lines: [String] = []
        if first.entry.kind != second.entry.kind { lines.append("kind: \(first.entry.kind) \u{2192} \(second.entry.kind)") }
        if first.entry.objects != second.entry.objects {
            let before = parts(first.node)
            let after = parts(second.node)
            lines += subtracting(after, from: before).map { "\u{2212} \($0)" }
            lines += subtracting(before, from: after).map { "+ \($0)" }
            if before.sorted() == after.sorted() { lines.append("objects in another order") }
        }
        if first.entry.status != second.entry.status {
            lines.append("state: \(first.entry.status) \u{2192} \(second.entry.status)")
        }
        guard !lines.isEmpty else { return DiagramNode(id: id, parent: parent, title: name, kind: kind, state: .unchanged, tooltip: path) }
        return DiagramNode(
            id: id, parent: parent, title: "~ " + name, kind: kind, state: .changed, note: lines.joined(separator: "\n"), tooltip: path)
    }

    /// The elements of `items` that `other` does not have, counting repeats (a multiset
    /// difference), in `items`' order.
    static func subtracting(_ other: [String], from items: [String]) -> [String] {
        var available: [String: Int] = [:]
        for item in other { available[item, default: 0] += 1 }
        return items.filter { item in
            guard let count = available[item], count > 0 else { return true }
            available[item] = count - 1
            return false
        }
    }

    /// A node's objects as `role: Type`, one each, in index order.
    static func parts(_ node: NodeInfo) -> [String] {
        node.objects.map { "\($0.role): \($0.typeName)" }
    }
}
