/// Cuts a diagram down to what should be drawn: a focused subtree, a depth limit, and long runs
/// of same-title siblings folded into placeholders. Pure: no Graphviz, no I/O.
struct DiagramPruner {
    /// How many members of a long sibling run stay visible before the placeholder.
    static let keptRunMembers = 3

    /// What is drawn: the cut-down diagram, and how many of the chosen subtree's nodes it
    /// draws and hides in placeholders.
    struct Pruned {
        var diagram: Diagram
        var drawnNodes: Int
        var hiddenNodes: Int
    }

    let options: DiagramOptions

    func prune(_ diagram: Diagram) throws(RenderError) -> Pruned {
        let nodes = diagram.nodes
        let tree = DiagramTree(nodes)
        guard !tree.roots.isEmpty else {
            throw RenderError(
                .emptyDiagram, "the diagram has no nodes to draw; wait until the process has attached its first node, then try again")
        }
        var starts = tree.roots
        if let rootID = options.rootID {
            guard let focus = tree.indexByID[rootID] else {
                throw RenderError(.unknownRoot, "no node has id \(rootID); list the tree to see the ids, then pass one of them as the root")
            }
            starts = [focus]
        }

        // Children always come after their parents, so one backward pass sums every subtree.
        var subtreeSize = [Int](repeating: 1, count: nodes.count)
        var leakedBelow = [Int](repeating: 0, count: nodes.count)
        var needsAttention = [Bool](repeating: false, count: nodes.count)
        for index in stride(from: nodes.count - 1, through: 0, by: -1) where tree.isIncluded[index] {
            if nodes[index].state == .leaked { leakedBelow[index] += 1 }
            needsAttention[index] = needsAttention[index] || nodes[index].state.needsAttention
            let parent = tree.parentIndex[index]
            if parent >= 0 {
                subtreeSize[parent] += subtreeSize[index]
                leakedBelow[parent] += leakedBelow[index]
                needsAttention[parent] = needsAttention[parent] || needsAttention[index]
            }
        }

        var placeholderIDs = PlaceholderIDs(taken: tree.indexByID)
        var output: [DiagramNode] = []
        output.reserveCapacity(nodes.count)
        let maxDepth = options.maxDepth.map { max(0, $0) }

        enum Step {
            case node(index: Int, depth: Int, parent: UInt64?)
            case placeholder(DiagramNode)
        }
        var stack: [Step] = []
        func push(siblings: some Collection<Int>, depth: Int, parent: UInt64?) {
            let visible = visibleSiblings(siblings, nodes: nodes, needsAttention: needsAttention)
            var steps: [Step] = visible.shown.map { .node(index: $0, depth: depth, parent: parent) }
            for run in visible.folded {
                let placeholder = DiagramNode(
                    id: placeholderIDs.next(), parent: parent,
                    title: "… \(run.hidden) more \(run.title)", state: .collapsed)
                steps.insert(.placeholder(placeholder), at: run.insertAt)
            }
            stack.append(contentsOf: steps.reversed())
        }

        push(siblings: starts, depth: 0, parent: nil)
        var drawn = 0
        while let step = stack.popLast() {
            switch step {
            case .placeholder(let node):
                output.append(node)
            case .node(let index, let depth, let parent):
                var node = nodes[index]
                node.parent = parent
                output.append(node)
                drawn += 1
                guard tree.childCount(of: index) > 0 else { continue }
                if let maxDepth, depth >= maxDepth {
                    let leaked = leakedBelow[index] - (node.state == .leaked ? 1 : 0)
                    output.append(
                        DiagramNode(
                            id: placeholderIDs.next(), parent: node.id,
                            title: "… \(subtreeSize[index] - 1) more",
                            state: .collapsed, note: leaked > 0 ? "\(leaked) leaked" : nil))
                } else {
                    push(siblings: tree.children(of: index), depth: depth + 1, parent: node.id)
                }
            }
        }
        let inScope = starts.reduce(0) { $0 + subtreeSize[$1] }
        return Pruned(
            diagram: Diagram(title: diagram.title, subtitle: diagram.subtitle, nodes: output, showLegend: diagram.showLegend),
            drawnNodes: drawn, hiddenNodes: inScope - drawn)
    }

    /// A run of same-title siblings that was folded: where its placeholder goes among the shown
    /// siblings, and how many it stands for.
    struct FoldedRun {
        var insertAt: Int
        var hidden: Int
        var title: String
    }

    /// The siblings to draw, in order, and the runs that were folded.
    func visibleSiblings(
        _ siblings: some Collection<Int>, nodes: [DiagramNode], needsAttention: [Bool]
    ) -> (shown: [Int], folded: [FoldedRun]) {
        let siblings = Array(siblings)
        var shown: [Int] = []
        var folded: [FoldedRun] = []
        var runStart = 0
        while runStart < siblings.count {
            let title = nodes[siblings[runStart]].title
            var runEnd = runStart + 1
            while runEnd < siblings.count && nodes[siblings[runEnd]].title == title { runEnd += 1 }
            if runEnd - runStart > options.collapseSiblingRunsLongerThan {
                var hidden = 0
                for (offset, index) in siblings[runStart..<runEnd].enumerated() {
                    if offset < Self.keptRunMembers || needsAttention[index] {
                        shown.append(index)
                    } else {
                        hidden += 1
                    }
                }
                if hidden > 0 {
                    folded.append(FoldedRun(insertAt: shown.count + folded.count, hidden: hidden, title: title))
                }
            } else {
                shown.append(contentsOf: siblings[runStart..<runEnd])
            }
            runStart = runEnd
        }
        return (shown, folded)
    }
}

/// Ids for placeholder nodes: counting down from the top of the id space, skipping real ids.
private struct PlaceholderIDs {
    let taken: [UInt64: Int]
    var candidate = UInt64.max

    mutating func next() -> UInt64 {
        while taken[candidate] != nil { candidate -= 1 }
        defer { candidate -= 1 }
        return candidate
    }
}
