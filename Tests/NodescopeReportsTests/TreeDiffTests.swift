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

@Suite("TreeDiff: a re-login")
struct TreeDiffReloginTests {
    /// One login (App › Login › Feed, Profile) against the tree after a re-login whose first
    /// login left its Profile leaked under the released Login: the new login is the old one's
    /// match, and only the leaked remains are new.
    @Test func theNewLoginMatchesTheOldAndOnlyTheLeakedRemainsAreAdded() {
        let first = TreeDiffTests.view([
            TreeDiffTests.node(1, nil, "App"), TreeDiffTests.node(2, 1, "Login"), TreeDiffTests.node(3, 2, "Feed"),
            TreeDiffTests.node(4, 2, "Profile"),
        ])
        var released = TreeDiffTests.node(2, 1, "Login", .detached)
        released.isPlaceholder = true
        let second = TreeDiffTests.view([
            TreeDiffTests.node(1, nil, "App"), released, TreeDiffTests.node(4, 2, "Profile", .leaked),
            TreeDiffTests.node(12, 1, "Login"), TreeDiffTests.node(13, 12, "Feed"), TreeDiffTests.node(14, 12, "Profile"),
        ])
        let diff = TreeDiff.compare(first, second)
        #expect(diff.removed.isEmpty)
        #expect(diff.changed.isEmpty)
        #expect(diff.added.map(\.path) == ["App/Login#1/Profile"])
        #expect(diff.text() == "+ App/Login#1/Profile  (Flow, leaked)\n1 added, 0 removed, 0 changed\n")
        // And back: the leaked remains are what is gone.
        #expect(TreeDiff.compare(second, first).text() == "- App/Login#1/Profile  (Flow, leaked)\n0 added, 1 removed, 0 changed\n")
    }

    @Test func twoLiveSiblingsOfOneNameKeepTheirOrder() {
        let first = TreeDiffTests.view([
            TreeDiffTests.node(1, nil, "App"), TreeDiffTests.node(2, 1, "Item"), TreeDiffTests.node(3, 1, "Item", .leaked),
            TreeDiffTests.node(4, 1, "Item"),
        ])
        let paths = TreeDiff.compare(first, TreeDiffTests.view([])).removed.map(\.path)
        #expect(paths == ["App", "App/Item", "App/Item#2", "App/Item#1"])
    }
}
