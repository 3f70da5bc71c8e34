import NodescopeCollector
import NodescopeRecording
import NodescopeReplay
import NodescopeWire
import Testing

/// A recording that starts in the middle of a session opens on what the collector knew then:
/// the same tree (a ghost still under its released former parents), the same leaks with their
/// paths, retain paths and fingerprints.
@Suite("Replay: a recording started mid-session")
struct MidSessionTests {
    static let start: UInt64 = 5_000_000_000_000
    static let hello = Hello(
        protocolVersion: 2, role: .host, pid: 77, monotonicNanos: start, wallNanos: 1_700_000_000_000_000_000,
        processName: "mid-app")

    /// AppFlow › LoggedInFlow › ProfileFlow; LoggedInFlow and ProfileFlow detached, LoggedInFlow
    /// released, ProfileFlow kept alive by a cycle and flagged by a heartbeat past its grace.
    static func hostStream() -> [WireMessage] {
        var frames: [WireMessage] = []
        let names = ["Flow", "AppFlow", "LoggedInFlow", "ProfileFlow", "flow", "context", "ProfileContext", ".flow", "Main.swift"]
        for (index, name) in names.enumerated() {
            frames.append(.defineString(DefineStringFrame(stringID: UInt32(index + 1), value: name)))
        }
        frames.append(.defineSite(DefineSiteFrame(siteID: 1, fileStringID: 9, line: 42)))
        frames.append(.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)))
        frames.append(.snapshotEnd(sequence: 0))
        var sequence: UInt64 = 0
        var time = start
        func next() -> (UInt64, UInt64) {
            sequence += 1
            time += 1_000_000
            return (sequence, time)
        }
        for (id, parent, name) in [(UInt64(1), UInt64(0), UInt32(2)), (2, 1, 3), (3, 2, 4)] {
            var (s, t) = next()
            frames.append(
                .nodeAttached(
                    NodeAttachedFrame(sequence: s, timeNanos: t, nodeID: id, parentID: parent, kindStringID: 1, nameStringID: name)))
            (s, t) = next()
            frames.append(
                .objectAdded(
                    ObjectAddedFrame(sequence: s, timeNanos: t, nodeID: id, objectIndex: 0, roleStringID: 5, typeNameStringID: name)))
            (s, t) = next()
            frames.append(
                .objectAdded(
                    ObjectAddedFrame(sequence: s, timeNanos: t, nodeID: id, objectIndex: 1, roleStringID: 6, typeNameStringID: 7)))
            frames.append(.nodeOrigin(NodeOriginFrame(nodeID: id, siteID: 1, testID: 0)))
            (s, t) = next()
            frames.append(.stateChanged(StateChangedFrame(sequence: s, timeNanos: t, nodeID: id, state: .active)))
        }
        for id in [UInt64(3), 2] {
            let (s, t) = next()
            frames.append(.nodeDetached(NodeDetachedFrame(sequence: s, timeNanos: t, nodeID: id)))
        }
        for index in [UInt16(0), 1] {
            let (s, t) = next()
            frames.append(.objectReleased(ObjectReleasedFrame(sequence: s, timeNanos: t, nodeID: 2, objectIndex: index)))
        }
        frames.append(.heartbeat(monotonicNanos: time + 2_000_000_000))
        frames.append(
            .retainers(
                RetainersFrame(
                    nodeID: 3, objectIndex: 1, verdict: .cycle, elapsedMicros: 120,
                    hops: [
                        RetainerHop(holderKind: .detachedNodeObject, holderNodeID: 3, holder: "ProfileContext", reference: ".flow"),
                        RetainerHop(
                            holderKind: .detachedNodeObject, holderNodeID: 3, holder: "ProfileFlow", reference: ".context",
                            isSuspect: true),
                    ])))
        return frames
    }

    @Test func theReplayOpensOnTheCollectorsTreeAndLeaks() throws {
        var live = Collector()
        let session = live.openSession(Self.hello, now: Self.start, clocks: .same)
        var now = Self.start
        for frame in Self.hostStream() {
            now += 1_000
            _ = try live.ingest(frame, session: session, now: now)
        }
        let liveLeaks = live.leaks(session)
        #expect(liveLeaks.count == 1)
        #expect(liveLeaks.first?.path == ["AppFlow", "LoggedInFlow", "ProfileFlow"])
        #expect(liveLeaks.first?.retainers.count == 1)

        let header = RecordingHeader(
            protocolVersion: 2, pid: Self.hello.pid, processName: Self.hello.processName,
            helloMonotonicNanos: Self.hello.monotonicNanos, helloWallNanos: Self.hello.wallNanos, startMonotonicNanos: now,
            startWallNanos: Self.hello.wallNanos + (now - Self.start), clockRelation: 1, graceNanos: 1_000_000_000,
            holdExit: false, startsMidSession: true)
        var writer = RecordingWriter(header: header)
        let resync = live.resyncStream(session) ?? []
        for frame in resync { writer.append(frame, arrivalNanos: now) }
        writer.finish(.stopped, arrivalNanos: now + 1)
        let reader = try RecordingReader(bytes: writer.takeBytes())
        let replay = RecordingReplay.replay(reader, at: .event(UInt64(resync.count)))
        #expect(replay.warnings.isEmpty)

        let replayedLeaks = replay.collector.leaks(replay.session)
        #expect(replayedLeaks.map(\.path) == liveLeaks.map(\.path))
        #expect(replayedLeaks.map(\.fingerprint) == liveLeaks.map(\.fingerprint))
        #expect(replayedLeaks.map(\.retainers) == liveLeaks.map(\.retainers))
        #expect(replayedLeaks.map(\.verdict) == liveLeaks.map(\.verdict))
        #expect(replayedLeaks.map(\.attachSite) == liveLeaks.map(\.attachSite))
        #expect(replayedLeaks.map(\.detachedAtNanos) == liveLeaks.map(\.detachedAtNanos))

        let liveTree = live.tree(session)?.nodes.map { [String(describing: $0.status), "\($0.id)", "\($0.parent ?? 0)"] }
        let replayedTree = replay.collector.tree(replay.session)?.nodes.map {
            [String(describing: $0.status), "\($0.id)", "\($0.parent ?? 0)"]
        }
        #expect(replayedTree == liveTree)
        #expect(replay.collector.tree(replay.session)?.nodes.map(\.isPlaceholder) == live.tree(session)?.nodes.map(\.isPlaceholder))
    }
}
