import NodescopeCollector
import NodescopeWire
import Testing

@Suite("Resync: a snapshot replaces the tree exactly")
struct SnapshotTests {
    let second = Harness.second

    /// Writes a snapshot of `nodes` (id, parent, kind, objects alive flags, detach host time).
    static func snapshot(
        _ script: inout HostScript, sequence: UInt64? = nil,
        nodes: [(id: UInt64, parent: UInt64, kind: String, alive: [Bool], detachedAt: UInt64?)], at time: UInt64
    ) -> [WireMessage] {
        var frames = script.beginSnapshot(nodeCount: UInt32(nodes.count), sequence: sequence)
        for node in nodes {
            frames += script.attach(node.id, parent: node.parent, kind: node.kind, at: time)
            for (index, _) in node.alive.enumerated() {
                frames += script.addObject(
                    node.id, index: UInt16(index), role: index == 0 ? "flow" : "worker", type: node.kind, at: time)
            }
            for (index, alive) in node.alive.enumerated() where !alive {
                frames += script.release(node.id, index: UInt16(index), at: time)
            }
            frames += script.state(node.id, .active, at: time)
            if let detachedAt = node.detachedAt { frames += script.detach(node.id, at: detachedAt) }
        }
        return frames + script.endSnapshot()
    }

    @Test func firstSnapshotBuildsTheTree() throws {
        var host = Harness()
        let frames = Self.snapshot(
            &host.script,
            nodes: [
                (1, 0, "AppFlow", [true], nil),
                (2, 1, "LoginFlow", [true, false], nil),
                (3, 1, "Gone", [true], host.hostNow - second / 2),
            ], at: host.hostNow - 5 * second)
        let changes = try host.send(frames)
        #expect(changes == [.resynced])
        #expect(host.tree.nodes.map(\.id) == [1, 2, 3])
        #expect(host.tree.nodes.map(\.depth) == [0, 1, 1])
        #expect(host.status(2) == .active)
        #expect(host.node(2)?.objects.map(\.isAlive) == [true, false])
        #expect(host.status(3) == .detached)
        #expect(host.node(3)?.detachedAtNanos == host.now - second / 2)
        #expect(host.summary.liveNodes == 2)
        #expect(host.summary.eventsIngested == 12)
    }

    @Test func snapshotReplacesTheTreeAndKeepsLeakRecords() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "Leaky", objects: ["flow"])
        try host.attach(3, parent: 1, kind: "StillLeaky", objects: ["flow", "worker"])
        try host.attach(4, parent: 1, kind: "Vanishing")
        try host.attach(5, parent: 1, kind: "Pending", objects: ["flow"])
        let leakDetach = host.hostNow
        try host.detach(2)
        try host.detach(3)
        host.advance(to: host.now + second)
        #expect(host.leaks.count == 2)
        let pendingDetach = host.hostNow
        try host.detach(5)
        host.wait(second / 4)

        try host.send([.dropped(count: 3)])
        #expect(host.summary.droppedReported == 3)
        let frames = Self.snapshot(
            &host.script, sequence: host.script.sequence + 3,
            nodes: [
                (1, 0, "AppFlow", [true], nil),
                (3, 1, "StillLeaky", [true, false], leakDetach),
                (5, 1, "Pending", [true], pendingDetach),
                (6, 1, "New", [true], nil),
            ], at: host.hostNow)
        let changes = try host.send(frames)
        #expect(changes == [.resynced])
        // Exactly the snapshot's nodes.
        #expect(host.tree.nodes.map(\.id) == [1, 3, 5, 6])
        #expect(host.status(3) == .leaked)
        #expect(host.node(3)?.detachedAtNanos == leakDetach)
        #expect(host.status(5) == .detached)
        #expect(host.node(5)?.detachedAtNanos == pendingDetach)
        #expect(host.summary.liveNodes == 2)
        // The records stay: the vanished leak was released during the gap.
        #expect(host.leaks.map(\.nodeID) == [2, 3])
        #expect(host.leaks.map(\.verdict) == [.lateRelease, .leaked])
        #expect(host.leaks[0].releasedAtNanos == host.now)
        #expect(host.summary.leaks == 1)
        // The pending node keeps its original deadline.
        host.advance(to: pendingDetach + second - 1)
        #expect(host.status(5) == .detached)
        host.advance(to: pendingDetach + second)
        #expect(host.status(5) == .leaked)
        #expect(host.leaks.count == 3)
        // Deltas continue after the snapshot's sequence.
        try host.release(3, 0)
        #expect(host.status(3) == .lateRelease)
        #expect(host.leaks.count == 3)
    }

    @Test func snapshotDetachTimeInThePastIsFlaggedAtTheEnd() throws {
        var host = Harness()
        let detachedAt = host.hostNow - 3 * second
        let frames = Self.snapshot(
            &host.script,
            nodes: [
                (1, 0, "AppFlow", [true], nil),
                (2, 1, "Old", [true, true], detachedAt),
            ], at: host.hostNow - 10 * second)
        // Flagged by the host's next heartbeat (its watermark), at the deadline.
        var changes = try host.send(frames)
        changes += try host.send([.heartbeat(monotonicNanos: host.hostNow)])
        #expect(changes.map(LeakTransitionTests.kind) == ["resynced", "status leaked", "flagged"])
        #expect(host.leaks.first?.flaggedAtNanos == host.now - 2 * second)
        #expect(host.leaks.first?.path == ["AppFlow", "Old"])
    }

    @Test func ghostWhoseParentVanishedKeepsItsFormerPlace() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "LoggedInFlow", objects: ["flow"])
        try host.attach(3, parent: 2, kind: "ProfileFlow", objects: ["flow"])
        let detachedAt = host.hostNow
        try host.detach(3)
        try host.detach(2)
        host.advance(to: host.now + second)
        #expect(host.leaks.count == 2)
        // The host released node 2 while the link was down; its snapshot still holds the ghost 3,
        // under the parent id 2 that it no longer knows.
        let frames = Self.snapshot(
            &host.script,
            nodes: [
                (1, 0, "AppFlow", [true], nil),
                (3, 2, "ProfileFlow", [true], detachedAt),
            ], at: host.hostNow)
        try host.send(frames)
        #expect(host.tree.nodes.map(\.id) == [1, 2, 3])
        let parent = try #require(host.node(2))
        #expect(parent.isPlaceholder)
        #expect(parent.kind == "LoggedInFlow")
        #expect(parent.parent == 1)
        #expect(host.node(3)?.depth == 2)
        #expect(host.status(3) == .leaked)
        #expect(host.leaks.map(\.verdict) == [.lateRelease, .leaked])
    }

    @Test func cleanNodesInASnapshotAreLeftOut() throws {
        var host = Harness()
        let frames = Self.snapshot(
            &host.script,
            nodes: [
                (1, 0, "AppFlow", [true], nil),
                (2, 1, "Released", [false], host.hostNow),
            ], at: host.hostNow)
        try host.send(frames)
        #expect(host.tree.nodes.map(\.id) == [1])
        // Late events for it are tolerated, as for any node removed as clean.
        try host.setState(2, .ended)
    }

    @Test func childBeforeItsParentFillsThePlaceholder() throws {
        var host = Harness()
        var frames = host.script.beginSnapshot(nodeCount: 2)
        frames += host.script.attach(5, parent: 3, kind: "Child", at: host.hostNow)
        frames += host.script.attach(3, kind: "Parent", at: host.hostNow)
        frames += host.script.endSnapshot()
        try host.send(frames)
        #expect(host.tree.nodes.map(\.id) == [3, 5])
        #expect(host.node(3)?.isPlaceholder == false)
        #expect(host.node(3)?.kind == "Parent")
    }

    @Test func droppedThenEventsBeforeTheSnapshotIsAViolation() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.send([.dropped(count: 2), .heartbeat(monotonicNanos: host.hostNow)])
        #expect(throws: SessionError.self) { try host.setState(1, .ended) }
    }
}
