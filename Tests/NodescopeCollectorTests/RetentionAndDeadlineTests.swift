import NodescopeCollector
import NodescopeWire
import Testing

@Suite("Deadlines and the retention of ended sessions")
struct RetentionAndDeadlineTests {
    let second = Harness.second

    static func open(_ collector: inout Collector, pid: UInt32, at now: UInt64) -> SessionID {
        collector.openSession(
            Hello(role: .host, pid: pid, monotonicNanos: now, wallNanos: 0, processName: "p\(pid)"), now: now)
    }

    @Test func nextDeadlineIsTheEarliestGraceOverSessions() throws {
        var host = Harness()
        #expect(host.collector.nextDeadline() == nil)
        try host.attach(1, kind: "A", objects: ["flow"])
        try host.attach(2, kind: "B", objects: ["flow"])
        try host.detach(1)
        let first = host.now + second
        host.wait(100)
        try host.detach(2)
        #expect(host.collector.nextDeadline() == first)
        // Released in time: the next deadline moves on.
        try host.release(1, 0)
        #expect(host.collector.nextDeadline() == first + 100)

        let other = Self.open(&host.collector, pid: 2, at: host.now)
        var script = HostScript()
        for frame in script.attach(1, kind: "X", at: host.now)
            + script.addObject(1, index: 0, role: "flow", type: "X", at: host.now)
            + script.detach(1, at: host.now - second / 2)
        {
            _ = try host.collector.ingest(frame, session: other, now: host.now)
        }
        #expect(host.collector.nextDeadline() == host.now + second / 2)
        let changes = host.collector.advance(now: host.now + second / 2)
        #expect(changes.map(\.0) == [other, other])
        #expect(host.collector.nextDeadline() == first + 100)
        host.advance(to: first + 100)
        #expect(host.collector.nextDeadline() == nil)
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
        _ = a.collector.advance(now: a.now + 2 * second)
        #expect(a.collector.leaks(nil).map(\.nodeID) == [5, 1])
        #expect(a.collector.leaks(b).map(\.nodeID) == [5])
    }
}
