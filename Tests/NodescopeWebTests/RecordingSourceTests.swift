import Foundation
import NodescopeCollector
import NodescopeRecording
import NodescopeReplay
import NodescopeWeb
import NodescopeWire
import Testing

/// The web view's answers about a recording (`ui --from`): what the page's time slider gets at
/// an instant is what a replay from the first record gives there.
@Suite struct RecordingSourceTests {
    static let start: UInt64 = 5_000_000_000
    static let hello = Hello(
        protocolVersion: 2, role: .host, pid: 77, monotonicNanos: start, wallNanos: 1_800_000_000_000_000_000, processName: "app")

    /// A root with a child flow that is detached and never released (a leak once the host's
    /// heartbeats pass its grace), another child released in time, then a goodbye.
    static func recording() throws -> RecordingReader {
        let header = RecordingHeader(
            protocolVersion: 2, pid: hello.pid, processName: hello.processName, helloMonotonicNanos: start,
            helloWallNanos: hello.wallNanos, startMonotonicNanos: start, startWallNanos: hello.wallNanos, clockRelation: 1,
            graceNanos: 1_000_000_000, holdExit: false, startsMidSession: false)
        var writer = RecordingWriter(header: header)
        var time = start
        var sequence: UInt64 = 0
        func add(_ message: WireMessage) {
            time += 10_000_000
            writer.append(message, arrivalNanos: time)
        }
        for (id, text) in [(1, "AppFlow"), (2, "ProfileFlow"), (3, "SettingsFlow"), (4, "flow"), (5, "ProfileFlowImp")] {
            add(.defineString(DefineStringFrame(stringID: UInt32(id), value: text)))
        }
        add(.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)))
        add(.snapshotEnd(sequence: 0))
        for (node, parent, kind) in [(UInt64(1), UInt64(0), UInt32(1)), (2, 1, 2), (3, 1, 3)] {
            sequence += 1
            add(
                .nodeAttached(
                    NodeAttachedFrame(
                        sequence: sequence, timeNanos: time, nodeID: node, parentID: parent, kindStringID: kind, nameStringID: 0)))
            sequence += 1
            add(
                .objectAdded(
                    ObjectAddedFrame(
                        sequence: sequence, timeNanos: time, nodeID: node, objectIndex: 0, roleStringID: 4, typeNameStringID: 5)))
        }
        for node in [UInt64(2), 3] {
            sequence += 1
            add(.nodeDetached(NodeDetachedFrame(sequence: sequence, timeNanos: time, nodeID: node)))
        }
        sequence += 1
        add(.objectReleased(ObjectReleasedFrame(sequence: sequence, timeNanos: time, nodeID: 3, objectIndex: 0)))
        for _ in 0..<30 { add(.heartbeat(monotonicNanos: time)) }
        add(.goodbye(.normalExit))
        writer.finish(.normal, arrivalNanos: time + 1)
        return try RecordingReader(bytes: writer.takeBytes())
    }

    struct Body: Decodable {
        var instant: RecordingSource.Instant
        var process: ProcessSummary?
        var tree: TreeView?
        var leaks: [LeakRecord]
    }

    @Test func eachInstantAnswersWhatAReplayFromTheStartGives() throws {
        let reader = try Self.recording()
        let source = RecordingSource(name: "app.nsrec", reader: reader, spacing: 4)
        #expect(source.seeker.keyframes.count > 3)
        // Forward, back, and forward again, as a slider moves.
        for text in ["event:0", "event:9", "0.15", "event:12", "200ms", "0.05", "event:17", "0.3", "end", "event:3", "event:1000"] {
            let instant = try #require(RecordingSource.instant(text))
            let body = try JSONDecoder().decode(Body.self, from: Data(source.instantBody(at: instant, requested: text)))
            let expected = RecordingReplay.replay(reader, at: instant)
            #expect(body.instant.requested == text)
            #expect(body.instant.event == expected.recordsApplied)
            #expect(body.instant.seconds == Double(expected.arrivalNanos - Self.start) / 1e9)
            #expect(body.tree == RecordedInstantTests.stamped(expected.collector.tree(expected.session), expected), "at \(text)")
            #expect(body.leaks == expected.collector.leaks(expected.session), "at \(text)")
            #expect(body.process == expected.collector.summary(expected.session), "at \(text)")
        }
        let end = try JSONDecoder().decode(Body.self, from: Data(source.instantBody(at: .end, requested: "end")))
        #expect(end.leaks.map(\.path) == [["AppFlow", "ProfileFlow"]])
        #expect(end.instant.ended)
    }

    @Test func theInfoDescribesTheRecording() throws {
        let source = RecordingSource(name: "app.nsrec", reader: try Self.recording())
        let info = source.info
        #expect(info.file == "app.nsrec")
        #expect(info.processName == "app")
        #expect(info.pid == 77)
        #expect(info.records == 48)
        #expect(info.end == "normal")
        #expect(info.warnings.isEmpty)
        #expect(info.durationSeconds > 0.4)
    }

    @Test func instantsOfTheAddressParse() {
        #expect(RecordingSource.instant(nil) == .end)
        #expect(RecordingSource.instant("") == .end)
        #expect(RecordingSource.instant("12.5") == .seconds(12.5))
        #expect(RecordingSource.instant("event:4") == .event(4))
        for bad in ["-1", "soon", "event:", "1e400", "<script>"] { #expect(RecordingSource.instant(bad) == nil, "\(bad)") }
    }
}
