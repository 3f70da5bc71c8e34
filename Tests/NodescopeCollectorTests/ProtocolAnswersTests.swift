import NodescopeCollector
import NodescopeWire
import Testing

/// The answers docs/PROTOCOL.md gives to the questions an independent implementation asked:
/// one test per answer, on the collector's logic.
@Suite("Protocol answers: the points the document settles")
struct ProtocolAnswersTests {
    let second = Harness.second

    @Test func aStringIdZeroWhereAStringIsRequiredIsASessionViolation() {
        var host = Harness()
        let frame = NodeAttachedFrame(sequence: 1, timeNanos: 1, nodeID: 1, parentID: 0, kindStringID: 0, nameStringID: 0)
        #expect(throws: SessionError.self) { try host.send([.nodeAttached(frame)]) }
        do {
            try host.send([.nodeAttached(frame)])
        } catch {
            #expect(error.code == .unknownString)
        }
    }

    @Test func noneNamesAndRolesAreEmptyInJSONAndTheKindInPaths() throws {
        var host = Harness()
        try host.send(host.script.attach(1, kind: "AppFlow", at: host.hostNow))
        try host.send(host.script.addObject(1, index: 0, role: "", type: "AppFlowImp", at: host.hostNow))
        try host.send(host.script.detach(1, at: host.hostNow))
        host.advance(to: host.now + 2 * second)
        let node = try #require(host.node(1))
        #expect(node.name == "")
        #expect(node.objects.map(\.role) == [""])
        #expect(host.leaks.first?.path == ["AppFlow"])
    }

    @Test func deltasBeforeTheFirstSnapshotAreAppliedToAnEmptyTree() throws {
        var collector = Collector()
        let session = collector.openSession(
            Hello(role: .host, pid: 1, monotonicNanos: 10, wallNanos: 0, processName: "p"), now: 10)
        var script = HostScript()
        for frame in script.attach(1, kind: "A", at: 10) { _ = try collector.ingest(frame, session: session, now: 10) }
        #expect(collector.tree(session)?.nodes.map(\.id) == [1])
    }

    @Test func aSequenceGapWithoutDroppedIsAccepted() throws {
        var host = Harness()
        try host.attach(1, kind: "A")
        let gapped = NodeAttachedFrame(
            sequence: host.script.sequence + 10, timeNanos: host.hostNow, nodeID: 2, parentID: 1,
            kindStringID: host.script.string("A"), nameStringID: 0)
        try host.send(host.script.take() + [.nodeAttached(gapped)])
        #expect(host.tree.nodes.map(\.id) == [1, 2])
    }

    @Test func anObjectAddedToADetachedNodeCountsTowardItsRelease() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        try host.detach(1)
        try host.send(host.script.addObject(1, index: 1, role: "worker", type: "W", at: host.hostNow))
        try host.release(1, 0)
        #expect(host.status(1) == .detached)
        host.advance(to: host.now + 2 * second)
        #expect(host.leaks.first?.aliveObjects.map(\.role) == ["worker"])
    }

    @Test func aSecondDetachIsAViolation() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        try host.detach(1)
        do {
            try host.detach(1)
            Issue.record("a second detach was accepted")
        } catch {
            #expect(error.code == .alreadyDetached)
        }
    }

    @Test func aSnapshotWithoutDroppedIsAcceptedAndReplacesTheTree() throws {
        var host = Harness()
        try host.attach(1, kind: "A")
        try host.attach(2, kind: "B")
        var frames = host.script.beginSnapshot(nodeCount: 1)
        frames += host.script.attach(2, kind: "B", at: host.hostNow)
        frames += host.script.endSnapshot()
        let changes = try host.send(frames)
        #expect(changes.contains(.resynced))
        #expect(host.tree.nodes.map(\.id) == [2])
    }

    @Test func aGoodbyeEndsTheStreamForTheCollector() throws {
        var host = Harness()
        try host.send([.goodbye(.normalExit)])
        #expect(throws: SessionError.self) { try host.send([.heartbeat(monotonicNanos: 1)]) }
    }

    @Test func droppedIsCumulativeAndEventsIngestedCountsEventFramesOnly() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"], state: nil)  // 2 event frames
        try host.send([.dropped(count: 3)])
        var frames = host.script.beginSnapshot(nodeCount: 1, sequence: host.script.sequence + 3)
        frames += host.script.attach(1, kind: "A", at: host.hostNow)
        frames += host.script.endSnapshot()
        try host.send(frames + [.heartbeat(monotonicNanos: host.hostNow)])  // 1 event frame
        try host.send([.dropped(count: 2)])
        #expect(host.summary.droppedReported == 5)
        #expect(host.summary.eventsIngested == 3)
    }

    @Test func aSnapshotNodeWithoutStateReadsAsAttached() throws {
        var host = Harness()
        var frames = host.script.beginSnapshot(nodeCount: 1)
        frames += host.script.attach(1, kind: "A", at: host.hostNow)
        frames += host.script.endSnapshot()
        try host.send(frames)
        #expect(host.status(1) == .attached)
    }

    @Test func aGoodbyeBetweenDroppedAndItsSnapshotIsAViolation() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        try host.send([.dropped(count: 1)])
        do {
            try host.send([.goodbye(.normalExit)])
            Issue.record("a goodbye on a stale tree was accepted")
        } catch {
            #expect(error.code == .unexpectedMessage)
        }
    }

    @Test func aReleaseStampedAfterTheDeadlineIsLateWhateverTheWatermark() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        try host.detach(1)
        try host.send([.heartbeat(monotonicNanos: host.hostNow)])  // heartbeat mode: events move nothing
        // Released 1.5 s after its detach (a teardown that took that long), read before any
        // heartbeat passed the deadline: it was alive at the deadline, so it was late.
        try host.send(host.script.release(1, index: 0, at: host.hostNow + 3 * second / 2))
        let record = try #require(host.leaks.first)
        #expect(record.verdict == .lateRelease)
        #expect(record.flaggedAtNanos == host.now + second)
        #expect(record.releasedAtNanos == host.now + 3 * second / 2)
    }
}
