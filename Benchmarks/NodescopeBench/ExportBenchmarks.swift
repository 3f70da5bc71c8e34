#if Export
import Foundation
import NodescopeCollector
import NodescopeExport
import NodescopeReports

/// What the OTLP export costs, in the tool (never in the app): turning leak records into log
/// records and protobuf bytes, per record, and the bytes each takes on the wire.
func runExportBenchmarks(quick: Bool) -> [ReportRow] {
    var hops: [RetainerPath.Hop] = []
    hops.append(.init(holderKind: .global, holder: "sample_nodes.component", reference: ""))
    hops.append(.init(holderKind: .object, holder: "AppComponent", reference: ".sharedInstances[\"session\"]"))
    hops.append(.init(holderKind: .object, holder: "Session", reference: ".listeners[0]", isSuspect: true))
    hops.append(.init(holderKind: .closureContext, holder: "closure context", reference: "capture"))
    let path = RetainerPath(objectIndex: 1, verdict: .holder, hops: hops)
    let count = quick ? 1_000 : 10_000
    let objects = [ObjectInfo(index: 1, role: "context", typeName: "ProfileContextImp", isAlive: true)]
    let site = SourceSite(file: "/work/app/Sources/App/LoggedInNode.swift", line: 52)
    let test = TestInfo(suite: "AppTests", name: "logsOut()", location: SourceSite(file: "/work/app/Tests/AppTests.swift", line: 12))
    var leaks: [LeakRecord] = []
    for index in 0..<count {
        let process = UInt64(index % 4)
        leaks.append(
            LeakRecord(
                session: SessionID(rawValue: process), pid: UInt32(1_000) + UInt32(process), processName: "sample-nodes",
                nodeID: UInt64(index), kind: "Flow", path: ["AppFlow", "LoggedInFlow", "ProfileFlow"], aliveObjects: objects,
                detachedAtNanos: 1_000_000_000, flaggedAtNanos: 2_000_000_000, releasedAtNanos: nil, verdict: .leaked,
                fingerprint: "a35a1f8ef61b6d80", retainers: [path], attachSite: site, test: test))
    }
    let resource = OTLPResource(serviceName: nil, attributes: [.init(name: "nodescope.check.command", value: "swift test")])
    var bytes = 0
    let timing = measure(samples: quick ? 10 : 30, batch: 1, warmup: 2) {
        bytes = OTLPLeakLogs.encodedBytes(leaks, resource: resource)
    }
    let perRecord = Timing(median: timing.median / Double(count), p10: timing.p10 / Double(count), p90: timing.p90 / Double(count))
    let spans = spanBenchmark(quick: quick, resource: resource, test: test, site: site)
    return [
        ReportRow(
            name: "OTLP: one leak record to a log record and protobuf bytes (\(count) records, 4 processes, requests of 512)",
            figure: String(
                format: "%.1f µs a record (p10 %.1f, p90 %.1f)", perRecord.median / 1_000, perRecord.p10 / 1_000, perRecord.p90 / 1_000),
            target: "off the app and the collector's loop"),
        ReportRow(
            name: "OTLP: bytes on the wire a leak record (with its retain path, test and attach site)",
            figure: String(format: "%.0f bytes", Double(bytes) / Double(count)), target: "reported"),
    ] + spans
}

/// A `check` run's trace of node lives: a tree of `count` nodes (a root, 10 flows under it, the
/// rest under those, in 20 tests), turned into spans and protobuf bytes.
private func spanBenchmark(quick: Bool, resource: OTLPResource, test: TestInfo, site: SourceSite) -> [ReportRow] {
    let count = quick ? 10_000 : 100_000
    var lifetimes: [NodeLifetime] = []
    lifetimes.reserveCapacity(count)
    for index in 0..<count {
        var lifetime = NodeLifetime(
            id: UInt64(index), path: ["AppFlow", "LoggedInFlow", "Row\(index % 100)"], kind: index == 0 ? "Flow" : "Worker",
            attachedAt: 1_000_000 + UInt64(index) * 1_000, detachedAt: 5_000_000_000, endedAt: 5_000_100_000, outcome: .released)
        lifetime.parent = index == 0 ? nil : UInt64(index <= 10 ? 0 : 1 + index % 10)
        lifetime.attachSite = site
        lifetime.test = TestInfo(suite: test.suite, name: "test\(index % 20)()", location: test.location)
        lifetimes.append(lifetime)
    }
    let summary = ProcessSummary(
        session: SessionID(rawValue: 1), pid: 1_000, processName: "sample-nodes", connectedAtNanos: 1_000, endedAtNanos: 6_000_000_000,
        endedNormally: true, liveNodes: 0, leaks: 0, eventsIngested: 0, droppedReported: 0)
    let trace = NodeLifeTrace(
        traceID: NodeLifeTrace.randomTraceID(), runName: "nodescope check", runStartNanos: 0, runEndNanos: 7_000_000_000,
        processes: [.init(summary: summary, lifetimes: lifetimes)], leaks: [])
    var bytes = 0
    let timing = measure(samples: quick ? 5 : 10, batch: 1, warmup: 1) {
        bytes = OTLPNodeSpans.requests(trace, resource: resource, clock: UnixClock()).encodedBytes
    }
    let perSpan = Timing(median: timing.median / Double(count), p10: timing.p10 / Double(count), p90: timing.p90 / Double(count))
    return [
        ReportRow(
            name: "OTLP: one node's life to a span and protobuf bytes (\(count) nodes, 20 tests, requests of 1,000)",
            figure: String(format: "%.2f µs a span (p10 %.2f, p90 %.2f)", perSpan.median / 1_000, perSpan.p10 / 1_000, perSpan.p90 / 1_000),
            target: "off the app and the collector's loop"),
        ReportRow(
            name: "OTLP: bytes on the wire a node span (path, kind, attach site, test, a detach event)",
            figure: String(format: "%.0f bytes", Double(bytes) / Double(count)), target: "reported"),
    ]
}
#endif

#if Export
/// The daemon's ingest with its OTLP export on (logs, node spans, metrics every second, to an
/// HTTP receiver in this process that answers 200 to every post) against the same without, in
/// alternating pairs of runs: the export's cost to the collector's loop is handing each batch
/// over; its own work (spans, protobuf, HTTP) runs beside it.
func runExportIngestBenchmark(quick: Bool) async throws -> [ReportRow] {
    let nodes = quick ? 50_000 : 200_000
    let (stream, events) = HostStream.bytes(nodes: nodes, churn: true)
    let receiver = try OTLPSink()
    defer { receiver.stop() }
    let target = OTLPConfiguration.Target(url: "http://127.0.0.1:\(receiver.port)/v1/traces", headers: [], timeoutMilliseconds: 10_000)
    let logsTarget = OTLPConfiguration.Target(url: "http://127.0.0.1:\(receiver.port)/v1/logs", headers: [], timeoutMilliseconds: 10_000)
    let resource = OTLPResource(serviceName: nil, attributes: [])
    var ratios: [Double] = []
    var posted: [(sent: Int, dropped: Int)] = []
    for pair in 0..<(quick ? 3 : 15) {
        var without = 0.0
        var with = 0.0
        for exports in pair.isMultiple(of: 2) ? [false, true] : [true, false] {
            guard exports else {
                without = try await ingestThroughSocketMeasured([stream], eventsEach: events).seconds
                continue
            }
            let spans = OTLPSpanStream(target: target, resource: resource, logger: quietLogger) { [] }
            let logs = OTLPLeakStream(target: logsTarget, resource: resource, logger: quietLogger)
            let tasks = [Task { try await spans.run() }, Task { try await logs.run() }]
            with = try await ingestThroughSocketMeasured(
                [stream], eventsEach: events,
                observers: (
                    leaks: { logs.offer($0) },
                    changes: { batches in
                        spans.offer(
                            batches.map {
                                .init(session: $0.session, changes: $0.changes, arrivalNanos: $0.arrivalNanos, tree: $0.treeAfterResync)
                            })
                    }
                )
            ).seconds
            try await Task.sleep(for: .milliseconds(1_200))
            posted.append(spans.sentAndDropped)
            for task in tasks { task.cancel() }
            for task in tasks { _ = await task.result }
        }
        ratios.append(with / without)
        if ProcessInfo.processInfo.environment["NODESCOPE_BENCH_PAIRS"] != nil {
            print(String(format: "pair %d: off %.3f s, on %.3f s", pair, without, with))
        }
    }
    let timing = Timing(of: ratios)
    let last = posted.last ?? (0, 0)
    return [
        ReportRow(
            name:
                "daemon ingest through the Unix socket, 1 host flooding, with OTLP export on (logs, spans) vs. off (\(ratios.count) pairs, \(events) events)",
            figure: String(
                format:
                    "%+.1f%% time, the median of the pairs (p10 %+.1f%%, p90 %+.1f%%); the flood's spans: %d posted before it passed the bound, %d changes dropped",
                (timing.median - 1) * 100, (timing.p10 - 1) * 100, (timing.p90 - 1) * 100, last.sent, last.dropped),
            target: "< 5%")
    ]
}

/// An HTTP/1.1 receiver on a loopback port that reads each request (its Content-Length body)
/// and answers 200 with an empty body, keeping the connection: a stand-in for an OpenTelemetry
/// Collector that costs little.
final class OTLPSink: @unchecked Sendable {
    let port: Int
    private let listener: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound, listen(descriptor, 16) == 0 else { throw CLIFailure("the OTLP sink could not listen") }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread {
            while true {
                let connection = accept(descriptor, nil, nil)
                if connection < 0 { return }
                Thread.detachNewThread { Self.serve(connection) }
            }
        }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func serve(_ connection: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let answer = Array("HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n".utf8)
        while true {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count <= 0 { break }
            pending += buffer[0..<count]
            while let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self).lowercased()
                let length =
                    head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                guard pending.count >= end.upperBound + length else { break }
                pending.removeFirst(end.upperBound + length)
                _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
        close(connection)
    }
}
#endif
