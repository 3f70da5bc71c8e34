#if Export
import NodescopeCollector
import NodescopeOTLPProto
import SwiftProtobuf
import Testing

@testable import NodescopeExport

/// Leak verdicts as OTLP log records, read back from the bytes that go on the wire.
@Suite struct OTLPLeakLogsTests {
    private static func leak(
        session: UInt64, pid: UInt32, name: String, verdict: LeakRecord.Verdict, flaggedAt: UInt64 = 5_000_000_000,
        test: TestInfo? = nil
    ) -> LeakRecord {
        LeakRecord(
            session: SessionID(rawValue: session), pid: pid, processName: name, nodeID: 7, kind: "Flow",
            path: ["AppFlow", "ProfileFlow"],
            aliveObjects: [ObjectInfo(index: 1, role: "context", typeName: "ProfileContextImp", isAlive: true)],
            detachedAtNanos: flaggedAt - 1_000_000_000, flaggedAtNanos: flaggedAt,
            releasedAtNanos: verdict == .lateRelease ? flaggedAt + 400_000_000 : nil, verdict: verdict,
            fingerprint: "a35a1f8ef61b6d80", attachSite: SourceSite(file: "/src/App/LoggedInNode.swift", line: 52), test: test)
    }

    private let clock = UnixClock(monotonicNow: 10_000_000_000, unixNow: 1_800_000_000_000_000_000)

    private func decoded(
        _ leaks: [LeakRecord], resource: OTLPResource = .init(serviceName: nil, attributes: [])
    ) throws -> Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest {
        let bytes: [UInt8] = try OTLPLeakLogs.request(leaks, resource: resource, clock: clock).serializedBytes()
        return try Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest(serializedBytes: bytes)
    }

    private func attributes(_ pairs: [Opentelemetry_Proto_Common_V1_KeyValue]) -> [String: String] {
        var result: [String: String] = [:]
        for pair in pairs {
            switch pair.value.value {
            case .stringValue(let text): result[pair.key] = text
            case .intValue(let number): result[pair.key] = String(number)
            case .arrayValue(let array): result[pair.key] = array.values.map(\.stringValue).joined(separator: "|")
            default: result[pair.key] = "?"
            }
        }
        return result
    }

    @Test func oneResourcePerProcessAndOneRecordPerVerdict() throws {
        let test = TestInfo(suite: "AttributedTests", name: "leaksTheProfile()", location: SourceSite(file: "/t/A.swift", line: 14))
        let request = try decoded([
            Self.leak(session: 1, pid: 10, name: "app", verdict: .leaked, test: test),
            Self.leak(session: 2, pid: 20, name: "other", verdict: .unverified),
            Self.leak(session: 1, pid: 10, name: "app", verdict: .lateRelease),
        ])
        #expect(request.resourceLogs.count == 2)
        let app = try #require(request.resourceLogs.first)
        #expect(attributes(app.resource.attributes)["service.name"] == "app")
        #expect(attributes(app.resource.attributes)["process.pid"] == "10")
        #expect(app.scopeLogs.first?.scope.name == "nodescope")
        let records = try #require(app.scopeLogs.first?.logRecords)
        #expect(records.map(\.severityText) == ["ERROR", "INFO"])
        #expect(records.map(\.severityNumber) == [.error, .info])
        let first = attributes(records[0].attributes)
        #expect(first["nodescope.verdict"] == "leaked")
        #expect(first["nodescope.node.path"] == "AppFlow|ProfileFlow")
        #expect(first["nodescope.leak.fingerprint"] == "a35a1f8ef61b6d80")
        #expect(first["code.file.path"] == "/src/App/LoggedInNode.swift")
        #expect(first["code.line.number"] == "52")
        #expect(first["nodescope.test"] == "AttributedTests/leaksTheProfile()")
        #expect(first["nodescope.test.line.number"] == "14")
        #expect(first["nodescope.leak.delay_ms"] == "1000")
        #expect(attributes(records[1].attributes)["nodescope.verdict"] == "released_late")
        #expect(records[0].body.stringValue == "leaked: ProfileFlow (Flow), still alive 1.0 s after detach")
        // Flagged 5 s before the clock's reading of 10 s: 5 s before its Unix time.
        #expect(records[0].timeUnixNano == 1_800_000_000_000_000_000 - 5_000_000_000)
        #expect(records[0].observedTimeUnixNano == 1_800_000_000_000_000_000)
        let other = request.resourceLogs[1]
        #expect(other.scopeLogs.first?.logRecords.first?.severityNumber == .warn)
    }

    @Test func theServiceNameAndTheResourceAttributesWinInTheirOrder() throws {
        let resource = OTLPResource(
            serviceName: "shop", attributes: [.init(name: "service.name", value: "ignored"), .init(name: "team", value: "mobile")])
        let request = try decoded([Self.leak(session: 1, pid: 10, name: "app", verdict: .leaked)], resource: resource)
        let names = attributes(request.resourceLogs[0].resource.attributes)
        #expect(names["service.name"] == "shop")
        #expect(names["team"] == "mobile")
        #expect(names["process.executable.name"] == "app")
    }

    @Test func manyLeaksAreSplitIntoBoundedRequests() {
        let leaks = (0..<1_100).map { Self.leak(session: UInt64($0 % 3), pid: 1, name: "a", verdict: .leaked, flaggedAt: 2_000_000_000) }
        let requests = OTLPLeakLogs.requests(leaks, resource: .init(serviceName: nil, attributes: []), clock: clock)
        let counts = requests.map { $0.resourceLogs.reduce(0) { $0 + $1.scopeLogs.reduce(0) { $0 + $1.logRecords.count } } }
        #expect(counts == [512, 512, 76])
    }

    @Test func theClockMapsBothWays() {
        #expect(clock.unix(12_000_000_000) == 1_800_000_000_000_000_000 + 2_000_000_000)
        #expect(clock.unix(0) == 1_800_000_000_000_000_000 - 10_000_000_000)
        #expect(UnixClock(monotonicNow: 100, unixNow: 50).unix(0) == 0)
    }
}
#endif
