#if Export
import NodescopeCollector
import NodescopeOTLPProto

/// The counts of `/metrics` as OTLP metrics, from one ``ExportSnapshot``: each host process is a
/// resource of its own (its gauges and counters carry no process labels: the resource names
/// it), the daemon's own counts are nodescope's resource.
///
/// Names follow OpenTelemetry's conventions (dotted, units in UCUM's annotation form); a backend
/// that translates them to Prometheus' (the OpenTelemetry Collector's Prometheus exporter) gets
/// the names `/metrics` serves: `nodescope.process.events_ingested` is a cumulative monotonic
/// sum, `nodescope_process_events_ingested_total` there.
package enum OTLPMetrics {
    /// The export request of `snapshot`, read at `nowNanos` on the collector's clock; with
    /// `daemon`, the daemon's own counts too (a `check` has none).
    package static func request(
        _ snapshot: ExportSnapshot, daemon: Bool, daemonStartNanos: UInt64, nowNanos: UInt64, resource: OTLPResource,
        clock: UnixClock
    ) -> Opentelemetry_Proto_Collector_Metrics_V1_ExportMetricsServiceRequest {
        var request = Opentelemetry_Proto_Collector_Metrics_V1_ExportMetricsServiceRequest()
        let now = clock.unix(nowNanos)
        if daemon {
            let counts = snapshot.daemon
            let connected = snapshot.processes.filter(\.isConnected).count
            var metrics = [
                gauge(
                    "nodescope.connections", unit: "{connection}",
                    help: "Connections to the daemon: hosts (apps) and clients (commands, attach, web views).",
                    points: [(counts.hosts, [("kind", "host")]), (counts.clients, [("kind", "client")])], now: now),
                gauge(
                    "nodescope.sessions", unit: "{process}",
                    help: "Processes the daemon lists: connected, or ended and kept until they age out.",
                    points: [(connected, [("state", "connected")]), (snapshot.processes.count - connected, [("state", "ended")])],
                    now: now),
                gauge(
                    "nodescope.recordings", unit: "{recording}", help: "Recordings being written.", points: [(counts.recordings, [])],
                    now: now),
                sum(
                    "nodescope.recordings.failed", unit: "{recording}",
                    help: "Recordings that could not be written since the daemon started.", value: UInt64(counts.failedRecordings),
                    start: clock.unix(daemonStartNanos), now: now),
            ]
            let start = clock.unix(daemonStartNanos)
            for (name, help, value) in [
                ("nodescope.otlp.sent", "What the OTLP endpoint took since the daemon started.", \ExportSnapshot.OTLPCount.sent),
                ("nodescope.otlp.dropped", "What the OTLP export dropped since the daemon started.", \ExportSnapshot.OTLPCount.dropped),
            ] where !counts.otlp.isEmpty {
                metrics.append(
                    sums(
                        name, unit: "{item}", help: help, points: counts.otlp.map { (UInt64($0[keyPath: value]), [("signal", $0.signal)]) },
                        start: start, now: now))
            }
            request.resourceMetrics.append(resourceMetrics(resource.nodescope(), metrics))
        }
        for process in snapshot.processes {
            let start = clock.unix(process.connectedAtNanos)
            var metrics = [
                gauge(
                    "nodescope.process.connected", unit: "1",
                    help: "1 while the process is connected; 0 once it ended (it stays listed until it ages out).",
                    points: [(process.isConnected ? 1 : 0, [])], now: now),
                gauge(
                    "nodescope.process.live_nodes", unit: "{node}",
                    help: "Nodes attached in the process's tree (as `nodescope ps` counts them).",
                    points: [(process.counts.attached, [])], now: now),
                gauge(
                    "nodescope.process.awaiting_release_nodes", unit: "{node}",
                    help: "Detached nodes still alive within their grace: each will be released, leaked or unverified.",
                    points: [(process.counts.awaitingRelease, [])], now: now),
                gauge(
                    "nodescope.process.leaks", unit: "{node}",
                    help:
                        "Flagged nodes by verdict, as `nodescope leaks` lists them: leaked, unverified, released late, retained by a global.",
                    points: PrometheusExposition.verdicts.map { ($0.count(process.counts), [("verdict", $0.label)]) }, now: now),
                sum(
                    "nodescope.process.events_ingested", unit: "{event}", help: "Lifecycle events ingested from the process.",
                    value: process.eventsIngested, start: start, now: now),
                sum(
                    "nodescope.process.events_dropped", unit: "{event}",
                    help: "Events the process's agent dropped and reported (its queue was full); resynchronized after.",
                    value: process.droppedReported, start: start, now: now),
            ]
            if let end = process.end {
                metrics.append(
                    gauge(
                        "nodescope.process.ended", unit: "1", help: "1 for an ended process, by how it ended.",
                        points: [(1, [("end", PrometheusExposition.label(of: end))])], now: now))
            }
            request.resourceMetrics.append(
                resourceMetrics(resource.process(name: process.processName, pid: process.pid, session: process.session), metrics))
        }
        return request
    }

    private static func resourceMetrics(
        _ resource: Opentelemetry_Proto_Resource_V1_Resource, _ metrics: [Opentelemetry_Proto_Metrics_V1_Metric]
    ) -> Opentelemetry_Proto_Metrics_V1_ResourceMetrics {
        var scope = Opentelemetry_Proto_Metrics_V1_ScopeMetrics()
        scope.scope.name = OTLPLeakLogs.scopeName
        scope.metrics = metrics
        var result = Opentelemetry_Proto_Metrics_V1_ResourceMetrics()
        result.resource = resource
        result.scopeMetrics = [scope]
        return result
    }

    private static func gauge(
        _ name: String, unit: String, help: String, points: [(Int, [(String, String)])], now: UInt64
    ) -> Opentelemetry_Proto_Metrics_V1_Metric {
        var metric = Opentelemetry_Proto_Metrics_V1_Metric()
        metric.name = name
        metric.unit = unit
        metric.description_p = help
        var gauge = Opentelemetry_Proto_Metrics_V1_Gauge()
        gauge.dataPoints = points.map { value, attributes in
            var point = Opentelemetry_Proto_Metrics_V1_NumberDataPoint()
            point.timeUnixNano = now
            point.asInt = Int64(value)
            point.attributes = attributes.map { .pair($0.0, .text($0.1)) }
            return point
        }
        metric.gauge = gauge
        return metric
    }

    private static func sum(
        _ name: String, unit: String, help: String, value: UInt64, start: UInt64, now: UInt64
    ) -> Opentelemetry_Proto_Metrics_V1_Metric {
        sums(name, unit: unit, help: help, points: [(value, [])], start: start, now: now)
    }

    private static func sums(
        _ name: String, unit: String, help: String, points: [(UInt64, [(String, String)])], start: UInt64, now: UInt64
    ) -> Opentelemetry_Proto_Metrics_V1_Metric {
        var metric = Opentelemetry_Proto_Metrics_V1_Metric()
        metric.name = name
        metric.unit = unit
        metric.description_p = help
        var sum = Opentelemetry_Proto_Metrics_V1_Sum()
        sum.aggregationTemporality = .cumulative
        sum.isMonotonic = true
        sum.dataPoints = points.map { value, attributes in
            var point = Opentelemetry_Proto_Metrics_V1_NumberDataPoint()
            point.startTimeUnixNano = min(start, now)
            point.timeUnixNano = now
            point.asInt = Int64(clamping: value)
            point.attributes = attributes.map { .pair($0.0, .text($0.1)) }
            return point
        }
        metric.sum = sum
        return metric
    }
}
#endif
