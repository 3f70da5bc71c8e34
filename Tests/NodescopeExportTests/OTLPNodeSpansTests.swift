#if Export
import FoundationEssentials
import NodescopeCollector
import NodescopeOTLPProto
import NodescopeReports
import SwiftProtobuf
import Testing

@testable import NodescopeExport

/// A run's node lives as an OTLP trace, and its counts as OTLP metrics, read back from the bytes
/// that go on the wire.
@Suite struct OTLPNodeSpansTests {
    private let clock = UnixClock(monotonicNow: 10_000_000_000, unixNow: 1_800_000_000_000_000_000)
    private let resource = OTLPResource(serviceName: nil, attributes: [.init(name: "team", value: "mobile")])
    private static let first = TestInfo(suite: "AppTests", name: "logsIn()", location: SourceSite(file: "/src/AppTests.swift", line: 9))
    private static let second = TestInfo(suite: "AppTests", name: "logsOut()", location: nil)

    private static func life(
        _ id: UInt64, _ path: [String], parent: UInt64? = nil, test: TestInfo? = nil, attached: UInt64, detached: UInt64? = nil,
        flagged: UInt64? = nil, ended: UInt64? = nil, outcome: NodeLifetime.Outcome
    ) -> NodeLifetime {
        var lifetime = NodeLifetime(
            id: id, path: path, kind: "Flow", attachedAt: attached, detachedAt: detached, flaggedAt: flagged, endedAt: ended,
            outcome: outcome)
        lifetime.parent = parent
        lifetime.test = test
        lifetime.attachSite = SourceSite(file: "/src/\(path.last ?? "").swift", line: UInt32(id))
        return lifetime
    }

    private static let summary = ProcessSummary(
        session: SessionID(rawValue: 3), pid: 4_242, processName: "AppPackageTests.xctest", connectedAtNanos: 1_000_000_000,
        endedAtNanos: 9_000_000_000, endedNormally: true, liveNodes: 0, leaks: 1, eventsIngested: 120, droppedReported: 2,
        startedAtNanos: 900_000_000, counts: NodeCounts(leaked: 1, releasedLate: 0), end: .normalExit)

    private static let leak = LeakRecord(
        session: SessionID(rawValue: 3), pid: 4_242, processName: "AppPackageTests.xctest", nodeID: 2, kind: "Flow",
        path: ["AppFlow", "ProfileFlow"],
        aliveObjects: [ObjectInfo(index: 1, role: "context", typeName: "ProfileContextImp", isAlive: true)],
        detachedAtNanos: 3_000_000_000, flaggedAtNanos: 4_000_000_000, releasedAtNanos: nil, verdict: .leaked,
        fingerprint: "a35a1f8ef61b6d80", test: first)

    private func trace(perRequest: Int = 1_000) throws -> (spans: [Opentelemetry_Proto_Trace_V1_Span], requests: Int, resources: [[String]])
    {
        let lifetimes = [
            Self.life(
                1, ["AppFlow"], test: Self.first, attached: 2_000_000_000, detached: 3_000_000_000, ended: 3_100_000_000, outcome: .released
            ),
            Self.life(
                2, ["AppFlow", "ProfileFlow"], parent: 1, test: Self.first, attached: 2_100_000_000, detached: 3_000_000_000,
                flagged: 4_000_000_000, outcome: .leaked),
            Self.life(5, ["LoginFlow"], test: Self.second, attached: 5_000_000_000, outcome: .attached),
            Self.life(6, ["Orphan"], parent: 99, attached: 6_000_000_000, ended: 6_500_000_000, outcome: .released),
        ]
        let trace = NodeLifeTrace(
            traceID: Array(repeating: 0xAB, count: 16), parentSpanID: Array(repeating: 0x01, count: 8),
            runSpanID: [0, 0, 0, 0, 0, 0, 0, 7], runName: "nodescope check", runAttributes: [("nodescope.check.exit_code", "1")],
            runStartNanos: 500_000_000, runEndNanos: 9_500_000_000, runFailure: "exit 1: 1 new leak — failing",
            processes: [.init(summary: Self.summary, lifetimes: lifetimes, untracked: 3)], leaks: [Self.leak])
        let requests = OTLPNodeSpans.requests(trace, resource: resource, clock: clock, perRequest: perRequest)
        var spans: [Opentelemetry_Proto_Trace_V1_Span] = []
        var resources: [[String]] = []
        for request in requests {
            // The bytes that go on the wire: written by OTLPWire, read back by SwiftProtobuf.
            let bytes = try request.body()
            #expect(try Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest(serializedBytes: bytes) == request)
            let decoded = try Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest(serializedBytes: bytes)
            for resourceSpans in decoded.resourceSpans {
                let names = resourceSpans.resource.attributes.filter { $0.key == "service.name" || $0.key == "team" }.map(
                    \.value.stringValue)
                for scope in resourceSpans.scopeSpans {
                    #expect(scope.scope.name == "nodescope")
                    spans += scope.spans
                    resources += scope.spans.map { _ in names }
                }
            }
        }
        return (spans, requests.count, resources)
    }

    private func attribute(_ span: Opentelemetry_Proto_Trace_V1_Span, _ key: String) -> Opentelemetry_Proto_Common_V1_AnyValue? {
        span.attributes.first { $0.key == key }?.value
    }

    @Test func theRunItsProcessItsTestsAndItsNodesNestAsTheTreeDoes() throws {
        let (spans, _, resources) = try trace()
        let names = spans.map(\.name)
        #expect(
            names == [
                "nodescope check", "AppPackageTests.xctest", "AppTests/logsIn()", "AppTests/logsOut()", "AppFlow", "ProfileFlow",
                "LoginFlow", "Orphan",
            ])
        let byName = Dictionary(uniqueKeysWithValues: spans.map { ($0.name, $0) })
        func parent(_ name: String) -> String? { spans.first { $0.spanID == byName[name]?.parentSpanID }?.name }
        #expect(byName["nodescope check"]?.parentSpanID == Data(repeating: 0x01, count: 8))
        #expect(byName["nodescope check"]?.spanID == Data([0, 0, 0, 0, 0, 0, 0, 7]))
        #expect(parent("AppPackageTests.xctest") == "nodescope check")
        #expect(parent("AppTests/logsIn()") == "AppPackageTests.xctest")
        #expect(parent("AppFlow") == "AppTests/logsIn()")
        #expect(parent("ProfileFlow") == "AppFlow")
        #expect(parent("LoginFlow") == "AppTests/logsOut()")
        // A node whose parent has no life in the run (attached before it) hangs from its process.
        #expect(parent("Orphan") == "AppPackageTests.xctest")
        #expect(Set(spans.map(\.traceID)) == [Data(repeating: 0xAB, count: 16)])
        #expect(Set(spans.map(\.spanID)).count == spans.count && !spans.contains { $0.spanID == Data(count: 8) })
        // The run is nodescope's resource; the rest its process's, with the shared attributes.
        #expect(resources.first == ["nodescope", "mobile"])
        #expect(resources.dropFirst().allSatisfy { $0 == ["AppPackageTests.xctest", "mobile"] })
    }

    @Test func aNodesSpanRunsFromItsAttachToItsReleaseOrItsVerdictOrItsProcesssEnd() throws {
        let byName = Dictionary(uniqueKeysWithValues: try trace().spans.map { ($0.name, $0) })
        let unix = { (nanos: UInt64) in self.clock.unix(nanos) }
        #expect(byName["AppFlow"]?.startTimeUnixNano == unix(2_000_000_000))
        #expect(byName["AppFlow"]?.endTimeUnixNano == unix(3_100_000_000))
        #expect(byName["ProfileFlow"]?.endTimeUnixNano == unix(4_000_000_000))
        #expect(byName["LoginFlow"]?.endTimeUnixNano == unix(9_000_000_000))
        // A test spans its nodes' lives; a process from its start to its end.
        #expect(byName["AppTests/logsIn()"]?.startTimeUnixNano == unix(2_000_000_000))
        #expect(byName["AppTests/logsIn()"]?.endTimeUnixNano == unix(4_000_000_000))
        #expect(byName["AppPackageTests.xctest"]?.startTimeUnixNano == unix(900_000_000))
        #expect(byName["AppPackageTests.xctest"]?.endTimeUnixNano == unix(9_000_000_000))
        #expect(byName["AppFlow"]?.events.map(\.name) == ["nodescope.detach"])
        #expect(byName["AppFlow"]?.events.first?.timeUnixNano == unix(3_000_000_000))
        #expect(attribute(try #require(byName["AppFlow"]), "code.file.path")?.stringValue == "/src/AppFlow.swift")
        #expect(attribute(try #require(byName["AppFlow"]), "nodescope.node.outcome")?.stringValue == "released")
        #expect(attribute(try #require(byName["AppPackageTests.xctest"]), "nodescope.nodes.untracked")?.intValue == 3)
    }

    @Test func aLeakIsAnEventOfItsNodesSpanAndAnErrorUpToTheRun() throws {
        let byName = Dictionary(uniqueKeysWithValues: try trace().spans.map { ($0.name, $0) })
        let leaked = try #require(byName["ProfileFlow"])
        #expect(leaked.events.map(\.name) == ["nodescope.detach", "nodescope.leak"])
        let event = try #require(leaked.events.last)
        #expect(event.timeUnixNano == clock.unix(4_000_000_000))
        #expect(event.attributes.first { $0.key == "nodescope.leak.fingerprint" }?.value.stringValue == "a35a1f8ef61b6d80")
        #expect(leaked.status.code == .error)
        for name in ["AppTests/logsIn()", "AppPackageTests.xctest", "nodescope check"] {
            #expect(byName[name]?.status.code == .error, "\(name)")
        }
        #expect(byName["nodescope check"]?.status.message == "exit 1: 1 new leak — failing")
        for name in ["AppFlow", "AppTests/logsOut()", "LoginFlow"] {
            #expect(byName[name]?.status.code == .unset, "\(name)")
        }
    }

    @Test func theBytesWrittenFieldByFieldReadBackAsEveryKindOfValue() throws {
        var span = Opentelemetry_Proto_Trace_V1_Span()
        span.traceID = Data(repeating: 1, count: 16)
        span.spanID = Data(repeating: 2, count: 8)
        span.name = "ünïcode ✓"
        span.kind = .server
        span.startTimeUnixNano = 1
        span.endTimeUnixNano = .max
        func value(_ make: (inout Opentelemetry_Proto_Common_V1_AnyValue) -> Void) -> Opentelemetry_Proto_Common_V1_AnyValue {
            var any = Opentelemetry_Proto_Common_V1_AnyValue()
            make(&any)
            return any
        }
        var list = Opentelemetry_Proto_Common_V1_KeyValueList()
        list.values = [.pair("inner", .integer(-1))]
        span.attributes = [
            .pair("empty", .text("")), .pair("zero", .integer(0)), .pair("negative", .integer(.min)),
            .pair("false", value { $0.boolValue = false }), .pair("pi", value { $0.doubleValue = 3.14 }),
            .pair("bytes", value { $0.bytesValue = Data([0, 255]) }), .pair("list", value { $0.kvlistValue = list }),
            .pair("array", .texts(["a", "", String(repeating: "x", count: 300)])), .pair("unset", .init()),
        ]
        var event = Opentelemetry_Proto_Trace_V1_Span.Event()
        event.name = "nodescope.leak"
        event.timeUnixNano = 5
        event.attributes = [.pair("k", .text("v"))]
        span.events = [event, .init()]
        var link = Opentelemetry_Proto_Trace_V1_Span.Link()
        link.traceID = Data(repeating: 3, count: 16)
        link.flags = 1
        span.links = [link]
        span.status = .failed("why")
        span.flags = 0x100
        var scope = Opentelemetry_Proto_Trace_V1_ScopeSpans()
        scope.scope.name = "nodescope"
        scope.spans = [span, .init()]
        var resourceSpans = Opentelemetry_Proto_Trace_V1_ResourceSpans()
        resourceSpans.resource.attributes = [.pair("service.name", .text("shop"))]
        resourceSpans.scopeSpans = [scope, .init()]
        var request = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest()
        request.resourceSpans = [resourceSpans, .init()]
        let bytes = try request.body()
        #expect(try Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest(serializedBytes: bytes) == request)
        #expect(bytes == (try request.serializedBytes() as [UInt8]))
    }

    @Test func spansAreSplitIntoRequestsOfTheBound() throws {
        let (spans, requests, resources) = try trace(perRequest: 3)
        #expect(spans.count == 8 && requests == 3)
        #expect(resources.count == 8)
    }

    @Test func aTraceparentIsReadAsW3CWritesIt() {
        let parsed = NodeLifeTrace.parse(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        #expect(parsed?.traceID.count == 16 && parsed?.spanID == [0x00, 0xF0, 0x67, 0xAA, 0x0B, 0xA9, 0x02, 0xB7])
        for refused in [
            "", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
        ] {
            #expect(NodeLifeTrace.parse(traceparent: refused) == nil, "\(refused)")
        }
        #expect(NodeLifeTrace.parse(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future") != nil)
    }

    @Test func theCountsAreMetricsOfTheirProcessAndOfTheDaemon() throws {
        let snapshot = ExportSnapshot(processes: [Self.summary], daemon: .init(hosts: 2, clients: 1, recordings: 0, failedRecordings: 1))
        let request = OTLPMetrics.request(
            snapshot, daemon: true, daemonStartNanos: 100, nowNanos: 9_500_000_000, resource: resource, clock: clock)
        let decoded = try Opentelemetry_Proto_Collector_Metrics_V1_ExportMetricsServiceRequest(
            serializedBytes: try request.serializedBytes() as [UInt8])
        #expect(decoded.resourceMetrics.count == 2)
        let daemon = decoded.resourceMetrics[0].scopeMetrics[0].metrics
        #expect(
            daemon.map(\.name) == ["nodescope.connections", "nodescope.sessions", "nodescope.recordings", "nodescope.recordings.failed"])
        #expect(daemon[0].gauge.dataPoints.map(\.asInt) == [2, 1])
        let process = decoded.resourceMetrics[1].scopeMetrics[0].metrics
        let leaks = try #require(process.first { $0.name == "nodescope.process.leaks" })
        let byVerdict = Dictionary(
            uniqueKeysWithValues: leaks.gauge.dataPoints.map { ($0.attributes[0].value.stringValue, $0.asInt) })
        #expect(byVerdict == ["leaked": 1, "unverified": 0, "released_late": 0, "retained_by_global": 0])
        let ingested = try #require(process.first { $0.name == "nodescope.process.events_ingested" })
        #expect(ingested.sum.isMonotonic && ingested.sum.aggregationTemporality == .cumulative)
        #expect(ingested.sum.dataPoints.first?.asInt == 120)
        #expect(ingested.sum.dataPoints.first?.startTimeUnixNano == clock.unix(1_000_000_000))
        #expect(
            process.first { $0.name == "nodescope.process.ended" }?.gauge.dataPoints.first?.attributes.first?.value.stringValue
                == "normal_exit")
        #expect(request.itemCount == 2 + 2 + 1 + 1 + 1 + 1 + 1 + 4 + 1 + 1 + 1)
        // A check has no daemon.
        let check = OTLPMetrics.request(snapshot, daemon: false, daemonStartNanos: 0, nowNanos: 1, resource: resource, clock: clock)
        #expect(check.resourceMetrics.count == 1)
    }
}
#endif
