import NodescopeCollector
import NodescopeWire
import Testing

@Suite("Deadlines and the retention of ended sessions")
struct RetentionAndDeadlineTests {
    let second = Harness.second

    static func open(_ collector: inout Collector, pid: UInt32, at now: UInt64) -> SessionID {
        collector.openStreamingSession(pid: pid, name: "p\(pid)", at: now)
    }

    @Test func gracesRunOutInTheHostsTimeNotTheCollectors() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        try host.detach(1)
        // The collector's clock passes the deadline, but the host has not vouched for that time:
        // nothing is flagged, and the collector has no deadline of its own for it.
        host.wait(5 * second)
        #expect(host.collector.advance(now: host.now).isEmpty)
        #expect(host.collector.nextDeadline() == nil)
        #expect(host.status(1) == .detached)
        // The host's stream says the release came within the grace: never late, however late read.
        try host.send(host.script.release(1, index: 0, at: Harness.start + second / 2))
        #expect(host.node(1) == nil)
        #expect(host.leaks.isEmpty)
    }

    @Test func aHeartbeatPastTheDeadlineFlagsAtTheDeadline() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        try host.detach(1)
        try host.send([.heartbeat(monotonicNanos: Harness.start + second - 1)])
        #expect(host.status(1) == .detached)
        try host.send([.heartbeat(monotonicNanos: Harness.start + 3 * second)])
        #expect(host.status(1) == .leaked)
        #expect(host.leaks.map(\.flaggedAtNanos) == [Harness.start + second])
    }

    @Test func afterHeartbeatsEventTimesNoLongerMoveTheWatermark() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        try host.detach(1)
        try host.send([.heartbeat(monotonicNanos: Harness.start)])
        // A later event of another node: its time does not vouch for releases noticed by polling.
        host.wait(2 * second)
        try host.attach(2, kind: "B", objects: ["flow"])
        #expect(host.status(1) == .detached)
        host.advance(to: host.now)
        #expect(host.status(1) == .leaked)
    }

    @Test func withoutHeartbeatsEventTimesAreTheWatermark() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        try host.detach(1)
        host.wait(2 * second)
        try host.attach(2, kind: "B", objects: ["flow"])
        #expect(host.status(1) == .leaked)
    }

    @Test func heartbeatsAfterDroppedDoNotJudgeTheStaleTree() throws {
        var host = Harness()
        try host.attach(1, kind: "A", objects: ["flow"])
        try host.detach(1)
        try host.send([.dropped(count: 3), .heartbeat(monotonicNanos: Harness.start + 5 * second)])
        #expect(host.status(1) == .detached)
        #expect(host.leaks.isEmpty)
    }

    @Test func endedSessionsAreDroppedAfterTheirRetention() {
        var collector = Collector(settings: .init(endedSessionRetentionNanos: 60 * second))
        let old = Self.open(&collector, pid: 1, at: 0)
        let live = Self.open(&collector, pid: 2, at: 0)
        _ = collector.endSession(old, normally: true, now: 10 * second)
        #expect(collector.summary(old)?.endedAtNanos == 10 * second)
        #expect(collector.nextDeadline() == 70 * second)
        _ = collector.advance(now: 70 * second - 1)
        #expect(collector.summary(old) != nil)
        _ = collector.advance(now: 70 * second)
        #expect(collector.summary(old) == nil)
        #expect(collector.tree(old) == nil)
        #expect(collector.leaks(old).isEmpty)
        #expect(collector.summary(live) != nil)
        #expect(collector.nextDeadline() == nil)
        #expect(throws: SessionError.self) { try collector.ingest(.heartbeat(monotonicNanos: 0), session: old, now: 0) }
    }

    @Test func onlyTheNewestEndedSessionsAreKept() {
        var collector = Collector(settings: .init(maxEndedSessions: 2))
        let sessions = (1...4).map { Self.open(&collector, pid: UInt32($0), at: UInt64($0)) }
        for (offset, session) in sessions.enumerated() {
            _ = collector.endSession(session, normally: true, now: 100 + UInt64(offset))
        }
        #expect(collector.processes().map(\.session) == Array(sessions.suffix(2)))
    }

    @Test func endingTwiceChangesNothing() {
        var collector = Collector()
        let session = Self.open(&collector, pid: 1, at: 0)
        #expect(collector.endSession(session, normally: false, now: 5) == [.sessionEnded(normally: false)])
        #expect(collector.endSession(session, normally: true, now: 6).isEmpty)
        #expect(collector.summary(session)?.endedNormally == false)
        #expect(collector.endSession(SessionID(rawValue: 42), normally: true, now: 6).isEmpty)
    }

    @Test func leaksOfEverySessionByFlagTime() throws {
        var a = Harness(pid: 1)
        try a.attach(1, kind: "A", objects: ["flow"])
        try a.detach(1)
        let b = Self.open(&a.collector, pid: 2, at: a.now - second / 2)
        var script = HostScript()
        for frame in script.attach(5, kind: "B", at: a.now - second / 2)
            + script.addObject(5, index: 0, role: "flow", type: "B", at: a.now - second / 2)
            + script.detach(5, at: a.now - second / 2)
        {
            _ = try a.collector.ingest(frame, session: b, now: a.now)
        }
        for session in [a.session, b] {
            _ = try a.collector.ingest(.heartbeat(monotonicNanos: a.now + 2 * second), session: session, now: a.now)
        }
        #expect(a.collector.leaks(nil).map(\.nodeID) == [5, 1])
        #expect(a.collector.leaks(b).map(\.nodeID) == [5])
    }
}
