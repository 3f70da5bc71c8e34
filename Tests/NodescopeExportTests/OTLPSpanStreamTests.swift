#if Export
import FoundationEssentials
import Logging
import NodescopeCollector
import NodescopeOTLPProto
import Testing

@testable import NodescopeExport

/// The daemon's node spans: posted as lives end, a leak after its settle time, the rest of a
/// process with its own span when it ends; parents named before they are posted.
@Suite struct OTLPSpanStreamTests {
    private let clock = UnixClock(monotonicNow: 100_000_000_000, unixNow: 1_800_000_000_000_000_000)
    private let session = SessionID(rawValue: 4)
    private static let second: UInt64 = 1_000_000_000

    private func stream() -> OTLPSpanStream {
        OTLPSpanStream(
            target: .init(url: "http://127.0.0.1:1/v1/traces", headers: [], timeoutMilliseconds: 100),
            resource: .init(serviceName: nil, attributes: []), logger: Logger(label: "test")
        ) { [] }
    }

    private static func info(_ id: UInt64, _ parent: UInt64?, _ name: String, at time: UInt64) -> NodeInfo {
        NodeInfo(
            id: id, parent: parent, kind: "Flow", name: name, status: .active,
            objects: [ObjectInfo(index: 0, role: "flow", typeName: "T", isAlive: true)], attachedAtNanos: time, detachedAtNanos: nil,
            depth: 0, isPlaceholder: false)
    }

    private var summary: ProcessSummary {
        ProcessSummary(
            session: session, pid: 77, processName: "shop", connectedAtNanos: Self.second, endedAtNanos: nil, endedNormally: nil,
            liveNodes: 0, leaks: 0, eventsIngested: 0, droppedReported: 0)
    }

    private func spans(
        _ stream: OTLPSpanStream, now: UInt64, final: Bool = false
    ) throws -> [Opentelemetry_Proto_Trace_V1_Span] {
        try stream.requests(now: now, final: final, processes: [summary], clock: clock).flatMap { request in
            let bytes: [UInt8] = try request.serializedBytes()
            return try Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest(serializedBytes: bytes)
                .resourceSpans.flatMap { $0.scopeSpans.flatMap(\.spans) }
        }
    }

    private func offer(_ stream: OTLPSpanStream, _ changes: [TreeChange], at nanos: UInt64) {
        stream.offer([.init(session: session, changes: changes, arrivalNanos: nanos, tree: nil)])
    }

    @Test func livesArePostedAsTheyEndUnderSpansNamedBeforeTheyArePosted() throws {
        let s = Self.second
        let stream = stream()
        offer(stream, [.attached(Self.info(1, nil, "App", at: s)), .attached(Self.info(2, 1, "Feed", at: s))], at: s)
        offer(stream, [.statusChanged(id: 2, status: .detached), .objectReleased(id: 2, index: 0), .removed(id: 2)], at: 2 * s)
        let first = try spans(stream, now: 3 * s)
        #expect(first.map(\.name) == ["Feed"])
        let app = try #require(first.first?.parentSpanID)
        #expect(try spans(stream, now: 4 * s).isEmpty)

        // A leak: posted once its settle time has passed, ending at its verdict.
        offer(stream, [.attached(Self.info(3, 1, "Profile", at: 5 * s))], at: 5 * s)
        let leak = LeakRecord(
            session: session, pid: 77, processName: "shop", nodeID: 3, kind: "Flow", path: ["App", "Profile"], aliveObjects: [],
            detachedAtNanos: 6 * s, flaggedAtNanos: 7 * s, releasedAtNanos: nil, verdict: .leaked, fingerprint: "f00d")
        offer(stream, [.statusChanged(id: 3, status: .detached)], at: 6 * s)
        offer(stream, [.statusChanged(id: 3, status: .leaked), .leakFlagged(leak)], at: 7 * s)
        #expect(try spans(stream, now: 8 * s).isEmpty)
        let leaked = try spans(stream, now: 7 * s + OTLPSpanStream.settleNanos)
        #expect(leaked.map(\.name) == ["Profile"])
        #expect(leaked.first?.parentSpanID == app)
        #expect(leaked.first?.endTimeUnixNano == clock.unix(7 * s))
        #expect(leaked.first?.events.map(\.name) == ["nodescope.detach", "nodescope.leak"])
        #expect(leaked.first?.status.code == .error)

        // The process ends: its nodes still alive end with it, then its own span, the trace's root.
        stream.offer([.init(session: session, changes: [.sessionEnded(normally: true)], arrivalNanos: 20 * s, tree: nil)])
        let last = try spans(stream, now: 21 * s)
        #expect(last.map(\.name) == ["App", "shop"])
        #expect(last.first?.spanID == app)
        #expect(last.first?.endTimeUnixNano == clock.unix(20 * s))
        #expect(last.last?.parentSpanID.isEmpty == true && last.first?.parentSpanID == last.last?.spanID)
        #expect(Set((first + leaked + last).map(\.traceID)).count == 1)
        #expect(try spans(stream, now: 30 * s, final: true).isEmpty)
    }

    @Test func aProcessWhoseChangesPassTheBoundIsGivenUpAndItsSpanSaysSo() throws {
        let stream = stream()
        let calm = SessionID(rawValue: 9)
        stream.offer([.init(session: calm, changes: [.attached(Self.info(1, nil, "Calm", at: 1))], arrivalNanos: 1, tree: nil)])
        let changes = (1...UInt64(1_000)).map { TreeChange.attached(Self.info($0, nil, "N", at: 1)) }
        for _ in 0..<(OTLPSpanStream.maxQueuedChanges / 1_000 + 3) {
            stream.offer([.init(session: session, changes: changes, arrivalNanos: 1, tree: nil)])
        }
        // The calm process took one change: the 50th batch would pass the bound.
        #expect(stream.sentAndDropped.dropped == 4_000)
        stream.offer([.init(session: session, changes: [.sessionEnded(normally: true)], arrivalNanos: 2, tree: nil)])
        // The process given up has no node span, only its own, which says so; the calm one is whole.
        let all = try spans(stream, now: 2 * Self.second, final: true)
        #expect(all.map(\.name).sorted() == ["Calm", "shop", "unknown"])
        let given = try #require(all.first { $0.name == "shop" })
        #expect(given.attributes.contains { $0.key == "nodescope.spans.dropped" && $0.value.boolValue })
    }
}
#endif
