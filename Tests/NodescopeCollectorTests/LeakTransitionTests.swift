import NodescopeCollector
import NodescopeWire
import Testing

@Suite("Leak state machine: every transition on a fake clock")
struct LeakTransitionTests {
    let second = Harness.second

    @Test func stateChangesShowWhileAttached() throws {
        var host = Harness()
        let attached = try host.attach(1, kind: "AppFlow", objects: ["flow", "context"], state: nil)
        #expect(attached.count == 3)
        #expect(host.status(1) == .attached)
        #expect(try host.setState(1, .started) == [.statusChanged(id: 1, status: .started)])
        try host.setState(1, .active)
        #expect(host.status(1) == .active)
        try host.setState(1, .inactive)
        #expect(host.status(1) == .inactive)
        try host.setState(1, .ended)
        #expect(host.status(1) == .ended)
        #expect(host.summary.liveNodes == 1)
    }

    @Test func objectReleasedWhileAttachedIsOnlyMarked() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow", objects: ["flow", "worker"])
        #expect(try host.release(1, 1) == [.objectReleased(id: 1, index: 1)])
        let node = try #require(host.node(1))
        #expect(node.status == .active)
        #expect(node.objects.map(\.isAlive) == [true, false])
        #expect(node.objects[1].typeName == "AppFlow.worker")
    }

    @Test func releasedWithinGraceIsRemovedClean() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "LoginFlow", objects: ["flow", "context"])
        let detachedAt = host.now
        #expect(try host.detach(2) == [.statusChanged(id: 2, status: .detached)])
        #expect(host.status(2) == .detached)
        #expect(host.node(2)?.detachedAtNanos == detachedAt)
        #expect(host.summary.liveNodes == 1)
        host.wait(second / 2)
        try host.release(2, 0)
        #expect(host.status(2) == .detached)
        host.wait(second / 2 - 1)
        #expect(try host.release(2, 1) == [.objectReleased(id: 2, index: 1), .removed(id: 2)])
        #expect(host.node(2) == nil)
        #expect(host.advance(to: detachedAt + 10 * second).isEmpty)
        #expect(host.leaks.isEmpty)
        #expect(host.collector.nextDeadline() == nil)
    }

    @Test func detachWithEverythingReleasedIsRemovedAtOnce() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "Empty", objects: [])
        #expect(try host.detach(2) == [.statusChanged(id: 2, status: .detached), .removed(id: 2)])
        try host.attach(3, parent: 1, kind: "Done", objects: ["flow"])
        try host.release(3, 0)
        #expect(try host.detach(3) == [.statusChanged(id: 3, status: .detached), .removed(id: 3)])
        #expect(host.tree.nodes.map(\.id) == [1])
    }

    @Test func leakedExactlyWhenTheGraceRunsOut() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "LoginFlow", objects: ["flow", "context", "worker"])
        try host.release(2, 1)
        let detachedAt = host.now
        try host.detach(2)
        #expect(host.advance(to: detachedAt + second - 1).isEmpty)
        #expect(host.status(2) == .detached)

        let changes = host.advance(to: detachedAt + second)
        #expect(changes.count == 2)
        #expect(changes.first == .statusChanged(id: 2, status: .leaked))
        let record = try #require(host.leaks.first)
        #expect(changes.last == .leakFlagged(record))
        #expect(record.verdict == .leaked)
        #expect(record.nodeID == 2)
        #expect(record.kind == "LoginFlow")
        #expect(record.path == ["AppFlow", "LoginFlow"])
        #expect(record.aliveObjects.map(\.role) == ["flow", "worker"])
        #expect(record.detachedAtNanos == detachedAt)
        #expect(record.flaggedAtNanos == detachedAt + second)
        #expect(record.releasedAtNanos == nil)
        #expect(
            record.fingerprint
                == LeakFingerprint.fingerprint(path: ["AppFlow", "LoginFlow"], aliveRoles: ["worker", "flow"]))
        #expect(host.status(2) == .leaked)
        #expect(host.summary.leaks == 1)
        #expect(host.collector.nextDeadline() == nil)
    }

    @Test func flagTimeIsTheDeadlineEvenWhenAdvanceIsLate() throws {
        var host = Harness()
        try host.attach(1, kind: "A")
        let detachedAt = host.now
        try host.detach(1)
        host.advance(to: detachedAt + 5 * second)
        #expect(host.leaks.map(\.flaggedAtNanos) == [detachedAt + second])
    }

    @Test func lateReleaseKeepsOneRecordWithTheDelay() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "LoginFlow", objects: ["flow", "context"])
        let detachedAt = host.now
        try host.detach(2)
        host.advance(to: detachedAt + second)
        host.wait(second)
        try host.release(2, 0)
        #expect(host.status(2) == .leaked)
        host.wait(second / 2)
        let changes = try host.release(2, 1)
        #expect(changes.count == 3)
        #expect(changes[0] == .objectReleased(id: 2, index: 1))
        #expect(changes[1] == .statusChanged(id: 2, status: .lateRelease))
        #expect(host.status(2) == .lateRelease)
        #expect(host.node(2)?.parent == 1)
        #expect(host.leaks.count == 1)
        let record = try #require(host.leaks.first)
        #expect(changes[2] == .leakFlagged(record))
        #expect(record.verdict == .lateRelease)
        #expect(record.releasedAtNanos == detachedAt + 2 * second + second / 2)
        #expect(record.releaseDelayNanos == 2 * second + second / 2)
        #expect(record.aliveObjects.map(\.role) == ["flow", "context"])
        #expect(host.summary.leaks == 0)
        #expect(host.summary.liveNodes == 1)
    }

    @Test func releaseAfterTheGraceIsLateEvenBeforeAdvance() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        let detachedAt = host.now
        try host.detach(1)
        host.wait(second + 1)
        let changes = try host.release(1, 0)
        #expect(changes.map(Self.kind) == ["status leaked", "flagged", "released", "status lateRelease", "flagged"])
        #expect(host.leaks.first?.flaggedAtNanos == detachedAt + second)
        #expect(host.leaks.first?.verdict == .lateRelease)
    }

    @Test func detachFramedAfterTheGraceIsFlaggedAtIngest() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        // The host detached 3 s ago; the frame arrives only now.
        let changes = try host.send(host.script.detach(1, at: host.hostNow - 3 * second))
        #expect(changes.map(Self.kind) == ["status detached", "status leaked", "flagged"])
        #expect(host.leaks.first?.detachedAtNanos == host.now - 3 * second)
        #expect(host.leaks.first?.flaggedAtNanos == host.now - 2 * second)
    }

    @Test func hostTimesAreMappedToTheCollectorClock() throws {
        var host = Harness(hostOffset: 7_000 * second)
        try host.attach(1, kind: "A")
        #expect(host.node(1)?.attachedAtNanos == host.now)
        host.wait(3)
        try host.detach(1)
        #expect(host.node(1)?.detachedAtNanos == Harness.start + 3)
    }

    @Test func onOneClockHostTimesAreUsedAsTheyAre() throws {
        // The hello was read 500 ms after it was sent (a slow writer, a busy collector): host
        // times must not shift by that, nor the deadline of any verdict.
        var collector = Collector()
        let sent: UInt64 = 50 * second
        let session = collector.openSession(
            Hello(role: .host, pid: 1, monotonicNanos: sent, wallNanos: 0, processName: "p"), now: sent + second / 2,
            clocks: .same)
        var script = HostScript()
        var frames = script.beginSnapshot(nodeCount: 0) + script.endSnapshot()
        frames += script.attach(1, kind: "A", at: sent + 10)
        frames += script.addObject(1, index: 0, role: "flow", type: "A", at: sent + 10)
        frames += script.detach(1, at: sent + 20)
        frames.append(.heartbeat(monotonicNanos: sent + 20 + second))
        for frame in frames { _ = try collector.ingest(frame, session: session, now: sent + second) }
        let record = try #require(collector.leaks(session).first)
        #expect(record.detachedAtNanos == sent + 20)
        #expect(record.flaggedAtNanos == sent + 20 + second)
        #expect(collector.tree(session)?.nodes.first?.attachedAtNanos == sent + 10)
    }

    @Test func unknownClocksAreTheSameUnlessTheHostIsAhead() {
        var collector = Collector()
        let late = collector.openSession(
            Hello(role: .host, pid: 1, monotonicNanos: 10 * second, wallNanos: 0, processName: "late"), now: 15 * second)
        let ahead = collector.openSession(
            Hello(role: .host, pid: 2, monotonicNanos: 90 * second, wallNanos: 0, processName: "ahead"), now: 15 * second)
        let other = collector.openSession(
            Hello(role: .host, pid: 3, monotonicNanos: 10 * second, wallNanos: 0, processName: "other"), now: 15 * second,
            clocks: .different)
        var script = HostScript()
        let frames = script.beginSnapshot(nodeCount: 1) + script.attach(1, kind: "A", at: 10 * second) + script.endSnapshot()
        for frame in frames {
            for session in [late, ahead, other] { _ = try? collector.ingest(frame, session: session, now: 15 * second) }
        }
        #expect(collector.tree(late)?.nodes.first?.attachedAtNanos == 10 * second)
        #expect(collector.tree(ahead)?.nodes.first?.attachedAtNanos == 0)
        #expect(collector.tree(other)?.nodes.first?.attachedAtNanos == 15 * second)
    }

    @Test func abnormalEndMakesPendingNodesUnverified() throws {
        var host = Harness(settings: .init(holdExit: true))
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "Old", objects: ["flow"])
        try host.attach(3, parent: 1, kind: "Recent", objects: ["flow"])
        let firstDetach = host.now
        try host.detach(2)
        host.wait(second)
        try host.detach(3)
        host.wait(second / 2)
        let changes = host.end(normally: false)
        #expect(changes.last == .sessionEnded(normally: false))
        #expect(host.status(2) == .leaked)
        #expect(host.status(3) == .unverified)
        #expect(host.leaks.map(\.verdict) == [.leaked, .unverified])
        // The unverified node is flagged where the host's stream ended (its last event), not
        // when the collector noticed the end.
        #expect(host.leaks.map(\.flaggedAtNanos) == [firstDetach + second, firstDetach + second])
        #expect(host.summary.leaks == 1)
        #expect(host.summary.counts == NodeCounts(attached: 1, leaked: 1, unverified: 1))
        #expect(host.summary.end == .abnormal)
        #expect(host.summary.endedNormally == false)
        #expect(host.summary.endedAtNanos == host.now)
        // The tree stays, the session takes no more frames.
        #expect(host.tree.nodes.count == 3)
        #expect(throws: SessionError.self) { try host.setState(1, .ended) }
    }

    @Test func normalEndWithTheExitHoldJudgesLeaked() throws {
        var host = Harness(settings: .init(holdExit: true))
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "Child", objects: ["flow", "worker"])
        try host.detach(2)
        host.wait(second / 4)
        // A host that sends no heartbeats: its exit hold stands for the grace.
        try host.send([.goodbye(.normalExit)])
        let changes = host.end(normally: true)
        #expect(changes.map(Self.kind) == ["status leaked", "flagged", "ended"])
        #expect(host.leaks.first?.verdict == .leaked)
        #expect(host.leaks.first?.flaggedAtNanos == host.now - second / 4)
        #expect(host.status(2) == .leaked)
    }

    @Test func aHeldExitOfAHostWithHeartbeatsLeavesWhatItDidNotVouchForUnverified() throws {
        var host = Harness(settings: .init(holdExit: true))
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "Child", objects: ["flow"])
        try host.detach(2)
        host.wait(second / 4)
        // Detached during the hold: its grace had not run out by the last heartbeat.
        try host.send([.heartbeat(monotonicNanos: host.hostNow), .goodbye(.normalExit)])
        host.end(normally: true)
        #expect(host.leaks.map(\.verdict) == [.unverified])
        #expect(host.leaks.first?.flaggedAtNanos == host.now)
    }

    @Test func normalEndWithoutTheExitHoldIsUnverified() throws {
        var host = Harness(settings: .init(holdExit: false))
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "Child", objects: ["flow"])
        try host.detach(2)
        try host.send([.goodbye(.normalExit)])
        host.end(normally: true)
        #expect(host.leaks.map(\.verdict) == [.unverified])
        #expect(host.status(2) == .unverified)
        #expect(host.summary.endedNormally == true)
    }

    @Test func ghostStaysUnderItsFormerParent() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "LoggedInFlow")
        try host.attach(3, parent: 2, kind: "ProfileFlow", objects: ["flow", "worker"])
        try host.detach(3)
        try host.release(3, 0)
        try host.detach(2)
        host.advance(to: host.now + second)
        #expect(host.status(3) == .leaked)
        #expect(host.status(2) == .leaked)
        #expect(host.node(3)?.parent == 2)
        // Same deadline: flagged in id order.
        #expect(host.leaks.map(\.path) == [["AppFlow", "LoggedInFlow"], ["AppFlow", "LoggedInFlow", "ProfileFlow"]])
    }

    @Test func ghostKeepsItsPlaceWhenTheParentIsReleasedLater() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "LoggedInFlow", objects: ["flow"])
        try host.attach(3, parent: 2, kind: "ProfileFlow", objects: ["flow"])
        try host.detach(3)
        try host.detach(2)
        host.advance(to: host.now + second / 2)
        // The parent is released within its grace: clean, but its ghost child keeps it in place.
        let changes = try host.release(2, 0)
        #expect(changes == [.objectReleased(id: 2, index: 0)])
        host.advance(to: host.now + second)
        #expect(host.status(3) == .leaked)
        let parent = try #require(host.node(2))
        #expect(parent.isPlaceholder)
        #expect(parent.status == .detached)
        #expect(host.node(3)?.parent == 2)
        #expect(host.tree.nodes.map(\.id) == [1, 2, 3])
        #expect(host.leaks.map(\.nodeID) == [3])
        #expect(host.leaks.first?.path == ["AppFlow", "LoggedInFlow", "ProfileFlow"])
        // Late events for the cleanly released parent are tolerated.
        try host.setState(2, .ended)
        // When the ghost is finally released, it stays as a late release, and so does its place.
        try host.release(3, 0)
        #expect(host.status(3) == .lateRelease)
        #expect(host.tree.nodes.map(\.id) == [1, 2, 3])
    }

    @Test func placeholderGoesWhenItsLastChildIsReleasedCleanly() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow", objects: ["flow"])
        try host.attach(2, parent: 1, kind: "Child", objects: ["flow"])
        try host.detach(2)
        try host.detach(1)
        try host.release(1, 0)
        #expect(host.node(1)?.isPlaceholder == true)
        #expect(try host.release(2, 0) == [.objectReleased(id: 2, index: 0), .removed(id: 2), .removed(id: 1)])
        #expect(host.tree.nodes.isEmpty)
    }

    @Test func attachUnderAnUnknownParentUsesAPlaceholder() throws {
        var host = Harness()
        let changes = try host.attach(5, parent: 99, kind: "Orphan")
        guard case .attached(let placeholder) = changes.first else {
            Issue.record("expected a placeholder first, got \(changes)")
            return
        }
        #expect(placeholder.id == 99)
        #expect(placeholder.isPlaceholder)
        #expect(host.node(5)?.parent == 99)
        #expect(host.node(5)?.depth == 1)
        #expect(host.summary.liveNodes == 1)
        // Events for a placeholder that never existed are violations.
        #expect(throws: SessionError(.unknownNode, "stateChanged names node 99, which was never attached")) {
            try host.setState(99, .active)
        }
        // Its child's clean release takes it away.
        try host.detach(5)
        try host.release(5, 0)
        #expect(host.tree.nodes.isEmpty)
    }

    @Test func eventsForANodeRemovedCleanAreTolerated() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        try host.detach(1)
        try host.release(1, 0)
        #expect(try host.setState(1, .ended).isEmpty)
        #expect(try host.release(1, 0).isEmpty)
        #expect(try host.detach(1).isEmpty)
        #expect(host.summary.eventsIngested == 8)
    }

    /// A short name for a change, to compare sequences of changes.
    static func kind(_ change: TreeChange) -> String {
        switch change {
        case .attached: "attached"
        case .statusChanged(_, let status): "status \(status.rawValue)"
        case .objectAdded: "added"
        case .objectReleased: "released"
        case .removed: "removed"
        case .resynced: "resynced"
        case .leakFlagged: "flagged"
        case .retainersFound: "retainers"
        case .sessionEnded: "ended"
        }
    }
}
