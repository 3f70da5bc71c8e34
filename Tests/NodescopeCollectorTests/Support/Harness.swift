import NodescopeCollector
import NodescopeWire

/// One collector with one host session, fed through a ``HostScript`` on a fake clock.
///
/// The host's clock reads `hostOffset` more than the collector's (0 by default), so host times
/// in frames are `now + hostOffset`.
struct Harness {
    var collector: Collector
    var session: SessionID
    var script = HostScript()
    var now: UInt64
    let hostOffset: UInt64
    /// Every change returned so far, in order.
    var changes: [TreeChange] = []

    static let second: UInt64 = 1_000_000_000
    static let start: UInt64 = 100 * second

    init(
        settings: CollectorSettings = .init(), pid: UInt32 = 4242, name: String = "demo", now: UInt64 = Harness.start,
        hostOffset: UInt64 = 0
    ) {
        collector = Collector(settings: settings)
        self.now = now
        self.hostOffset = hostOffset
        session = collector.openSession(
            Hello(
                role: .host, pid: pid, monotonicNanos: now + hostOffset, wallNanos: 1_700_000_000 * Harness.second,
                processName: name),
            now: now)
        // Every real host begins with a snapshot (here an empty one).
        _ = try? send(script.beginSnapshot(nodeCount: 0) + script.endSnapshot())
    }

    /// Host time now.
    var hostNow: UInt64 { now + hostOffset }

    @discardableResult
    mutating func send(_ messages: [WireMessage]) throws(SessionError) -> [TreeChange] {
        var result: [TreeChange] = []
        for message in messages {
            result += try collector.ingest(message, session: session, now: now)
        }
        changes += result
        return result
    }

    /// Attaches a node with objects (roles, type names) and an active state.
    @discardableResult
    mutating func attach(
        _ id: UInt64, parent: UInt64 = 0, kind: String, name: String = "", objects: [String] = ["flow"],
        state: WireNodeState? = .active
    ) throws(SessionError) -> [TreeChange] {
        var result = try send(script.attach(id, parent: parent, kind: kind, name: name, at: hostNow))
        for (index, role) in objects.enumerated() {
            result += try send(
                script.addObject(id, index: UInt16(index), role: role, type: "\(kind).\(role)", at: hostNow))
        }
        if let state { result += try send(script.state(id, state, at: hostNow)) }
        return result
    }

    @discardableResult
    mutating func detach(_ id: UInt64) throws(SessionError) -> [TreeChange] {
        try send(script.detach(id, at: hostNow))
    }

    @discardableResult
    mutating func release(_ id: UInt64, _ index: UInt16) throws(SessionError) -> [TreeChange] {
        try send(script.release(id, index: index, at: hostNow))
    }

    @discardableResult
    mutating func setState(_ id: UInt64, _ state: WireNodeState) throws(SessionError) -> [TreeChange] {
        try send(script.state(id, state, at: hostNow))
    }

    /// Moves the clock by `nanos` without calling advance.
    mutating func wait(_ nanos: UInt64) {
        now += nanos
    }

    /// Moves the clock to `time`, and the host's watermark with it (a heartbeat, as the agent
    /// sends while graces are pending), then calls advance; returns this session's changes.
    @discardableResult
    mutating func advance(to time: UInt64) -> [TreeChange] {
        now = time
        var result = (try? collector.ingest(.heartbeat(monotonicNanos: hostNow), session: session, now: now)) ?? []
        result += collector.advance(now: now).filter { $0.0 == session }.map(\.1)
        changes += result
        return result
    }

    @discardableResult
    mutating func end(normally: Bool) -> [TreeChange] {
        let result = collector.endSession(session, normally: normally, now: now)
        changes += result
        return result
    }

    var tree: TreeView { collector.tree(session)! }
    var leaks: [LeakRecord] { collector.leaks(session) }
    var summary: ProcessSummary { collector.summary(session)! }

    func node(_ id: UInt64) -> NodeInfo? {
        tree.nodes.first { $0.id == id }
    }

    func status(_ id: UInt64) -> NodeStatus? {
        node(id)?.status
    }
}

extension Collector {
    /// Opens a session for a host that has sent its (empty) first snapshot, as every real host
    /// does: a session with nothing after its hello is a phantom and is forgotten at its end.
    mutating func openStreamingSession(pid: UInt32, name: String, at now: UInt64) -> SessionID {
        let session = openSession(
            Hello(role: .host, pid: pid, monotonicNanos: now, wallNanos: 0, processName: name), now: now)
        _ = try? ingest(.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), session: session, now: now)
        _ = try? ingest(.snapshotEnd(sequence: 0), session: session, now: now)
        return session
    }
}
