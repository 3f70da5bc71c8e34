#if Export
import Glibc
import NodescopeCollector
import NodescopeOTLPProto
import NodescopeReports
import SwiftProtobuf

/// Leak verdicts as OTLP log records: one record per verdict, grouped by the host process that
/// made it (one `ResourceLogs` each), in the attribute names docs/FLEET.md lists.
///
/// A record's time is when the node was flagged (its grace ran out, or its process ended);
/// severity ERROR for a leak, WARN for an unverified node or a leak only a global holds, INFO for
/// a late release. Its attributes say where the node was attached (OpenTelemetry's
/// `code.file.path` and `code.line.number`), in which test, its fingerprint, and the retain path
/// with the suspect reference and the line that made it.
package enum OTLPLeakLogs {
    /// The instrumentation scope's name.
    package static let scopeName = "nodescope"

    /// The export requests for `leaks`, at most `perRequest` records each. `clock` maps the
    /// collector's monotonic nanoseconds to Unix time.
    package static func requests(
        _ leaks: [LeakRecord], resource: OTLPResource, clock: UnixClock, perRequest: Int = 512
    ) -> [Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest] {
        var requests: [Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest] = []
        var start = 0
        while start < leaks.count {
            let slice = leaks[start..<min(leaks.count, start + max(1, perRequest))]
            requests.append(request(Array(slice), resource: resource, clock: clock))
            start += slice.count
        }
        return requests
    }

    /// The protobuf bytes of the requests for `leaks`, counted (the export benchmark).
    package static func encodedBytes(_ leaks: [LeakRecord], resource: OTLPResource) -> Int {
        requests(leaks, resource: resource, clock: UnixClock()).encodedBytes
    }

    /// One export request for `leaks`.
    package static func request(
        _ leaks: [LeakRecord], resource: OTLPResource, clock: UnixClock
    ) -> Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest {
        var order: [SessionID] = []
        var bySession: [SessionID: [LeakRecord]] = [:]
        for leak in leaks {
            if bySession[leak.session] == nil { order.append(leak.session) }
            bySession[leak.session, default: []].append(leak)
        }
        var request = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest()
        let observed = clock.unixNow()
        for session in order {
            guard let records = bySession[session], let first = records.first else { continue }
            var scope = Opentelemetry_Proto_Logs_V1_ScopeLogs()
            scope.scope.name = scopeName
            scope.logRecords = records.map { logRecord($0, clock: clock, observed: observed) }
            var resourceLogs = Opentelemetry_Proto_Logs_V1_ResourceLogs()
            resourceLogs.resource = resource.process(name: first.processName, pid: first.pid, session: first.session)
            resourceLogs.scopeLogs = [scope]
            request.resourceLogs.append(resourceLogs)
        }
        return request
    }

    /// One leak verdict as a log record.
    static func logRecord(_ leak: LeakRecord, clock: UnixClock, observed: UInt64) -> Opentelemetry_Proto_Logs_V1_LogRecord {
        var record = Opentelemetry_Proto_Logs_V1_LogRecord()
        record.timeUnixNano = clock.unix(leak.flaggedAtNanos)
        record.observedTimeUnixNano = observed
        record.eventName = "nodescope.leak"
        switch (leak.verdict, leak.isRetainedOnlyByGlobals) {
        case (.leaked, false):
            record.severityNumber = .error
            record.severityText = "ERROR"
        case (.leaked, true), (.unverified, _):
            record.severityNumber = .warn
            record.severityText = "WARN"
        case (.lateRelease, _):
            record.severityNumber = .info
            record.severityText = "INFO"
        }
        let (body, attributes) = details(leak)
        record.body = .text(body)
        record.attributes = attributes
        return record
    }

    /// A verdict in words (a log record's body, a span event's message) and its attributes.
    package static func details(_ leak: LeakRecord) -> (body: String, attributes: [Opentelemetry_Proto_Common_V1_KeyValue]) {
        let verdict = verdictName(leak)
        let delay = leak.flaggedAtNanos >= leak.detachedAtNanos ? leak.flaggedAtNanos - leak.detachedAtNanos : 0
        let name = leak.path.last.map { "\($0) (\(leak.kind))" } ?? leak.kind
        var body =
            "\(verdict): \(name), "
            + Vocabulary.explanation(leak.verdict, delayNanos: delay, releaseDelayNanos: leak.releaseDelayNanos)
        var attributes: [Opentelemetry_Proto_Common_V1_KeyValue] = [
            .pair("nodescope.verdict", .text(verdict)),
            .pair("nodescope.node.path", .texts(leak.path)),
            .pair("nodescope.node.kind", .text(leak.kind)),
            .pair("nodescope.node.id", .integer(Int64(bitPattern: leak.nodeID))),
            .pair("nodescope.leak.fingerprint", .text(leak.fingerprint)),
            .pair("nodescope.leak.alive_objects", .texts(leak.aliveObjects.map(\.typeName))),
            .pair("nodescope.leak.delay_ms", .integer(Int64(delay / 1_000_000))),
        ]
        if let site = leak.attachSite {
            attributes.append(.pair("code.file.path", .text(site.file)))
            attributes.append(.pair("code.line.number", .integer(Int64(site.line))))
        }
        if let test = leak.test {
            attributes.append(.pair("nodescope.test", .text(test.description)))
            if let location = test.location {
                attributes.append(.pair("nodescope.test.file.path", .text(location.file)))
                attributes.append(.pair("nodescope.test.line.number", .integer(Int64(location.line))))
            }
        }
        if let object = leak.aliveObjects.first(where: { leak.retainers(ofObject: $0.index) != nil }),
            let path = leak.retainers(ofObject: object.index)
        {
            attributes.append(.pair("nodescope.retain_path", .text(RetainerText.line(path, objectType: object.typeName))))
            attributes.append(.pair("nodescope.retain_path.verdict", .text(path.verdict.rawValue)))
            body += "; " + RetainerText.summary(path)
            if let suspect = path.suspectIndex {
                attributes.append(.pair("nodescope.suspect", .text(RetainerText.reference(path.hops[suspect]))))
            }
            if let closure = path.suspectClosure {
                if let symbol = closure.symbol { attributes.append(.pair("nodescope.suspect.closure", .text(symbol))) }
                if let source = closure.source {
                    attributes.append(.pair("nodescope.suspect.file.path", .text(source.file)))
                    attributes.append(.pair("nodescope.suspect.line.number", .integer(Int64(source.line))))
                    body += RetainerText.madeAt(path)
                }
            }
        }
        return (body, attributes)
    }

    /// `leaked`, `released_late`, `unverified`, or `retained_by_global` for a leak that only
    /// globals hold (which `check` does not count unless asked): the label `/metrics` uses.
    package static func verdictName(_ leak: LeakRecord) -> String {
        switch leak.verdict {
        case .leaked: leak.isRetainedOnlyByGlobals ? "retained_by_global" : "leaked"
        case .lateRelease: "released_late"
        case .unverified: "unverified"
        }
    }
}

/// Maps the collector's clock (CLOCK_MONOTONIC nanoseconds) to Unix time, from one reading of both.
package struct UnixClock: Sendable {
    private let monotonicNow: UInt64
    private let unixNowNanos: UInt64

    /// Reads both clocks now.
    package init() {
        var monotonic = timespec()
        var real = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        clock_gettime(CLOCK_REALTIME, &real)
        monotonicNow = UInt64(monotonic.tv_sec) &* 1_000_000_000 &+ UInt64(monotonic.tv_nsec)
        unixNowNanos = UInt64(real.tv_sec) &* 1_000_000_000 &+ UInt64(real.tv_nsec)
    }

    /// A fixed pair of readings (tests).
    package init(monotonicNow: UInt64, unixNow: UInt64) {
        self.monotonicNow = monotonicNow
        self.unixNowNanos = unixNow
    }

    /// Unix nanoseconds now.
    package func unixNow() -> UInt64 { unixNowNanos }

    /// Unix nanoseconds of a reading of the collector's clock.
    package func unix(_ monotonic: UInt64) -> UInt64 {
        monotonic >= monotonicNow
            ? unixNowNanos &+ (monotonic - monotonicNow) : unixNowNanos &- min(unixNowNanos, monotonicNow - monotonic)
    }
}

#endif
