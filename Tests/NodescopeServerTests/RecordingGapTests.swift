import Foundation
import NIOCore
import NodescopeCollector
import NodescopeRecording
import NodescopeReplay
import NodescopeWire
import Testing

@testable import NodescopeServer

/// The recorder's gap path: a batch that the writer's bounded queue refuses becomes a counted
/// gap, then a restart and a snapshot of the collector's tree, so the recording ends on the
/// tree the collector had, and says how much it lost.
@Suite("Recording gaps")
struct RecordingGapTests {
    @Test func aRefusedBatchBecomesAGapThenTheCollectorsSnapshot() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nodescope-gap-\(getpid())-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let collector = EmbeddedCollector(limits: ServerLimits(maxQueuedRecordingFrames: 30), recordDirectory: directory.path)

        let host = try collector.connect()
        try collector.send([Frames.hostHello], to: host)
        try collector.send(
            [.defineString(DefineStringFrame(stringID: 1, value: "Flow")), .defineString(DefineStringFrame(stringID: 2, value: "flow"))],
            to: host)
        try collector.send(Frames.emptySnapshot, to: host)
        try collector.send((1...5).map { Frames.attached($0, parent: $0 == 1 ? 0 : 1, sequence: $0) }, to: host)
        // One read of 40 frames: more than the queue takes at once, so the whole batch is lost.
        var sequence: UInt64 = 5
        let burst: [WireMessage] = (0..<40).map { step in
            sequence += 1
            let state: WireNodeState = step.isMultiple(of: 2) ? .active : .inactive
            return .stateChanged(StateChangedFrame(sequence: sequence, timeNanos: 2, nodeID: UInt64(step % 5 + 1), state: state))
        }
        try collector.send(burst, to: host)
        // The next read: the recorder writes the gap, a restart and the collector's snapshot.
        sequence += 1
        try collector.send([.stateChanged(StateChangedFrame(sequence: sequence, timeNanos: 3, nodeID: 3, state: .active))], to: host)
        let session = try collector.hub.collector.resolve("app").get()
        let live = try #require(collector.hub.collector.tree(session))
        try collector.send([.goodbye(.normalExit)], to: host)
        try collector.hub.finishRecordings()?.syncShutdownGracefully()
        collector.loop.run()  // the writer's outcome comes back to the loop

        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count == 1)
        let file = try #require(files.first)
        let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(file)))
        let reader = try RecordingReader(bytes: bytes)
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
        #expect(replayed.nodes.map(\.id) == live.nodes.map(\.id))
        #expect(replayed.nodes.map(\.parent) == live.nodes.map(\.parent))
        #expect(replayed.nodes.map(\.status) == live.nodes.map(\.status))
        #expect(replayed.nodes.count == 5)
        #expect(collector.logLines(atLeast: .notice).contains { $0.contains("lost frames") })
    }
}
