import Foundation
import NIOPosix
import NodescopeCollector
import NodescopeRecording
import NodescopeReplay
import NodescopeWire
import Synchronization
import Testing

@testable import NodescopeServer

/// The recorder's gap path: a batch that the writer's bounded queue refuses becomes a counted
/// gap, then a restart and a snapshot of the collector's tree, so the recording ends on the
/// tree the collector had, and says how much it lost. The recorder and its sink as the hub
/// drives them (a pack per read, a flush after it), on a real writer thread and file.
@Suite("Recording gaps")
struct RecordingGapTests {
    private static let hello = Hello(role: .host, pid: 42, monotonicNanos: 0, wallNanos: 0, processName: "app")

    @Test func aRefusedBatchBecomesAGapThenTheCollectorsSnapshot() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nodescope-gap-\(getpid())-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("app.nsrec").path

        var collector = Collector(settings: CollectorSettings())
        let session = collector.openSession(Self.hello, now: 0, clocks: .same)
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let outcome = Mutex<RecordingSink.Outcome?>(nil)
        let header = RecordingHeader(
            protocolVersion: 2, pid: 42, processName: "app", helloMonotonicNanos: 0, helloWallNanos: 0, startMonotonicNanos: 0,
            startWallNanos: 0, clockRelation: 1, graceNanos: CollectorSettings().graceNanos, holdExit: false,
            startsMidSession: false)
        let sink = RecordingSink(path: path, header: header, pool: pool, maxQueued: 30) { finished in
            outcome.withLock { $0 = finished }
        }
        let recorder = SessionRecorder(sink: sink, owner: nil, requestID: 0)

        // One read: the collector takes the frames, the recorder their bytes, then the flush.
        var now: UInt64 = 0
        func read(_ messages: [WireMessage]) throws {
            now += 1_000
            var pack = FramePack(arrivalNanos: now)
            for message in messages {
                _ = try collector.ingest(message, session: session, now: now)
                FrameEncoder.encoded(message).withUnsafeBytes { pack.add($0) }
            }
            recorder.record(pack)
            recorder.flush(arrival: now) { collector.resyncStream(session) }
        }
        try read([
            .defineString(DefineStringFrame(stringID: 1, value: "Flow")), .defineString(DefineStringFrame(stringID: 2, value: "flow")),
        ])
        try read([.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), .snapshotEnd(sequence: 0)])
        try read(
            (1...5).map {
                .nodeAttached(
                    NodeAttachedFrame(
                        sequence: $0, timeNanos: 1, nodeID: $0, parentID: $0 == 1 ? 0 : 1, kindStringID: 1, nameStringID: 0))
            })
        // One read of 40 frames: more than the queue takes at once, so the whole batch is lost.
        var sequence: UInt64 = 5
        try read(
            (0..<40).map { step in
                sequence += 1
                let state: WireNodeState = step.isMultiple(of: 2) ? .active : .inactive
                return .stateChanged(StateChangedFrame(sequence: sequence, timeNanos: 2, nodeID: UInt64(step % 5 + 1), state: state))
            })
        // The next read: the recorder writes the gap, a restart and the collector's snapshot.
        sequence += 1
        try read([.stateChanged(StateChangedFrame(sequence: sequence, timeNanos: 3, nodeID: 3, state: .active))])
        let live = try #require(collector.tree(session))
        recorder.finish(.stopped, arrival: now + 1) { collector.resyncStream(session) }
        await RecordingSink.shutDown(pool)

        #expect(outcome.withLock { $0?.lostFrames } == 41)
        #expect(outcome.withLock { $0?.error } == nil)
        let reader = try RecordingReader(bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(reader.warnings.isEmpty)
        var gaps: [UInt64] = []
        var restarts = 0
        var records = reader.records()
        while let item = try records.next() {
            switch item.content {
            case .gap(let count): gaps.append(count)
            case .restart: restarts += 1
            default: break
            }
        }
        // The 40 frames of the burst and the one read before the recorder could catch up.
        #expect(gaps == [41])
        #expect(restarts == 1)

        let replay = RecordingReplay.replay(reader, at: .end)
        let replayed = try #require(replay.collector.tree(replay.session))
        #expect(replayed.nodes.count == 5)
        #expect(replayed.nodes.map(\.id) == live.nodes.map(\.id))
        #expect(replayed.nodes.map(\.parent) == live.nodes.map(\.parent))
        #expect(replayed.nodes.map(\.status) == live.nodes.map(\.status))
    }
}
