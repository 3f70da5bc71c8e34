/// The one rule for finding the node that a path of names stands for, used by the collector
/// (`tree --root`, the control API's `rootPath`) and on a tree read from a file (`export --from
/// … --root`), so that a path means the same node everywhere (docs/PROTOCOL.md).
///
/// First the path is followed from a root down, each name matching a node's display name or its
/// kind; failing that, any node whose nearest ancestors end the path matches (so a single name
/// matches anywhere). Among several matches (a released node and a live one of the same name),
/// the first attached one in pre-order wins, else the first.
enum TreePathSearch {
    /// The node `path` names among the trees below `roots`, or nil.
    static func find<Node>(
        _ path: [String], roots: [Node], children: (Node) -> [Node], parent: (Node) -> Node?,
        matches: (Node, String) -> Bool, isAttached: (Node) -> Bool
    ) -> Node? {
        guard !path.isEmpty else { return nil }
        var fallback: Node?
        // From the roots: each branch carries how much of the path it has matched.
        var stack: [(Node, Int)] = roots.reversed().map { ($0, 0) }
        while let (node, level) = stack.popLast() {
            guard matches(node, path[level]) else { continue }
            if level + 1 == path.count {
                if isAttached(node) { return node }
                fallback = fallback ?? node
                continue
            }
            for child in children(node).reversed() { stack.append((child, level + 1)) }
        }
        if let fallback { return fallback }
        // Anywhere, in pre-order.
        var all: [Node] = roots.reversed()
        while let node = all.popLast() {
            if endsPath(node, path, parent: parent, matches: matches) {
                if isAttached(node) { return node }
                fallback = fallback ?? node
            }
            all.append(contentsOf: children(node).reversed())
        }
        return fallback
    }

    /// Every node `path` names, in pre-order: those reached by following the path from a
    /// root, or failing that those whose nearest ancestors end the path (``find`` picks one of
    /// them). `explain` asks about the detached ones among them.
    static func findAll<Node>(
        _ path: [String], roots: [Node], children: (Node) -> [Node], parent: (Node) -> Node?,
        matches: (Node, String) -> Bool
    ) -> [Node] {
        guard !path.isEmpty else { return [] }
        var found: [Node] = []
        var stack: [(Node, Int)] = roots.reversed().map { ($0, 0) }
        while let (node, level) = stack.popLast() {
            guard matches(node, path[level]) else { continue }
            if level + 1 == path.count {
                found.append(node)
                continue
            }
            for child in children(node).reversed() { stack.append((child, level + 1)) }
        }
        guard found.isEmpty else { return found }
        var all: [Node] = roots.reversed()
        while let node = all.popLast() {
            if endsPath(node, path, parent: parent, matches: matches) { found.append(node) }
            all.append(contentsOf: children(node).reversed())
        }
        return found
    }

    private static func endsPath<Node>(
        _ node: Node, _ path: [String], parent: (Node) -> Node?, matches: (Node, String) -> Bool
    ) -> Bool {
        var current: Node? = node
        for element in path.reversed() {
            guard let node = current, matches(node, element) else { return false }
            current = parent(node)
        }
        return true
    }
}

extension TreeView {
    /// The node at `path`, names separated by `/` (such as `AppFlow/LoggedInFlow`), by the rule
    /// the collector uses for `rootPath` (``TreePathSearch``); nil when none matches.
    public func node(atPath path: String) -> NodeInfo? {
        let names = path.split(separator: "/").map(String.init)
        let ids = Set(nodes.map(\.id))
        var children: [UInt64: [Int]] = [:]
        var roots: [Int] = []
        var indexByID: [UInt64: Int] = [:]
        for (index, node) in nodes.enumerated() {
            indexByID[node.id] = index
            if let parent = node.parent, ids.contains(parent) {
                children[parent, default: []].append(index)
            } else {
                roots.append(index)
            }
        }
        let found = TreePathSearch.find(
            names, roots: roots, children: { children[nodes[$0].id] ?? [] },
            parent: { nodes[$0].parent.flatMap { indexByID[$0] } },
            matches: { nodes[$0].displayName == $1 || nodes[$0].kind == $1 },
            isAttached: { nodes[$0].status.isAttached })
        return found.map { nodes[$0] }
    }
}
