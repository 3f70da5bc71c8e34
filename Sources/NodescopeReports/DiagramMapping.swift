import Foundation
import NodescopeCollector
import NodescopeGraphviz

/// Maps the collector's tree onto a diagram: a box per node with its type name, kind and parts,
/// a style per state, and a note on leaks with how long the node outlived its detach.
package enum DiagramMapping {
    /// The diagram of `view`; the nodes in `fullRetainerPaths` show their retainer paths hop by hop.
    /// Its title names the process and, when the view carries it, when the tree stood so (the
    /// same for a tree read live and from its recording, never the time of drawing).
    package static func diagram(for view: TreeView, leaks: [LeakRecord] = [], fullRetainerPaths: Set<UInt64> = []) -> Diagram {
        let records = Dictionary(leaks.map { ($0.nodeID, $0) }, uniquingKeysWith: { $1 })
        let nodes = view.nodes.map { node in
            DiagramNode(
                id: node.id,
                parent: node.parent,
                title: node.displayName,
                kind: node.kind,
                parts: parts(of: node, alive: true),
                releasedParts: parts(of: node, alive: false),
                state: state(of: node),
                note: note(for: node, record: records[node.id], full: fullRetainerPaths.contains(node.id)),
                tooltip: tooltip(for: node, record: records[node.id]))
        }
        // The process's counts, in the words of `ps` and `tree` (of the nodes drawn when the view
        // carries none).
        let counts = Vocabulary.nodeCounts(view.counts ?? NodeCounts(nodes: view.nodes))
        return Diagram(title: title(of: view), subtitle: counts, nodes: nodes)
    }

    /// `NAME [pid N] at 2026-11-27 09:41:07 +0100` (local time, with its offset from UTC),
    /// without the time when the view has none.
    package static func title(of view: TreeView) -> String {
        let name = "\(view.processName) [pid \(view.pid)]"
        guard let wall = view.wallNanos else { return name }
        let date = Date(timeIntervalSince1970: TimeInterval(wall / 1_000_000_000))
        return "\(name) at \(stamp.string(from: date))"
    }

    /// `role: TypeName`, with repeated roles of one type counted: `worker: SyncWorker ×2`. The
    /// principal object (index 0, the flow or router) is the box's title while it is alive.
    static func parts(of node: NodeInfo, alive: Bool) -> [String] {
        var counted: [(text: String, count: Int)] = []
        for object in node.objects where object.isAlive == alive && (object.index != 0 || !alive) {
            let text = "\(object.role): \(object.typeName)"
            if let index = counted.firstIndex(where: { $0.text == text }) {
                counted[index].count += 1
            } else {
                counted.append((text, 1))
            }
        }
        return counted.map { $0.count > 1 ? "\($0.text) ×\($0.count)" : $0.text }
    }

    static func state(of node: NodeInfo) -> DiagramNodeState {
        if node.isPlaceholder { return .inactive }
        switch node.status {
        case .active, .started: return .active
        case .attached, .inactive, .ended: return .inactive
        case .detached: return .detached
        case .leaked: return .leaked
        case .lateRelease: return .lateRelease
        case .unverified: return .unverified
        }
    }

    /// The note of a node: its state in words, then, for a detached node whose host sent
    /// retainer paths, a line per object (`context: held by Session.listeners[3]`, and where the
    /// closure it keeps is written: `, made at ProfileNode.swift:20`), or when `full`, each
    /// object's path hop by hop.
    static func note(for node: NodeInfo, record: LeakRecord?, full: Bool = false) -> String? {
        guard let state = stateNote(for: node, record: record) else { return nil }
        var lines = [state]
        for (object, path) in explained(node, record: record) {
            guard full else {
                lines.append("\(role(object)): \(RetainerText.summary(path))\(RetainerText.madeAt(path))")
                continue
            }
            // A label centres its lines: the spaces that align them on a terminal go.
            let block = RetainerText.lines(path, objectType: object.typeName).map {
                $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            }
            lines.append("\(role(object)): \(block[0])")
            lines += block.dropFirst()
        }
        return lines.joined(separator: "\n")
    }

    /// The whole retainer path of each explained object, one line each, for the box's tooltip.
    static func tooltip(for node: NodeInfo, record: LeakRecord?) -> String? {
        let lines = explained(node, record: record).map { object, path in
            "\(VisibleText.escaped(RetainerText.objectName(object))): \(RetainerText.line(path, objectType: object.typeName))"
        }
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }

    /// The node's objects that have a retainer path (the node's own paths, else its record's),
    /// with it; none for an attached node or a placeholder.
    private static func explained(_ node: NodeInfo, record: LeakRecord?) -> [(ObjectInfo, RetainerPath)] {
        guard !node.isPlaceholder, !node.status.isAttached else { return [] }
        let paths = node.retainers ?? record?.retainers ?? []
        guard !paths.isEmpty else { return [] }
        return node.objects.compactMap { object in paths.first { $0.objectIndex == object.index }.map { (object, $0) } }
    }

    private static func role(_ object: ObjectInfo) -> String {
        VisibleText.escaped(object.role.isEmpty ? "object" : object.role)
    }

    private static func stateNote(for node: NodeInfo, record: LeakRecord?) -> String? {
        if node.isPlaceholder { return "released; a leaked node remains below" }
        switch node.status {
        case .leaked:
            return "leaked: alive \(Vocabulary.duration(record.map { $0.flaggedAtNanos &- $0.detachedAtNanos } ?? 0)) after detach"
        case .lateRelease:
            return record?.releaseDelayNanos.map { "released \(Vocabulary.duration($0)) after detach" } ?? "released late"
        case .unverified:
            return "unverified: the process ended within the grace"
        case .detached:
            return "detached, awaiting release"
        default:
            return nil
        }
    }

    static let stamp: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss xx"
        return formatter
    }()
}
