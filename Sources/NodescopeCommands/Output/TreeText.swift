import Foundation
import NodescopeCollector
import NodescopeReports

/// Renders trees and changes as text: an indented tree with a mark per state, and one line per
/// change for `attach`.
enum TreeText {
    /// The mark of a state, in its colour (``Vocabulary``).
    static func mark(_ status: NodeStatus) -> String {
        Terminal.paint(Vocabulary.mark(status), Vocabulary.color(status))
    }

    /// The alive objects of a node, compactly: `context, worker×2, view`.
    static func objects(_ node: NodeInfo, alive: Bool = true) -> String {
        var counts: [(String, Int)] = []
        for object in node.objects where object.isAlive == alive {
            if let index = counts.firstIndex(where: { $0.0 == object.role }) {
                counts[index].1 += 1
            } else {
                counts.append((object.role, 1))
            }
        }
        return counts.map { $0.1 > 1 ? "\($0.0)×\($0.1)" : $0.0 }.map(VisibleText.escaped).joined(separator: ", ")
    }

    /// What holds a detached node, in a few words per analysed object (`held by
    /// Session.listeners[3]`, with the object's role before it when several are analysed); nil
    /// when its host sent no retainer path.
    static func heldBy(_ node: NodeInfo) -> String? {
        guard let paths = node.retainers, !paths.isEmpty else { return nil }
        return paths.map { path in
            let summary = RetainerText.summary(path)
            guard paths.count > 1, let object = node.objects.first(where: { $0.index == path.objectIndex }) else { return summary }
            return "\(VisibleText.escaped(object.role.isEmpty ? "object" : object.role)): \(summary)"
        }.joined(separator: "; ")
    }

    /// Lines draw the bars of every level above them down to this depth. A deeper line starts
    /// with its depth in brackets, then the bars of its last ``deepLevelsDrawn`` levels only: a
    /// line's length stays bounded however deep the tree, so the text of a tree is linear in
    /// its nodes (a 100,000-deep chain drawn in full would be some 15 GB).
    static let maxDrawnDepth = 48
    /// The levels whose bars a line below ``maxDrawnDepth`` draws.
    static let deepLevelsDrawn = 16

    /// The whole view, one node a line, with a header naming the process.
    static func render(_ view: TreeView) -> String {
        var text = ""
        write(view) { text += $0 }
        return text
    }

    /// The text of ``render(_:)``, handed to `emit` a line at a time (with its newline), so a
    /// large tree is written out as it is drawn. Linear in the nodes: no node's line looks at
    /// more than a bounded number of levels, and no step of the walk recurses.
    static func write(_ view: TreeView, to emit: (String) -> Void) {
        let nodes = view.nodes
        // The process's counts, as `ps` shows them (a view without them: counted from its nodes).
        let counts = view.counts ?? NodeCounts(nodes: nodes)
        emit(
            Terminal.paint("\(VisibleText.escaped(view.processName)) [pid \(view.pid)]", .bold) + "  "
                + Terminal.paint(Vocabulary.nodeCounts(counts), counts.leaked > 0 ? .red : .gray) + "\n")
        if nodes.isEmpty { emit("  (no nodes)\n") }
        // Depths as drawn: nodes come in pre-order, so a node is at most one level below the one
        // before it (a tree read from a file may claim otherwise).
        var depths: [Int] = []
        depths.reserveCapacity(nodes.count)
        var previous = -1
        for node in nodes {
            previous = min(max(node.depth, 0), previous + 1)
            depths.append(previous)
        }
        // Whether each node is the last of its siblings, in one pass from the end: `followed[d]`
        // says whether a node at depth d comes later with no shallower node in between.
        var isLast = [Bool](repeating: true, count: nodes.count)
        var followed: [Bool] = []
        for index in nodes.indices.reversed() {
            let depth = depths[index]
            if followed.count > depth + 1 { followed.removeLast(followed.count - depth - 1) }
            while followed.count <= depth { followed.append(false) }
            isLast[index] = !followed[depth]
            followed[depth] = true
        }
        // Whether the ancestor at each depth has siblings still to come (draws the "│" bars).
        var open: [Bool] = []
        for (index, node) in nodes.enumerated() {
            let depth = depths[index]
            if open.count > depth { open.removeLast(open.count - depth) }
            open.append(!isLast[index])
            var line = ""
            var firstLevel = 1
            if depth > maxDrawnDepth {
                firstLevel = depth - deepLevelsDrawn
                line += Terminal.paint("[\(depth)] ", .gray)
            }
            if firstLevel < depth {
                for level in firstLevel..<depth { line += open[level] ? "│  " : "   " }
            }
            if depth > 0 { line += isLast[index] ? "└─ " : "├─ " }
            let status = node.isPlaceholder ? Terminal.paint(Vocabulary.placeholderMark, .gray) : mark(node.status)
            line +=
                "\(Terminal.paint(VisibleText.escaped(node.displayName), .bold)) \(Terminal.paint(VisibleText.escaped(node.kind), .gray))  \(status)"
            let alive = objects(node)
            if !alive.isEmpty { line += "  [\(alive)]" }
            if let held = heldBy(node) { line += Terminal.paint("  ◀ \(held)", .yellow) }
            if let cut = view.truncatedChildren[node.id], cut > 0 { line += Terminal.paint("  … \(cut) more below", .gray) }
            line += "\n"
            emit(line)
        }
    }
}

/// Keeps a copy of a process's tree from a subscription, to name the nodes that changes refer to.
struct TreeMirror {
    private var nodes: [UInt64: NodeInfo] = [:]

    init(_ view: TreeView) {
        reset(view)
    }

    mutating func reset(_ view: TreeView) {
        nodes = Dictionary(view.nodes.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
    }

    /// Applies a change and returns the line to print for it, if any.
    mutating func apply(_ change: TreeChange, at time: Date) -> String? {
        let stamp = Terminal.paint(Self.clock.string(from: time), .gray)
        switch change {
        case .attached(let node):
            nodes[node.id] = node
            return "\(stamp)  \(Terminal.paint("+ attached", .green))  \(path(node.id))"
        case .statusChanged(let id, let status):
            nodes[id]?.status = status
            return "\(stamp)  \(TreeText.mark(status))  \(path(id))"
        case .objectAdded(let id, let object):
            nodes[id]?.objects.append(object)
            return nil
        case .objectReleased(let id, let index):
            guard let role = nodes[id]?.objects.first(where: { $0.index == index })?.role else { return nil }
            if let position = nodes[id]?.objects.firstIndex(where: { $0.index == index }) {
                nodes[id]?.objects[position].isAlive = false
            }
            return "\(stamp)  \(Terminal.paint("- released", .gray)) \(VisibleText.escaped(role))  \(path(id))"
        case .removed(let id):
            let line = "\(stamp)  \(Terminal.paint("✓ gone", .gray))  \(path(id))"
            nodes[id] = nil
            return line
        case .resynced:
            // The collector follows this with the new tree, one attached event a node.
            nodes = [:]
            return "\(stamp)  \(Terminal.paint("↻ resynced", .blue)) (the host sent a fresh snapshot)"
        case .leakFlagged(let record):
            let alive = VisibleText.escaped(record.aliveObjects.map { "\($0.role) \($0.typeName)" }.joined(separator: ", "))
            let path = VisibleText.escaped(record.path.joined(separator: " › "))
            let title = Terminal.paint("✖ " + Vocabulary.title(record.verdict), Vocabulary.color(record.verdict))
            return "\(stamp)  \(title)  \(path)  alive: \(alive.isEmpty ? "-" : alive)"
        case .retainersFound(let id, let found, _):
            var paths = nodes[id]?.retainers ?? []
            paths.removeAll { $0.objectIndex == found.objectIndex }
            paths.append(found)
            nodes[id]?.retainers = paths.sorted { $0.objectIndex < $1.objectIndex }
            let object = nodes[id]?.objects.first { $0.index == found.objectIndex }
            let name = object.map { "\($0.role.isEmpty ? "object" : $0.role) \($0.typeName)" } ?? "object \(found.objectIndex)"
            let line = RetainerText.line(found, objectType: object?.typeName ?? "?")
            return "\(stamp)  \(Terminal.paint("↳ why alive", .yellow))  \(path(id))  \(VisibleText.escaped(name)): \(line)"
        case .sessionEnded(let normally):
            return "\(stamp)  " + (normally ? "the process exited" : Terminal.paint("the process ended abnormally", .yellow))
        }
    }

    private func path(_ id: UInt64) -> String {
        var names: [String] = []
        var current: UInt64? = id
        var guardCount = 0
        while let node = current.flatMap({ nodes[$0] }), guardCount < 10_000 {
            names.append(node.name)
            current = node.parent
            guardCount += 1
        }
        return names.isEmpty ? "#\(id)" : VisibleText.escaped(names.reversed().joined(separator: " › "))
    }

    static let clock: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter
    }()
}
