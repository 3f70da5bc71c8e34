import NodescopeCollector
import NodescopeReports
import Testing

@Suite("TreeDiff: trees compared by path")
struct TreeDiffTests {
    static func node(_ id: UInt64, _ parent: UInt64?, _ name: String, _ status: NodeStatus = .active, objects: [String] = ["flow"])
        -> NodeInfo
    {
        NodeInfo(
            id: id, parent: parent, kind: "Flow", name: name, status: status,
            objects: objects.enumerated().map { ObjectInfo(index: UInt16($0.offset), role: $0.element, typeName: "T", isAlive: true) },
            attachedAtNanos: 0, detachedAtNanos: nil, depth: 0)
    }

    static func view(_ nodes: [NodeInfo]) -> TreeView {
        TreeView(session: SessionID(rawValue: 1), pid: 1, processName: "p", nodes: nodes, truncatedChildren: [:])
    }

    @Test func sameShapesWithOtherIdsAreTheSame() {
        let first = Self.view([Self.node(1, nil, "App"), Self.node(2, 1, "Item"), Self.node(3, 1, "Item")])
        let second = Self.view([Self.node(10, nil, "App"), Self.node(20, 10, "Item"), Self.node(30, 10, "Item")])
        #expect(TreeDiff.compare(first, second).isEmpty)
    }

    @Test func addedRemovedAndChangedAreNamedByPath() {
        let first = Self.view([Self.node(1, nil, "App"), Self.node(2, 1, "Login"), Self.node(3, 1, "Feed")])
        let second = Self.view([
            Self.node(1, nil, "App", .inactive), Self.node(3, 1, "Feed", objects: ["flow", "worker"]), Self.node(4, 3, "Plugin"),
        ])
        let diff = TreeDiff.compare(first, second)
        #expect(diff.removed.map(\.path) == ["App/Login"])
        #expect(diff.added.map(\.path) == ["App/Feed/Plugin"])
        #expect(diff.changed.map(\.path) == ["App", "App/Feed"])
        #expect(diff.changed[0].fields.map(\.name) == ["state"])
        #expect(diff.changed[1].fields.map(\.name) == ["objects"])
        #expect(diff.text().hasSuffix("1 added, 1 removed, 2 changed\n"))
    }

    @Test func ignoredPathsLeaveOutTheirSubtrees() {
        let first = Self.view([Self.node(1, nil, "App"), Self.node(2, 1, "Item"), Self.node(3, 2, "Deep")])
        let second = Self.view([Self.node(1, nil, "App"), Self.node(2, 1, "Item"), Self.node(4, 1, "Item")])
        #expect(!TreeDiff.compare(first, second).isEmpty)
        #expect(TreeDiff.compare(first, second, ignoring: ["App/Item*"]).isEmpty)
    }
}
