#if Export
import FoundationEssentials
import NodescopeCollector
import NodescopeOTLPProto
import NodescopeReports

/// What a trace of node lives is made of: a run (a `check`), the host processes it started, the
/// life of each node they attached, their tests and their leak verdicts. Times are on the
/// collector's clock.
package struct NodeLifeTrace: Sendable {
    /// One host process and the nodes it attached.
    package struct Process: Sendable {
        /// The process as the collector lists it.
        package var summary: ProcessSummary
        /// Its nodes' lives, in attach order.
        package var lifetimes: [NodeLifetime]
        /// Nodes attached past the bound on lives kept: no span of their own.
        package var untracked: Int

        /// A process and its nodes' lives.
        package init(summary: ProcessSummary, lifetimes: [NodeLifetime], untracked: Int = 0) {
            self.summary = summary
            self.lifetimes = lifetimes
            self.untracked = untracked
        }
    }

    /// The trace's id: 16 bytes, not all zero.
    package var traceID: [UInt8]
    /// The span the run's span is a child of (`TRACEPARENT`), when the run is part of a trace.
    package var parentSpanID: [UInt8]?
    /// The run's span id: 8 bytes, not all zero.
    package var runSpanID: [UInt8]
    /// The run's span name (`nodescope check`).
    package var runName: String
    /// The run's own attributes (its command, its exit status).
    package var runAttributes: [(String, String)]
    /// When the run started and ended.
    package var runStartNanos: UInt64
    package var runEndNanos: UInt64
    /// Why the run failed (its span's error status); nil when it passed.
    package var runFailure: String?
    /// The processes.
    package var processes: [Process]
    /// Every leak verdict of the run.
    package var leaks: [LeakRecord]

    /// A trace.
    package init(
        traceID: [UInt8], parentSpanID: [UInt8]? = nil, runSpanID: [UInt8] = randomSpanID(), runName: String,
        runAttributes: [(String, String)] = [],
        runStartNanos: UInt64, runEndNanos: UInt64, runFailure: String? = nil, processes: [Process], leaks: [LeakRecord]
    ) {
        self.traceID = traceID
        self.parentSpanID = parentSpanID
        self.runSpanID = runSpanID
        self.runName = runName
        self.runAttributes = runAttributes
        self.runStartNanos = runStartNanos
        self.runEndNanos = runEndNanos
        self.runFailure = runFailure
        self.processes = processes
        self.leaks = leaks
    }

    /// A random trace id.
    package static func randomTraceID() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        if bytes.allSatisfy({ $0 == 0 }) { bytes[15] = 1 }
        return bytes
    }

    /// A random span id.
    package static func randomSpanID() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<8).map { _ in UInt8.random(in: 0...255, using: &generator) }
        if bytes.allSatisfy({ $0 == 0 }) { bytes[7] = 1 }
        return bytes
    }

    /// The trace id and parent span id of a W3C `traceparent` value (`00-<32 hex>-<16 hex>-<2 hex>`);
    /// nil when it is not one (or holds an all-zero id).
    package static func parse(traceparent: String) -> (traceID: [UInt8], spanID: [UInt8])? {
        let parts = traceparent.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].count == 2, parts[0] != "ff", let version = hex(parts[0]), version.count == 1,
            parts[1].count == 32, let trace = hex(parts[1]), parts[2].count == 16, let span = hex(parts[2]),
            parts[3].count == 2, hex(parts[3]) != nil, !trace.allSatisfy({ $0 == 0 }), !span.allSatisfy({ $0 == 0 })
        else { return nil }
        // Version 00 has exactly four fields; a later version may add more.
        if version[0] == 0, parts.count != 4 { return nil }
        return (trace, span)
    }

    private static func hex(_ text: Substring) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }
}

/// Node lives as OTLP spans, one trace per run: the run's span (nodescope's own resource), a span
/// per host process under it, a span per test under its process, and a span per node from its
/// attach to its last release (or to its verdict, for a node that never was released), under
/// its parent node's span, else its test's, else its process's. A trace backend shows the node
/// tree as a waterfall. A leak verdict is an event of the node's span (`nodescope.leak`, with the
/// attributes of its log record), and a leak makes the node's, its test's, its process's and the
/// run's status an error.
package enum OTLPNodeSpans {
    /// At most this many spans go in one request.
    package static let spansPerRequest = 1_000

    /// The export requests of `trace`.
    package static func requests(
        _ trace: NodeLifeTrace, resource: OTLPResource, clock: UnixClock, perRequest: Int = spansPerRequest
    ) -> [Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest] {
        var ids = SpanIDs()
        let traceID = Data(trace.traceID)
        let leaksByNode = Dictionary(grouping: trace.leaks) { NodeKey(session: $0.session, node: $0.nodeID) }
        let failing = Set(trace.leaks.filter(isFailing).map(\.session))

        var run = span(
            name: trace.runName, traceID: traceID, id: Data(trace.runSpanID), parent: trace.parentSpanID.map { Data($0) },
            start: clock.unix(trace.runStartNanos), end: clock.unix(max(trace.runEndNanos, trace.runStartNanos)))
        run.kind = .internal
        run.attributes = trace.runAttributes.map { .pair($0.0, .text($0.1)) }
        if let failure = trace.runFailure { run.status = .failed(failure) }
        var batches = Batches(perRequest: perRequest)
        batches.add(run, resource: resource.nodescope())

        for process in trace.processes {
            let summary = process.summary
            let processResource = resource.process(name: summary.processName, pid: summary.pid, session: summary.session)
            let processStart = summary.startedAtNanos.map { min($0, summary.connectedAtNanos) } ?? summary.connectedAtNanos
            let processEnd = max(summary.endedAtNanos ?? trace.runEndNanos, processStart)
            let processSpan = self.processSpan(
                summary, traceID: traceID, id: ids.next(), parent: run.spanID, start: processStart, end: processEnd,
                nodes: process.lifetimes.count + process.untracked, untracked: process.untracked,
                failed: failing.contains(summary.session), clock: clock)
            batches.add(processSpan, resource: processResource)

            // A node's end: its last release, else its verdict, else the end of its process.
            func end(_ lifetime: NodeLifetime) -> UInt64 {
                max(lifetime.endedAt ?? lifetime.flaggedAt ?? processEnd, lifetime.attachedAt)
            }
            // One span per test, over the lives of the nodes attached in it.
            var testSpans: [TestInfo: Int] = [:]
            var testOrder: [(test: TestInfo, start: UInt64, end: UInt64, failed: Bool)] = []
            for lifetime in process.lifetimes {
                guard let test = lifetime.test else { continue }
                let failed = leaksByNode[NodeKey(session: summary.session, node: lifetime.id)]?.contains(where: isFailing) ?? false
                if let index = testSpans[test] {
                    testOrder[index].start = min(testOrder[index].start, lifetime.attachedAt)
                    testOrder[index].end = max(testOrder[index].end, end(lifetime))
                    testOrder[index].failed = testOrder[index].failed || failed
                } else {
                    testSpans[test] = testOrder.count
                    testOrder.append((test, lifetime.attachedAt, end(lifetime), failed))
                }
            }
            var testIDs: [TestInfo: Data] = [:]
            for entry in testOrder {
                let testSpan = self.testSpan(
                    entry.test, traceID: traceID, id: ids.next(), parent: processSpan.spanID, start: entry.start, end: entry.end,
                    failed: entry.failed, clock: clock)
                testIDs[entry.test] = testSpan.spanID
                batches.add(testSpan, resource: processResource)
            }

            var nodeIDs: [UInt64: Data] = [:]
            for lifetime in process.lifetimes { nodeIDs[lifetime.id] = ids.next() }
            for lifetime in process.lifetimes {
                let parent = lifetime.parent.flatMap { nodeIDs[$0] } ?? lifetime.test.flatMap { testIDs[$0] } ?? processSpan.spanID
                let nodeSpan = self.nodeSpan(
                    lifetime, traceID: traceID, id: nodeIDs[lifetime.id] ?? ids.next(), parent: parent, end: end(lifetime),
                    leaks: leaksByNode[NodeKey(session: summary.session, node: lifetime.id)] ?? [], clock: clock)
                batches.add(nodeSpan, resource: processResource)
            }
        }
        return batches.requestsWithLast
    }

    /// The span of a host process, from its start to its end.
    static func processSpan(
        _ summary: ProcessSummary, traceID: Data, id: Data, parent: Data?, start: UInt64, end: UInt64, nodes: Int, untracked: Int,
        failed: Bool, clock: UnixClock
    ) -> Opentelemetry_Proto_Trace_V1_Span {
        var processSpan = span(
            name: summary.processName, traceID: traceID, id: id, parent: parent, start: clock.unix(start), end: clock.unix(end))
        processSpan.attributes = [
            .pair("process.pid", .integer(Int64(summary.pid))),
            .pair("nodescope.nodes.attached", .integer(Int64(nodes))),
        ]
        if untracked > 0 { processSpan.attributes.append(.pair("nodescope.nodes.untracked", .integer(Int64(untracked)))) }
        if let end = summary.end {
            processSpan.attributes.append(.pair("nodescope.process.end", .text(PrometheusExposition.label(of: end))))
        }
        if failed { processSpan.status = .failed("\(summary.processName) leaked nodes") }
        return processSpan
    }

    /// The span of a test, over the lives of the nodes attached in it.
    static func testSpan(
        _ test: TestInfo, traceID: Data, id: Data, parent: Data, start: UInt64, end: UInt64, failed: Bool, clock: UnixClock
    ) -> Opentelemetry_Proto_Trace_V1_Span {
        var testSpan = span(
            name: test.description, traceID: traceID, id: id, parent: parent, start: clock.unix(start), end: clock.unix(end))
        testSpan.attributes = [
            .pair("nodescope.test", .text(test.description)),
            .pair("code.function.name", .text(test.suite.isEmpty ? test.name : "\(test.suite).\(test.name)")),
        ]
        if let location = test.location {
            testSpan.attributes.append(.pair("code.file.path", .text(location.file)))
            testSpan.attributes.append(.pair("code.line.number", .integer(Int64(location.line))))
        }
        if failed { testSpan.status = .failed("\(test.description) leaked nodes") }
        return testSpan
    }

    /// The span of a node's life, from its attach to `end`, with its detach and its leak
    /// verdicts as events.
    static func nodeSpan(
        _ lifetime: NodeLifetime, traceID: Data, id: Data, parent: Data, end: UInt64, leaks: [LeakRecord], clock: UnixClock
    ) -> Opentelemetry_Proto_Trace_V1_Span {
        var nodeSpan = span(
            name: lifetime.path.last ?? lifetime.kind, traceID: traceID, id: id, parent: parent, start: clock.unix(lifetime.attachedAt),
            end: clock.unix(max(end, lifetime.attachedAt)))
        nodeSpan.attributes = [
            .pair("nodescope.node.path", .texts(lifetime.path)),
            .pair("nodescope.node.kind", .text(lifetime.kind)),
            .pair("nodescope.node.id", .integer(Int64(bitPattern: lifetime.id))),
            .pair("nodescope.node.outcome", .text(outcomeName(lifetime.outcome))),
        ]
        if let site = lifetime.attachSite {
            nodeSpan.attributes.append(.pair("code.file.path", .text(site.file)))
            nodeSpan.attributes.append(.pair("code.line.number", .integer(Int64(site.line))))
        }
        if let test = lifetime.test { nodeSpan.attributes.append(.pair("nodescope.test", .text(test.description))) }
        if let detached = lifetime.detachedAt {
            var event = Opentelemetry_Proto_Trace_V1_Span.Event()
            event.name = "nodescope.detach"
            event.timeUnixNano = clock.unix(max(detached, lifetime.attachedAt))
            nodeSpan.events.append(event)
        }
        for leak in leaks {
            let (message, attributes) = OTLPLeakLogs.details(leak)
            var event = Opentelemetry_Proto_Trace_V1_Span.Event()
            event.name = "nodescope.leak"
            event.timeUnixNano = clock.unix(leak.flaggedAtNanos)
            event.attributes = attributes + [.pair("message", .text(message))]
            nodeSpan.events.append(event)
            if isFailing(leak) { nodeSpan.status = .failed(message) }
        }
        return nodeSpan
    }

    /// A verdict that fails a run: a leak that more than globals hold.
    static func isFailing(_ leak: LeakRecord) -> Bool {
        leak.verdict == .leaked && !leak.isRetainedOnlyByGlobals
    }

    /// How a node's life ended, as the span's `nodescope.node.outcome` says it.
    package static func outcomeName(_ outcome: NodeLifetime.Outcome) -> String {
        switch outcome {
        case .attached: "attached"
        case .released: "released"
        case .awaitingRelease: "awaiting_release"
        case .leaked: "leaked"
        case .lateRelease: "released_late"
        case .unverified: "unverified"
        }
    }

    private static func span(
        name: String, traceID: Data, id: Data, parent: Data?, start: UInt64, end: UInt64
    ) -> Opentelemetry_Proto_Trace_V1_Span {
        var span = Opentelemetry_Proto_Trace_V1_Span()
        span.traceID = traceID
        span.spanID = id
        if let parent { span.parentSpanID = parent }
        span.name = name
        span.kind = .internal
        span.startTimeUnixNano = start
        span.endTimeUnixNano = max(end, start)
        return span
    }

    struct NodeKey: Hashable {
        var session: SessionID
        var node: UInt64
    }

    /// Span ids unique within a trace: a counter through a bijective mix (SplitMix64's
    /// finalizer) from a random start, so that two runs never share ids and none is zero.
    private struct SpanIDs {
        private var state: UInt64 = {
            var generator = SystemRandomNumberGenerator()
            return generator.next()
        }()

        mutating func next() -> Data {
            var value: UInt64 = 0
            while value == 0 {
                state &+= 0x9E37_79B9_7F4A_7C15
                var mixed = state
                mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
                mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
                value = mixed ^ (mixed >> 31)
            }
            return withUnsafeBytes(of: value.bigEndian) { Data($0) }
        }
    }

    /// Spans gathered into requests of at most `perRequest` spans, one `ResourceSpans` for each
    /// run of spans of one resource.
    struct Batches {
        let perRequest: Int
        var requests: [Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest] = []
        private var current = Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest()
        private var count = 0

        init(perRequest: Int) {
            self.perRequest = max(1, perRequest)
        }

        mutating func add(_ span: Opentelemetry_Proto_Trace_V1_Span, resource: Opentelemetry_Proto_Resource_V1_Resource) {
            if count == perRequest {
                requests.append(current)
                current = .init()
                count = 0
            }
            if current.resourceSpans.last?.resource != resource {
                var resourceSpans = Opentelemetry_Proto_Trace_V1_ResourceSpans()
                resourceSpans.resource = resource
                var scope = Opentelemetry_Proto_Trace_V1_ScopeSpans()
                scope.scope.name = OTLPLeakLogs.scopeName
                resourceSpans.scopeSpans = [scope]
                current.resourceSpans.append(resourceSpans)
            }
            current.resourceSpans[current.resourceSpans.count - 1].scopeSpans[0].spans.append(span)
            count += 1
        }

        var requestsWithLast: [Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest] {
            count > 0 ? requests + [current] : requests
        }
    }
}

extension Opentelemetry_Proto_Trace_V1_Status {
    static func failed(_ message: String) -> Self {
        var status = Self()
        status.code = .error
        status.message = message
        return status
    }
}
#endif
