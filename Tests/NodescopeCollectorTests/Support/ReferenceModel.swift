import NodescopeCollector
import NodescopeWire

/// A deliberately naive second implementation of the collector's rules for one session: every
/// node ever seen in one dictionary, flags found by scanning all nodes, and the visible tree
/// derived at the end ("a node is shown when it is not clean, or when a node below it is shown").
///
/// It interprets the same frames the collector gets, so the two can be compared after any step.
struct ReferenceModel {
    enum Flag { case none, leaked, lateRelease, unverified }

    struct Node {
        var id: UInt64
        var parent: UInt64
        var kind: String
        var name: String
        var state: UInt8 = 0
        var objects: [(index: UInt16, role: String, alive: Bool)] = []
        var detachedAt: UInt64?
        var flag: Flag = .none
        var flaggedAt: UInt64 = 0
        /// Released cleanly, or gone from a snapshot: shown only as a placeholder for others.
        var gone = false
        /// A parent that no frame ever described.
        var unknown = false
        var record: Int?

        var anyAlive: Bool { objects.contains { $0.alive } }
    }

    /// What the model expects a leak record to say.
    struct Record: Equatable, CustomStringConvertible {
        var nodeID: UInt64
        var verdict: LeakRecord.Verdict
        var flaggedAt: UInt64
        var releasedAt: UInt64?
        var path: [String]
        var aliveRoles: [String]

        init(
            nodeID: UInt64, verdict: LeakRecord.Verdict, flaggedAt: UInt64, releasedAt: UInt64?, path: [String],
            aliveRoles: [String]
        ) {
            self.nodeID = nodeID
            self.verdict = verdict
            self.flaggedAt = flaggedAt
            self.releasedAt = releasedAt
            self.path = path
            self.aliveRoles = aliveRoles.sorted()
        }

        init(_ record: LeakRecord) {
            self.init(
                nodeID: record.nodeID, verdict: record.verdict, flaggedAt: record.flaggedAtNanos,
                releasedAt: record.releasedAtNanos, path: record.path, aliveRoles: record.aliveObjects.map(\.role))
        }

        var description: String {
            let released = releasedAt.map(String.init) ?? "-"
            return "#\(nodeID) \(verdict) flagged \(flaggedAt) released \(released) "
                + "\(path.joined(separator: "/")) [\(aliveRoles.joined(separator: ","))]"
        }
    }

    /// What the model expects a tree view to show of a node.
    struct Shown: Equatable, CustomStringConvertible {
        var id: UInt64
        var parent: UInt64?
        var status: NodeStatus
        var isPlaceholder: Bool
        var kind: String
        var depth: Int
        /// Alive flags by object index; nil for placeholders (not compared).
        var alive: [Bool]?

        init(
            id: UInt64, parent: UInt64?, status: NodeStatus, isPlaceholder: Bool, kind: String, depth: Int,
            alive: [Bool]?
        ) {
            self.id = id
            self.parent = parent
            self.status = status
            self.isPlaceholder = isPlaceholder
            self.kind = kind
            self.depth = depth
            self.alive = alive
        }

        init(_ node: NodeInfo) {
            self.init(
                id: node.id, parent: node.parent, status: node.status, isPlaceholder: node.isPlaceholder,
                kind: node.kind,
                depth: node.depth, alive: node.isPlaceholder ? nil : node.objects.map(\.isAlive))
        }

        var description: String {
            let parentText = parent.map(String.init) ?? "-"
            let placeholderText = isPlaceholder ? " placeholder" : ""
            return "#\(id)<\(parentText) \(status)\(placeholderText) \(kind) d\(depth) \(alive.map { "\($0)" } ?? "")"
        }
    }

    let grace: UInt64
    var strings: [UInt32: String] = [:]
    var nodes: [UInt64: Node] = [:]
    var records: [Record] = []
    private var snapshot: [UInt64: Node]?

    init(grace: UInt64) {
        self.grace = grace
    }

    // MARK: Frames

    mutating func apply(_ message: WireMessage, now: UInt64) {
        switch message {
        case .defineString(let frame):
            strings[frame.stringID] = frame.value
        case .snapshotBegin:
            snapshot = [:]
        case .snapshotEnd:
            endSnapshot(now: now)
        case .nodeAttached(let frame):
            if snapshot != nil {
                snapshot![frame.nodeID] = Node(
                    id: frame.nodeID, parent: frame.parentID, kind: strings[frame.kindStringID] ?? "",
                    name: strings[frame.nameStringID] ?? "")
            } else {
                flagDue(now: now)
                if frame.parentID != 0, nodes[frame.parentID] == nil {
                    nodes[frame.parentID] = Node(id: frame.parentID, parent: 0, kind: "", name: "", unknown: true)
                }
                nodes[frame.nodeID] = Node(
                    id: frame.nodeID, parent: frame.parentID, kind: strings[frame.kindStringID] ?? "",
                    name: strings[frame.nameStringID] ?? "")
            }
        case .objectAdded(let frame):
            let object = (frame.objectIndex, strings[frame.roleStringID] ?? "", true)
            if snapshot != nil {
                snapshot![frame.nodeID]!.objects.append(object)
            } else {
                flagDue(now: now)
                nodes[frame.nodeID]!.objects.append(object)
            }
        case .stateChanged(let frame):
            if snapshot != nil {
                snapshot![frame.nodeID]!.state = frame.state.rawValue
            } else {
                flagDue(now: now)
                if nodes[frame.nodeID]?.gone == false { nodes[frame.nodeID]!.state = frame.state.rawValue }
            }
        case .nodeDetached(let frame):
            if snapshot != nil {
                snapshot![frame.nodeID]!.detachedAt = frame.timeNanos
            } else {
                flagDue(now: now)
                guard nodes[frame.nodeID]?.gone == false else { return }
                nodes[frame.nodeID]!.detachedAt = frame.timeNanos
                if !nodes[frame.nodeID]!.anyAlive { nodes[frame.nodeID]!.gone = true }
                flagDue(now: now)
            }
        case .objectReleased(let frame):
            if snapshot != nil {
                let position = snapshot![frame.nodeID]!.objects.firstIndex { $0.index == frame.objectIndex }!
                snapshot![frame.nodeID]!.objects[position].alive = false
            } else {
                flagDue(now: now)
                guard var node = nodes[frame.nodeID], !node.gone else { return }
                let position = node.objects.firstIndex { $0.index == frame.objectIndex }!
                node.objects[position].alive = false
                if !node.anyAlive, node.detachedAt != nil {
                    if node.flag == .none { node.gone = true }
                    if node.flag == .leaked {
                        node.flag = .lateRelease
                        markLate(node.record, at: frame.timeNanos)
                    }
                }
                nodes[frame.nodeID] = node
            }
        case .dropped, .goodbye, .heartbeat, .retainers, .defineSite, .defineTest, .nodeOrigin, .hello, .helloAccepted, .helloRefused,
            .request, .response, .event, .explain, .explained:
            break
        }
    }

    private mutating func markLate(_ record: Int?, at time: UInt64) {
        guard let record, records[record].verdict == .leaked else { return }
        records[record].verdict = .lateRelease
        records[record].releasedAt = max(time, records[record].flaggedAt)
    }

    private mutating func endSnapshot(now: UInt64) {
        let present = snapshot ?? [:]
        snapshot = nil
        for (id, node) in nodes where present[id] == nil && !node.gone {
            if node.flag == .leaked {
                nodes[id]!.flag = .lateRelease
                markLate(node.record, at: now)
            }
            nodes[id]!.gone = true
        }
        for (id, var node) in present {
            if let old = nodes[id], old.flag == .leaked || old.flag == .lateRelease {
                node.flag = node.anyAlive ? .leaked : .lateRelease
                node.flaggedAt = old.flaggedAt
                node.record = old.record
                if !node.anyAlive { markLate(old.record, at: now) }
            } else if node.detachedAt != nil, !node.anyAlive {
                node.gone = true
            }
            nodes[id] = node
        }
        for node in present.values where node.parent != 0 && nodes[node.parent] == nil {
            nodes[node.parent] = Node(id: node.parent, parent: 0, kind: "", name: "", unknown: true)
        }
        flagDue(now: now)
    }

    // MARK: Leaks

    mutating func flagDue(now: UInt64) {
        let due = nodes.values
            .filter { !$0.gone && $0.flag == .none && $0.anyAlive && $0.detachedAt.map { $0 + grace <= now } == true }
            .sorted { ($0.detachedAt!, $0.id) < ($1.detachedAt!, $1.id) }
        for node in due { flag(node.id, .leaked, at: node.detachedAt! + grace) }
    }

    mutating func end(normally: Bool, holdExit: Bool, now: UInt64) {
        flagDue(now: now)
        let waiting = nodes.values
            .filter { !$0.gone && $0.flag == .none && $0.anyAlive && $0.detachedAt != nil }
            .sorted { ($0.detachedAt!, $0.id) < ($1.detachedAt!, $1.id) }
        for node in waiting { flag(node.id, normally && holdExit ? .leaked : .unverified, at: now) }
    }

    private mutating func flag(_ id: UInt64, _ verdict: LeakRecord.Verdict, at time: UInt64) {
        nodes[id]!.flag = verdict == .leaked ? .leaked : .unverified
        nodes[id]!.flaggedAt = time
        nodes[id]!.record = records.count
        records.append(
            Record(
                nodeID: id, verdict: verdict, flaggedAt: time, releasedAt: nil, path: path(id),
                aliveRoles: nodes[id]!.objects.filter(\.alive).map(\.role)))
    }

    private func displayName(_ node: Node) -> String {
        !node.name.isEmpty ? node.name : (!node.kind.isEmpty ? node.kind : "?")
    }

    private func path(_ id: UInt64) -> [String] {
        var names: [String] = []
        var current = nodes[id]
        while let node = current {
            names.append(displayName(node))
            current = node.parent == 0 ? nil : nodes[node.parent]
        }
        return names.reversed()
    }

    // MARK: The expected view

    /// The tree the collector should show, in pre-order with children by id.
    func expectedTree() -> [Shown] {
        var children: [UInt64: [UInt64]] = [:]
        for node in nodes.values { children[node.parent, default: []].append(node.id) }
        var visible: [UInt64: Bool] = [:]
        func isVisible(_ id: UInt64) -> Bool {
            if let known = visible[id] { return known }
            let node = nodes[id]!
            let result = (!node.gone && !node.unknown) || (children[id] ?? []).contains { isVisible($0) }
            visible[id] = result
            return result
        }
        var shown: [Shown] = []
        func visit(_ id: UInt64, depth: Int) {
            guard isVisible(id) else { return }
            let node = nodes[id]!
            let placeholder = node.gone || node.unknown
            let status: NodeStatus =
                if placeholder { .detached } else {
                    switch node.flag {
                    case .leaked: .leaked
                    case .lateRelease: .lateRelease
                    case .unverified: .unverified
                    case .none:
                        if node.detachedAt != nil {
                            .detached
                        } else {
                            [.attached, .started, .active, .inactive, .ended][Int(node.state)]
                        }
                    }
                }
            shown.append(
                Shown(
                    id: id, parent: node.parent == 0 ? nil : node.parent, status: status, isPlaceholder: placeholder,
                    kind: node.kind, depth: depth,
                    alive: placeholder ? nil : node.objects.sorted { $0.index < $1.index }.map(\.alive)))
            for child in (children[id] ?? []).sorted() { visit(child, depth: depth + 1) }
        }
        for root in (children[0] ?? []).sorted() { visit(root, depth: 0) }
        return shown
    }
}
