import NodesDebug
import NodesRetainers
import NodesTesting
import NodescopeWire
import Testing

@testable import NodesAgent
@testable import NodesTracking

@Suite("Agent parts without sockets")
struct AgentUnitTests {
    @Test func settingsFollowTheEnvironment() {
        func settings(_ variables: [String: String]) -> AgentSettings {
            AgentSettings.fromEnvironment { variables[$0] }
        }
        #expect(settings(["NODESCOPE": "off", "NODESCOPE_SOCKET": "/x.sock"]).mode == .disabled)
        #expect(settings(["NODESCOPE_SOCKET": "/x.sock"]) == AgentSettings(mode: .explicit, socketPath: "/x.sock"))
        #expect(settings(["XDG_RUNTIME_DIR": "/run/user/7"]).socketPath == "/run/user/7/nodescope/collector.sock")
        #expect(settings([:]).socketPath.hasPrefix("/tmp/nodescope-"))
        #expect(settings([:]).socketPath.hasSuffix("/collector.sock"))
        #if DEBUG
        #expect(settings([:]).mode == .watchDefault)
        #else
        #expect(settings([:]).mode == .disabled)
        #endif
    }

    @Test func theRetainerBoundFollowsTheEnvironment() {
        func limits(_ variables: [String: String]) -> RetainerAnalysis.Limits {
            AgentSettings.fromEnvironment { variables[$0] }.retainerLimits
        }
        #expect(limits([:]).timePerObjectNanos == 50_000_000)
        #expect(limits([:]).timePerBatchNanos == 1_000_000_000)
        #expect(limits(["NODESCOPE_RETAINER_MS": "200"]).timePerObjectNanos == 200_000_000)
        #expect(limits(["NODESCOPE_RETAINER_MS": "5000"]).timePerBatchNanos == 5_000_000_000)
        for wrong in ["0", "-3", "1.5", "600001", "soon"] {
            #expect(limits(["NODESCOPE_RETAINER_MS": wrong]).timePerObjectNanos == 50_000_000, "\(wrong)")
        }
        // The exit waits for the analysis's whole bound.
        let link = AgentLink(settings: AgentSettings.fromEnvironment { ["NODESCOPE_RETAINER_MS": "5000"][$0] })
        #expect(link.explainAllowance >= 5_000_000_000)
    }

    @Test func queueDropsAndCountsWhenFullAndNeverGrows() {
        let queue = EventQueue(capacity: 4)
        let event = DebugInformation(sequence: 1, time: 0, node: NodeID(rawValue: 1), change: .detached)
        for _ in 0..<10 { _ = queue.enqueue(event) }
        var batch: [DebugInformation] = []
        #expect(queue.take(into: &batch) == 6)
        #expect(batch.count == 4)
        batch.removeAll(keepingCapacity: true)
        #expect(queue.take(into: &batch) == 0)
        #expect(batch.isEmpty)
        #expect(queue.isEmpty)
    }

    /// What the writer's round does with the queue while it streams deltas: the events move
    /// out to its encoder in order, none copied; after a drop they go to the batch instead (the
    /// stream starts again from a snapshot, and the batch's events are sent after it).
    @Test func queuedEventsMoveToTheEncoderInOrderUnlessSomeWereDropped() {
        final class Encoder: AppliedChangeEncoder, @unchecked Sendable {
            var sequences: [UInt64] = []
            func encode(_ event: DebugInformation) { sequences.append(event.sequence) }
            func encode(
                sequence: UInt64, time: UInt64, node: NodeID, change: borrowing DebugInformation.Change, origin: NodeOrigin?
            ) { sequences.append(sequence) }
        }
        func event(_ sequence: UInt64) -> DebugInformation {
            DebugInformation(
                sequence: sequence, time: sequence, node: NodeID(rawValue: 1),
                change: .objectAdded(index: 0, role: .worker, typeName: "Worker\(sequence)"))
        }
        let queue = EventQueue(capacity: 4)
        let encoder = Encoder()
        var batch: [DebugInformation] = []
        for sequence: UInt64 in 1...3 { _ = queue.enqueue(event(sequence)) }
        #expect(queue.take(into: &batch, encoding: encoder) == 0)
        #expect(encoder.sequences == [1, 2, 3] && batch.isEmpty)
        #expect(queue.isEmpty)

        for sequence: UInt64 in 4...9 { _ = queue.enqueue(event(sequence)) }
        #expect(queue.take(into: &batch, encoding: encoder) == 2)
        #expect(encoder.sequences == [1, 2, 3], "nothing encoded after a drop")
        #expect(batch.map(\.sequence) == [4, 5, 6, 7])

        // Events left in the batch go first, then the queue's, in order.
        batch = [event(10)]
        _ = queue.enqueue(event(11))
        #expect(queue.take(into: &batch, encoding: encoder) == 0)
        #expect(encoder.sequences == [1, 2, 3, 10, 11] && batch.isEmpty)
    }

    @Test func streamRebuildsTheTrackersTreeExactly() throws {
        final class Thing {}
        let tracker = NodeTracker()
        let sink = RecordingSink()
        tracker.addSink(sink)
        let things = (0..<6).map { _ in Thing() }
        let root = tracker.attach(things[0], role: .router, parent: nil, kind: .router, name: "Root")
        let child = tracker.attach(things[1], role: .router, parent: root, kind: .router, name: "Child")
        tracker.watch(things[2], role: .interactor, in: child)
        tracker.setState(.active, of: child)

        // A connection starts with a snapshot, then deltas follow.
        var encoder = HostStreamEncoder()
        var bytes: [UInt8] = []
        let snapshot = tracker.snapshot()
        encoder.encode(snapshot, into: &bytes)
        sink.removeAll()
        let leaf = tracker.attach(things[3], role: .module, parent: child, kind: .module, name: "Leaf")
        tracker.detach(child)
        _ = leaf
        for event in sink.events { encoder.encode(event, into: &bytes) }

        var decoder = FrameDecoder()
        decoder.feed(bytes)
        var mirror = WireMirror()
        while let message = try decoder.next() { mirror.apply(message) }
        let expected = tracker.snapshot().nodes.map { node in
            let alive = node.objects.filter(\.isAlive).map(\.role.rawValue).joined(separator: ",")
            return "\(node.id.rawValue) \(node.parent?.rawValue ?? 0) \(node.kind) \(node.name) "
                + "\(node.state?.description ?? "-") \(node.isDetached ? "detached" : "attached") [\(alive)]"
        }
        #expect(mirror.canonicalLines == expected)
        #expect(mirror.strings.values.filter { $0 == "Router" }.count == 1, "each string is defined once")
    }

    /// The frames of a stream, decoded.
    private static func decode(_ bytes: [UInt8]) throws -> [WireMessage] {
        var decoder = FrameDecoder()
        decoder.feed(bytes)
        var messages: [WireMessage] = []
        while let message = try decoder.next() { messages.append(message) }
        return messages
    }

    @Test func aVersion2StreamSaysWhereAndUnderWhichTestEachNodeWasAttachedOnce() throws {
        final class Thing {}
        let tracker = NodeTracker()
        let sink = RecordingSink()
        tracker.addSink(sink)
        let things = (0..<4).map { _ in Thing() }
        let test = TestIdentity(suite: "ProfileTests", name: "closing()", site: AttachSite(file: "/r/Tests/T.swift", line: 3))
        let root = tracker.attach(things[0], role: .router, parent: nil, kind: .router, name: "Root", file: "/r/A.swift", line: 10)
        let siteLine = UInt32(#line + 2)
        for thing in things.dropFirst() {
            test.run { _ = tracker.attach(thing, role: .router, parent: root, kind: .router, name: "Child") }
        }

        var encoder = HostStreamEncoder()
        encoder.sendsOrigins = true
        var bytes: [UInt8] = []
        for event in sink.events { encoder.encode(event, into: &bytes) }
        let messages = try Self.decode(bytes)
        let origins = messages.compactMap { message -> NodeOriginFrame? in
            guard case .nodeOrigin(let origin) = message else { return nil }
            return origin
        }
        #expect(origins.count == 4)
        #expect(origins.first == NodeOriginFrame(nodeID: root.rawValue, siteID: 1, testID: 0))
        #expect(Set(origins.dropFirst().map(\.siteID)) == [2], "one site for the three children")
        #expect(Set(origins.dropFirst().map(\.testID)) == [1])
        let sites = messages.compactMap { message -> DefineSiteFrame? in
            guard case .defineSite(let site) = message else { return nil }
            return site
        }
        #expect(sites.map(\.line) == [10, siteLine, 3], "each site defined once, the test's own included")
        #expect(messages.filter { if case .defineTest = $0 { true } else { false } }.count == 1)

        // A snapshot carries the same origins.
        var snapshotEncoder = HostStreamEncoder()
        snapshotEncoder.sendsOrigins = true
        var snapshotBytes: [UInt8] = []
        snapshotEncoder.encode(tracker.snapshot(), into: &snapshotBytes)
        #expect(try Self.decode(snapshotBytes).filter { if case .nodeOrigin = $0 { true } else { false } }.count == 4)

        // A version-1 connection gets none of these frames.
        var oldEncoder = HostStreamEncoder()
        var oldBytes: [UInt8] = []
        oldEncoder.encode(tracker.snapshot(), into: &oldBytes)
        for event in sink.events { oldEncoder.encode(event, into: &oldBytes) }
        #expect(try Self.decode(oldBytes).allSatisfy { $0.frameType.sinceVersion == 1 })
    }
}
