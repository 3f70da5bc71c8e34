import Foundation
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeReplay
import NodescopeSource
import Testing

/// A recording at an instant as a ``TreeSource``: it answers with the collector's own queries,
/// so what it says (and how it refuses) is what a collector holding the same frames says.
@Suite struct RecordedInstantTests {
    static func source(at instant: ReplayInstant = .end) throws -> (RecordedInstant, RecordingReplay) {
        let replay = RecordingReplay.replay(try RecordingSourceTests.recording(), at: instant)
        return (RecordedInstant(replay), replay)
    }

    /// `view` stamped with the replay's instant, as a recording answers it.
    static func stamped(_ view: TreeView?, _ replay: RecordingReplay) -> TreeView? {
        view.map { view in
            var view = view
            view.wallNanos = replay.wallNanos
            return view
        }
    }

    @Test func itAnswersWithTheCollectorsQueries() async throws {
        let (source, replay) = try Self.source()
        let collector = replay.collector
        // The stream ended: its trees stand at its end, the goodbye (not the recording's end
        // record, a nanosecond later here).
        let ended = try #require(replay.endedAtNanos)
        #expect(ended < replay.arrivalNanos)
        #expect(replay.wallNanos == RecordingSourceTests.hello.wallNanos + (ended - RecordingSourceTests.start))
        // Left out, named by pid, or named by name: the recorded process.
        for process in [nil, "77", "app"] {
            #expect(try await source.tree(of: process, rootPath: "", depth: nil) == Self.stamped(collector.tree(replay.session), replay))
        }
        #expect(
            try await source.tree(of: nil, rootPath: "AppFlow/ProfileFlow", depth: 0)
                == Self.stamped(collector.tree(replay.session, rootPath: ["AppFlow", "ProfileFlow"], depth: 0), replay))
        #expect(try await source.leaks(of: nil) == collector.leaks(nil))
        #expect(try await source.leaks(of: nil).map(\.path) == [["AppFlow", "ProfileFlow"]])
        #expect(try await source.processes() == collector.processes())
        #expect(try await source.session(of: nil) == replay.session)
        // The bodies are the documents a daemon sends.
        var body: [UInt8] = []
        try await source.treeBody(of: nil, rootPath: "", depth: nil) { body += $0 }
        #expect(body == TreeJSON.encode(try #require(Self.stamped(collector.tree(replay.session), replay))))
        #expect(try await source.leaksBody(of: "app") == ControlBody.encode(collector.leaks(replay.session)))
        // A recording's instant is fixed: nothing is waited for.
        #expect(try await source.awaitingRelease(of: nil, settlingWithin: 30) == 0)
    }

    @Test func itRefusesAsACollectorWould() async throws {
        let (source, replay) = try Self.source()
        let cases: [(process: String?, rootPath: String, expected: QueryRefusal)] = [
            ("other", "", replay.collector.treeAnswer(process: "other", rootPath: "", depth: nil).refusal!),
            (nil, "NoSuchFlow", .notFound("no node at NoSuchFlow")),
        ]
        for (process, rootPath, expected) in cases {
            do {
                _ = try await source.tree(of: process, rootPath: rootPath, depth: nil)
                Issue.record("\(String(describing: process)) \(rootPath) was answered")
            } catch let refusal as ControlClient.Refusal {
                #expect(refusal.status == ControlClient.Refusal(expected).status)
                #expect(refusal.description == expected.description)
            }
        }
        await #expect(throws: ControlClient.Refusal.self) { try await source.leaks(of: "other") }
    }

    @Test func atItsFirstInstantTheProcessIsThereWithNoNodes() async throws {
        let (source, _) = try Self.source(at: .event(0))
        let view = try await source.tree(of: nil, rootPath: "", depth: nil)
        #expect(view.processName == "app" && view.nodes.isEmpty)
        #expect(try await source.leaks(of: nil).isEmpty)
    }
}

extension Result {
    /// The failure, if this is one.
    fileprivate var refusal: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
