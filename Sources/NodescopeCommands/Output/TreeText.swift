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

    /// The whole view, one node a line, with a header naming the process.
    static func render(_ view: TreeView) -> String {
        let leaks = view.nodes.filter { $0.status == .leaked || $0.status == .unverified }.count
        var lines = [
            Terminal.paint("\(VisibleText.escaped(view.processName)) [pid \(view.pid)]", .bold)
                + "  \(view.nodes.count) nodes" + (leaks > 0 ? Terminal.paint(", \(leaks) leaked", .red) : "")
        ]
        if view.nodes.isEmpty { lines.append("  (no nodes)") }
        // Whether the ancestor at each depth has siblings still to come (draws the "│" bars).
        var open: [Bool] = []
        for (index, node) in view.nodes.enumerated() {
            let next = view.nodes[(index + 1)...].first { $0.depth <= node.depth }
            let isLast = next?.depth != node.depth
            if open.count <= node.depth { open += Array(repeating: false, count: node.depth - open.count + 1) }
            open[node.depth] = !isLast
            let indent = (0..<node.depth).dropFirst().map { open[$0] ? "│  " : "   " }.joined()
            let branch = node.depth == 0 ? "" : (isLast ? "└─ " : "├─ ")
            let status = node.isPlaceholder ? Terminal.paint(Vocabulary.placeholderMark, .gray) : mark(node.status)
            var line =
                "\(indent)\(branch)\(Terminal.paint(VisibleText.escaped(node.displayName), .bold)) \(Terminal.paint(VisibleText.escaped(node.kind), .gray))  \(status)"
            let alive = objects(node)
            if !alive.isEmpty { line += "  [\(alive)]" }
            if let held = heldBy(node) { line += Terminal.paint("  ◀ \(held)", .yellow) }
            if let cut = view.truncatedChildren[node.id], cut > 0 { line += Terminal.paint("  … \(cut) more below", .gray) }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
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
