import NodescopeCollector
import NodescopeWire
import Testing

@Suite("Tree views: pre-order, focus by path, depth limits")
struct TreeViewTests {
    /// AppFlow(1) ─┬─ LoggedInFlow(2) ─┬─ HomeFlow(4) ── Item(6)
    ///             │                   └─ ProfileFlow(5)
    ///             └─ Settings(3)
    func sample() throws -> Harness {
        var host = Harness()
        try host.attach(1, kind: "Flow", name: "AppFlow")
        try host.attach(2, parent: 1, kind: "Flow", name: "LoggedInFlow")
        try host.attach(3, parent: 1, kind: "Screen", name: "Settings")
        try host.attach(4, parent: 2, kind: "Flow", name: "HomeFlow")
        try host.attach(5, parent: 2, kind: "Flow", name: "ProfileFlow")
        try host.attach(6, parent: 4, kind: "Item")
        return host
    }

    @Test func wholeTreeInPreOrder() throws {
        let host = try sample()
        let view = host.tree
        #expect(view.nodes.map(\.id) == [1, 2, 4, 6, 5, 3])
        #expect(view.nodes.map(\.depth) == [0, 1, 2, 3, 2, 1])
        #expect(
            view.nodes.map(\.displayName) == ["AppFlow", "LoggedInFlow", "HomeFlow", "Item", "ProfileFlow", "Settings"])
        #expect(view.nodes[1].parent == 1)
        #expect(view.truncatedChildren.isEmpty)
        #expect(view.pid == 4242)
        #expect(view.processName == "demo")
    }

    @Test func childrenStayInAttachOrderAfterRemovals() throws {
        var host = Harness()
        try host.attach(1, kind: "Root")
        for id in 2...7 as ClosedRange<UInt64> { try host.attach(id, parent: 1, kind: "C\(id)", objects: []) }
        try host.detach(3)
        try host.detach(2)
        try host.attach(8, parent: 1, kind: "C8")
        #expect(host.tree.nodes.map(\.id) == [1, 4, 5, 6, 7, 8])
    }

    @Test func focusByPathFromARoot() throws {
        let host = try sample()
        let view = try #require(host.collector.tree(host.session, rootPath: ["AppFlow", "LoggedInFlow"]))
        #expect(view.nodes.map(\.id) == [2, 4, 6, 5])
        #expect(view.nodes.map(\.depth) == [0, 1, 2, 1])
        #expect(view.nodes[0].parent == 1)
    }

    @Test func singleNameMatchesAnywhere() throws {
        let host = try sample()
        #expect(host.collector.tree(host.session, rootPath: ["HomeFlow"])?.nodes.map(\.id) == [4, 6])
        // A kind matches too; the first in pre-order wins.
        #expect(host.collector.tree(host.session, rootPath: ["Screen"])?.nodes.map(\.id) == [3])
        // A path that does not start at a root matches where it ends.
        #expect(host.collector.tree(host.session, rootPath: ["LoggedInFlow", "ProfileFlow"])?.nodes.map(\.id) == [5])
    }

    @Test func unknownPathGivesAnEmptyView() throws {
        let host = try sample()
        let view = try #require(host.collector.tree(host.session, rootPath: ["AppFlow", "Nope"]))
        #expect(view.nodes.isEmpty)
        #expect(host.collector.tree(SessionID(rawValue: 99)) == nil)
    }

    @Test func depthLimitReportsCutChildren() throws {
        let host = try sample()
        let roots = try #require(host.collector.tree(host.session, depth: 0))
        #expect(roots.nodes.map(\.id) == [1])
        #expect(roots.truncatedChildren == [1: 2])
        let two = try #require(host.collector.tree(host.session, depth: 1))
        #expect(two.nodes.map(\.id) == [1, 2, 3])
        #expect(two.truncatedChildren == [2: 2])
        let focused = try #require(host.collector.tree(host.session, rootPath: ["LoggedInFlow"], depth: 1))
        #expect(focused.nodes.map(\.id) == [2, 4, 5])
        #expect(focused.truncatedChildren == [4: 1])
        #expect(host.collector.tree(host.session, depth: 10)?.truncatedChildren.isEmpty == true)
    }

    @Test func attachedChangeCarriesTheAbsoluteDepth() throws {
        var host = try sample()
        let changes = try host.attach(7, parent: 6, kind: "Leaf", objects: ["view"], state: .started)
        guard case .attached(let info) = changes.first else {
            Issue.record("expected attached first")
            return
        }
        #expect(info.depth == 4)
        #expect(info.status == .attached)
        #expect(info.parent == 6)
        #expect(
            changes.dropFirst().first
                == .objectAdded(id: 7, object: ObjectInfo(index: 0, role: "view", typeName: "Leaf.view", isAlive: true))
        )
        #expect(changes.last == .statusChanged(id: 7, status: .started))
    }

    @Test func summaryAndProcessList() throws {
        var host = try sample()
        try host.detach(6)
        let other = host.collector.openSession(
            Hello(role: .host, pid: 9, monotonicNanos: 0, wallNanos: 0, processName: "second"), now: host.now + 1)
        _ = host.collector.endSession(host.session, normally: true, now: host.now + 2)
        let list = host.collector.processes()
        #expect(list.map(\.session) == [other, host.session])
        #expect(list[1].liveNodes == 5)
        #expect(list[1].leaks == 0)
        #expect(list[1].counts == NodeCounts(attached: 5, unverified: 1))
        #expect(list[1].isConnected == false)
        #expect(list[0].isConnected)
    }
}
