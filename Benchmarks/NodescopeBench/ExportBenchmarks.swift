#if Export
import Foundation
import NodescopeCollector
import NodescopeExport

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
    let resource = OTLPLeakLogs.Resource(serviceName: nil, attributes: [.init(name: "nodescope.check.command", value: "swift test")])
    var bytes = 0
    let timing = measure(samples: quick ? 10 : 30, batch: 1, warmup: 2) {
        bytes = OTLPLeakLogs.encodedBytes(leaks, resource: resource)
    }
    let perRecord = Timing(median: timing.median / Double(count), p10: timing.p10 / Double(count), p90: timing.p90 / Double(count))
    return [
        ReportRow(
            name: "OTLP: one leak record to a log record and protobuf bytes (\(count) records, 4 processes, requests of 512)",
            figure: String(
                format: "%.1f µs a record (p10 %.1f, p90 %.1f)", perRecord.median / 1_000, perRecord.p10 / 1_000, perRecord.p90 / 1_000),
            target: "off the app and the collector's loop"),
        ReportRow(
            name: "OTLP: bytes on the wire a leak record (with its retain path, test and attach site)",
            figure: String(format: "%.0f bytes", Double(bytes) / Double(count)), target: "reported"),
    ]
}
#endif
