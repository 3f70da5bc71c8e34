import NodescopeCollector
import NodescopeWire
import Testing

@Suite("Session rules: every violation, and the collector stays usable")
struct SessionErrorTests {
    let second = Harness.second

    /// Sends `message`, expects `code`, and checks that the session did not change and that a
    /// second session on the same collector still works.
    func expectViolation(
        _ code: SessionError.Code, _ message: WireMessage, in host: inout Harness,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let treeBefore = host.collector.tree(host.session)
        let summaryBefore = host.collector.summary(host.session)
        let leaksBefore = host.collector.leaks(host.session)
        do {
            _ = try host.collector.ingest(message, session: host.session, now: host.now)
            Issue.record("expected \(code), the frame was accepted", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        }
        #expect(host.collector.tree(host.session) == treeBefore, sourceLocation: sourceLocation)
        #expect(host.collector.summary(host.session) == summaryBefore, sourceLocation: sourceLocation)
        #expect(host.collector.leaks(host.session) == leaksBefore, sourceLocation: sourceLocation)

        let other = host.collector.openSession(
            Hello(role: .host, pid: 7, monotonicNanos: host.now, wallNanos: 0, processName: "other"), now: host.now)
        var script = HostScript()
        do {
            for frame in script.attach(1, kind: "Fine", at: host.now) {
                _ = try host.collector.ingest(frame, session: other, now: host.now)
            }
        } catch {
            Issue.record("another session failed: \(error)", sourceLocation: sourceLocation)
        }
        #expect(host.collector.tree(other)?.nodes.map(\.kind) == ["Fine"], sourceLocation: sourceLocation)
        _ = host.collector.endSession(other, normally: true, now: host.now)
    }

    func attached() throws -> Harness {
        var host = Harness()
        try host.attach(1, kind: "AppFlow", objects: ["flow", "context"])
        return host
    }

    @Test func unknownSession() {
        var collector = Collector()
        #expect(throws: SessionError.self) {
            try collector.ingest(.heartbeat(monotonicNanos: 0), session: SessionID(rawValue: 99), now: 0)
        }
        do {
            _ = try collector.ingest(.heartbeat(monotonicNanos: 0), session: SessionID(rawValue: 99), now: 0)
        } catch {
            #expect(error.code == .unknownSession)
        }
    }

    @Test func unexpectedMessages() throws {
        var host = try attached()
        expectViolation(
            .unexpectedMessage, .hello(Hello(role: .host, pid: 1, monotonicNanos: 0, wallNanos: 0, processName: "x")),
            in: &host)
        expectViolation(
            .unexpectedMessage,
            .request(ControlRequestFrame(requestID: 1, command: .listProcesses, argument: "", depth: 0, rootPath: "")),
            in: &host)
        expectViolation(
            .unexpectedMessage,
            .helloAccepted(HelloAccepted(graceNanos: 1, holdExit: false, collectorMonotonicNanos: 0)), in: &host)
        try host.send([.goodbye(.normalExit)])
        expectViolation(.unexpectedMessage, .heartbeat(monotonicNanos: 0), in: &host)
        host.end(normally: true)
        expectViolation(.unexpectedMessage, .dropped(count: 1), in: &host)
    }

    @Test func eventBetweenDroppedAndItsSnapshot() throws {
        var host = try attached()
        try host.send([.dropped(count: 4)])
        expectViolation(.unexpectedMessage, host.script.state(1, .ended, at: host.now)[0], in: &host)
    }

    @Test func unknownString() throws {
        var host = try attached()
        expectViolation(
            .unknownString,
            .nodeAttached(
                NodeAttachedFrame(
                    sequence: 100, timeNanos: host.now, nodeID: 2, parentID: 1, kindStringID: 77, nameStringID: 0)),
            in: &host)
        expectViolation(
            .unknownString,
            .nodeAttached(
                NodeAttachedFrame(
                    sequence: 100, timeNanos: host.now, nodeID: 2, parentID: 1, kindStringID: 1, nameStringID: 78)),
            in: &host)
        expectViolation(
            .unknownString,
            .objectAdded(
                ObjectAddedFrame(
                    sequence: 100, timeNanos: host.now, nodeID: 1, objectIndex: 5, roleStringID: 0, typeNameStringID: 0)
            ), in: &host)
    }

    @Test func duplicateString() throws {
        var host = try attached()
        expectViolation(.duplicateString, .defineString(DefineStringFrame(stringID: 1, value: "again")), in: &host)
        expectViolation(.duplicateString, .defineString(DefineStringFrame(stringID: 0, value: "zero")), in: &host)
    }

    @Test func unknownNode() throws {
        var host = try attached()
        expectViolation(.unknownNode, host.script.state(42, .active, at: host.now)[0], in: &host)
        expectViolation(.unknownNode, host.script.detach(42, at: host.now)[0], in: &host)
        expectViolation(.unknownNode, host.script.release(42, index: 0, at: host.now)[0], in: &host)
        expectViolation(
            .unknownNode, host.script.addObject(42, index: 0, role: "flow", type: "T", at: host.now).last!, in: &host)
    }

    @Test func unknownNodeInsideASnapshotIsNotTolerated() throws {
        var host = try attached()
        try host.detach(1)
        try host.release(1, 0)
        try host.release(1, 1)
        #expect(host.tree.nodes.isEmpty)
        try host.send(host.script.beginSnapshot(nodeCount: 0))
        expectViolation(.unknownNode, host.script.state(1, .active, at: host.now)[0], in: &host)
    }

    @Test func duplicateNode() throws {
        var host = try attached()
        expectViolation(.duplicateNode, host.script.attach(1, kind: "AppFlow", at: host.now)[0], in: &host)
        try host.attach(2, parent: 1, kind: "Child", objects: [])
        try host.detach(2)
        #expect(host.node(2) == nil)
        expectViolation(.duplicateNode, host.script.attach(2, parent: 1, kind: "Child", at: host.now)[0], in: &host)
    }

    @Test func unknownObject() throws {
        var host = try attached()
        expectViolation(.unknownObject, host.script.release(1, index: 9, at: host.now)[0], in: &host)
        try host.release(1, 0)
        expectViolation(.unknownObject, host.script.release(1, index: 0, at: host.now)[0], in: &host)
    }

    @Test func duplicateObject() throws {
        var host = try attached()
        expectViolation(
            .duplicateObject,
            host.script.addObject(1, index: 1, role: "context", type: "AppFlow.context", at: host.now).last!, in: &host)
    }

    @Test func alreadyDetached() throws {
        var host = try attached()
        try host.detach(1)
        expectViolation(.alreadyDetached, host.script.detach(1, at: host.now)[0], in: &host)
    }

    @Test func sequenceRegression() throws {
        var host = try attached()
        let last = host.script.sequence
        expectViolation(
            .sequenceRegression,
            .stateChanged(
                StateChangedFrame(
                    sequence: last, timeNanos: host.now, nodeID: 1, state: .ended)), in: &host)
        expectViolation(
            .sequenceRegression,
            .stateChanged(
                StateChangedFrame(
                    sequence: last - 1, timeNanos: host.now, nodeID: 1, state: .ended)), in: &host)
        // A snapshot older than the last delta.
        expectViolation(
            .sequenceRegression, .snapshotBegin(SnapshotBeginFrame(sequence: last - 1, nodeCount: 0)), in: &host)
        // Inside a snapshot every frame carries its sequence; after it, deltas must be greater.
        try host.send([.snapshotBegin(SnapshotBeginFrame(sequence: last + 10, nodeCount: 1))])
        expectViolation(
            .sequenceRegression,
            .nodeAttached(
                NodeAttachedFrame(
                    sequence: last + 11, timeNanos: host.now, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
            in: &host)
        try host.send([
            .nodeAttached(
                NodeAttachedFrame(
                    sequence: last + 10, timeNanos: host.now, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
            .snapshotEnd(sequence: last + 10),
        ])
        expectViolation(
            .sequenceRegression,
            .stateChanged(
                StateChangedFrame(
                    sequence: last + 10, timeNanos: host.now, nodeID: 1, state: .ended)), in: &host)
        _ = try host.collector.ingest(
            .stateChanged(
                StateChangedFrame(
                    sequence: last + 11, timeNanos: host.now, nodeID: 1, state: .ended)), session: host.session,
            now: host.now)
    }

    @Test func snapshotNesting() throws {
        var host = try attached()
        let sequence = host.script.sequence
        expectViolation(.snapshotNesting, .snapshotEnd(sequence: sequence), in: &host)
        try host.send([.snapshotBegin(SnapshotBeginFrame(sequence: sequence, nodeCount: 0))])
        expectViolation(
            .snapshotNesting, .snapshotBegin(SnapshotBeginFrame(sequence: sequence, nodeCount: 0)), in: &host)
        expectViolation(.snapshotNesting, .snapshotEnd(sequence: sequence + 1), in: &host)
        expectViolation(.snapshotNesting, .dropped(count: 1), in: &host)
        expectViolation(.snapshotNesting, .goodbye(.normalExit), in: &host)
        // A definition inside a snapshot is fine.
        try host.send([.defineString(DefineStringFrame(stringID: 50, value: "late")), .snapshotEnd(sequence: sequence)])
        #expect(host.tree.nodes.isEmpty)
    }

    @Test func snapshotCountMismatch() throws {
        var host = try attached()
        let sequence = host.script.sequence
        let kind: UInt32 = 1
        try host.send([.snapshotBegin(SnapshotBeginFrame(sequence: sequence, nodeCount: 1))])
        expectViolation(.snapshotCountMismatch, .snapshotEnd(sequence: sequence), in: &host)
        try host.send([
            .nodeAttached(
                NodeAttachedFrame(
                    sequence: sequence, timeNanos: host.now, nodeID: 1, parentID: 0, kindStringID: kind, nameStringID: 0
                ))
        ])
        expectViolation(
            .snapshotCountMismatch,
            .nodeAttached(
                NodeAttachedFrame(
                    sequence: sequence, timeNanos: host.now, nodeID: 2, parentID: 0, kindStringID: kind, nameStringID: 0
                )), in: &host)
    }

    @Test func tooManyNodes() throws {
        var host = Harness(settings: .init(maxNodesPerSession: 2))
        try host.attach(1, kind: "A")
        try host.attach(2, parent: 1, kind: "B")
        expectViolation(.tooManyNodes, host.script.attach(3, parent: 1, kind: "A", at: host.now).last!, in: &host)
        expectViolation(.tooManyNodes, .snapshotBegin(SnapshotBeginFrame(sequence: 100, nodeCount: 3)), in: &host)
    }

    @Test func tooManyStrings() throws {
        var host = Harness(settings: .init(maxStringsPerSession: 2))
        try host.send([
            .defineString(DefineStringFrame(stringID: 1, value: "a")),
            .defineString(DefineStringFrame(stringID: 2, value: "b")),
        ])
        expectViolation(.tooManyStrings, .defineString(DefineStringFrame(stringID: 3, value: "c")), in: &host)
        var bytes = Harness(settings: .init(maxStringBytesPerSession: 8))
        try bytes.send([.defineString(DefineStringFrame(stringID: 1, value: "12345"))])
        expectViolation(.tooManyStrings, .defineString(DefineStringFrame(stringID: 2, value: "6789")), in: &bytes)
    }

    @Test func tooManyObjects() throws {
        var host = Harness(settings: .init(maxObjectsPerSession: 2))
        try host.attach(1, kind: "A", objects: ["flow", "context"])
        expectViolation(
            .tooManyObjects, host.script.addObject(1, index: 2, role: "flow", type: "A.flow", at: host.now).last!,
            in: &host)
    }

    @Test func errorsReadWell() {
        let error = SessionError(.unknownNode, "stateChanged names node 42, which was never attached")
        #expect(error.description == "nodescope session: stateChanged names node 42, which was never attached")
    }
}
