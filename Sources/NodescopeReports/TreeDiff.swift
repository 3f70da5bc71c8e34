import Glibc
import NodescopeCollector

/// The difference between two trees: nodes added, removed, and changed (kind, objects, state).
///
/// Node ids differ from run to run, so nodes are matched by their path: the display names
/// from the root down, each with its position among the siblings of the same name
/// (`AppFlow/LoggedInFlow/FeedFlow`, `…/FeedItemFlow#2` for the third of that name). Attached
/// siblings are numbered first, in attach order, and those no longer attached (released
/// parents of leaked nodes, detached and leaked nodes) after them: so after a re-login the
/// new `LoggedInFlow` is matched with the old one, and the first login's leaked remains
/// appear on their own, under `LoggedInFlow#1`.
package struct TreeDiff: Sendable, Equatable, Codable {
    /// One node on one side.
    package struct Entry: Sendable, Equatable, Codable {
        /// Its path.
        package var path: String
        /// Its kind.
        package var kind: String
        /// Its state, in the words of `tree --json` (`active`, `detached`, `leaked` …).
        package var status: String
        /// Its objects, `role type` each, in index order.
        package var objects: [String]
    }

    /// A node on both sides that differs.
    package struct Change: Sendable, Equatable, Codable {
        /// Its path.
        package var path: String
        /// What differs: `kind`, `objects` or `state`, with the values of each side.
        package var fields: [Field]
    }

    /// One differing field.
    package struct Field: Sendable, Equatable, Codable {
        /// `kind`, `objects` or `state`.
        package var name: String
        /// On the first side.
        package var from: String
        /// On the second side.
        package var to: String
    }

    /// Nodes only in the second tree, in its order.
    package var added: [Entry]
    /// Nodes only in the first tree, in its order.
    package var removed: [Entry]
    /// Nodes in both that differ, in the first tree's order.
    package var changed: [Change]

    /// Whether the trees are the same.
    package var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }

    /// Compares `first` with `second`, leaving out nodes whose path matches a glob of `ignoring`
    /// (shell patterns on the whole path, such as `*/FeedItemFlow*`), and their subtrees.
    package static func compare(_ first: TreeView, _ second: TreeView, ignoring: [String] = []) -> TreeDiff {
        let left = entries(of: first, ignoring: ignoring)
        let right = entries(of: second, ignoring: ignoring)
        let rightByPath = Dictionary(right.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        let leftPaths = Set(left.map(\.path))
        var diff = TreeDiff(added: [], removed: [], changed: [])
        for entry in left {
            guard let other = rightByPath[entry.path] else {
                diff.removed.append(entry)
                continue
            }
            var fields: [Field] = []
            if entry.kind != other.kind { fields.append(Field(name: "kind", from: entry.kind, to: other.kind)) }
            if entry.objects != other.objects {
                fields.append(
                    Field(name: "objects", from: entry.objects.joined(separator: ", "), to: other.objects.joined(separator: ", ")))
            }
            if entry.status != other.status { fields.append(Field(name: "state", from: entry.status, to: other.status)) }
            if !fields.isEmpty { diff.changed.append(Change(path: entry.path, fields: fields)) }
        }
        diff.added = right.filter { !leftPaths.contains($0.path) }
        return diff
    }

    /// The nodes of `view` with their paths, in pre-order, without ignored ones.
    static func entries(of view: TreeView, ignoring: [String]) -> [Entry] {
        located(in: view, ignoring: ignoring).map(\.entry)
    }

    /// A node of a tree with its path, and where it hangs: the path of its nearest ancestor that
    /// is listed too (nil for a root, and below placeholders that have none).
    struct Located {
        var entry: Entry
        var parentPath: String?
        var node: NodeInfo
    }

    /// The nodes of `view` with their paths and parents' paths, in pre-order, without ignored
    /// ones and without placeholders (which count in paths only).
    static func located(in view: TreeView, ignoring: [String]) -> [Located] {
        var pathOf: [UInt64: String] = [:]
        // The path of each node's nearest listed ancestor-or-self.
        var anchorOf: [UInt64: String] = [:]
        let occurrence = occurrences(in: view)
        var ignored = Set<UInt64>()
        var result: [Located] = []
        for (position, node) in view.nodes.enumerated() {
            let parentPath = node.parent.flatMap { pathOf[$0] }
            if let parent = node.parent, ignored.contains(parent) {
                ignored.insert(node.id)
                continue
            }
            let base = (parentPath.map { $0 + "/" } ?? "") + node.displayName
            let path = NameOccurrence.suffixed(base, occurrence[position])
            pathOf[node.id] = path
            let anchor = node.parent.flatMap { anchorOf[$0] }
            // A placeholder stands for a released parent of a leaked node: part of paths only.
            if node.isPlaceholder {
                if let anchor { anchorOf[node.id] = anchor }
                continue
            }
            if ignoring.contains(where: { fnmatch($0, path, 0) == 0 }) {
                ignored.insert(node.id)
                continue
            }
            anchorOf[node.id] = path
            let entry = Entry(
                path: path, kind: node.kind, status: node.status.rawValue, objects: node.objects.map { "\($0.role) \($0.typeName)" })
            result.append(Located(entry: entry, parentPath: anchor, node: node))
        }
        return result
    }

    /// Each node's position among its siblings of the same display name
    /// (``NameOccurrence``: attached ones first, in the view's order, then the others).
    static func occurrences(in view: TreeView) -> [Int] {
        struct Key: Hashable {
            var parent: UInt64?
            var name: String
        }
        return NameOccurrence.numbers(
            keys: view.nodes.map { Key(parent: $0.parent, name: $0.displayName) },
            attached: view.nodes.map { $0.status.isAttached && !$0.isPlaceholder })
    }

    /// The difference as lines: `+ PATH (kind)`, `- PATH (kind)`, `~ PATH  state: a → b`, then a
    /// summary line.
    package func text() -> String {
        var lines: [String] = []
        for entry in removed { lines.append("- \(VisibleText.escaped(entry.path))  \(entry.label)") }
        for entry in added { lines.append("+ \(VisibleText.escaped(entry.path))  \(entry.label)") }
        for change in changed {
            let fields = change.fields.map { "\($0.name): \(VisibleText.escaped($0.from)) → \(VisibleText.escaped($0.to))" }
            lines.append("~ \(VisibleText.escaped(change.path))  " + fields.joined(separator: "; "))
        }
        lines.append(
            isEmpty
                ? "the trees are the same"
                : "\(added.count) added, \(removed.count) removed, \(changed.count) changed")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension TreeDiff.Entry {
    /// `(kind)` for an attached node, `(kind, state)` for one that is not attached any more.
    var label: String {
        let kind = VisibleText.escaped(kind)
        guard let state = NodeStatus(rawValue: status), !state.isAttached else { return "(\(kind))" }
        let word =
            switch state {
            case .leaked: Vocabulary.phrase(.leaked)
            case .lateRelease: Vocabulary.phrase(.lateRelease)
            case .unverified: Vocabulary.phrase(.unverified)
            default: "detached"
            }
        return "(\(kind), \(word))"
    }
}
