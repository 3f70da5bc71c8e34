#if Export
import AsyncHTTPClient
import NIOCore
import NodescopeCollector
import NodescopeOTLPProto

/// What a `check` run sends over OTLP when asked: its leak verdicts as log records, its node
/// lives as a trace, its processes' counts as metrics, each to its signal's endpoint, at once
/// and within one bound (the longest of the signals' timeouts): a `check` waits for it at most
/// that long before it exits, whatever the endpoints do.
package enum OTLPCheckExport {
    /// What the run hands the export.
    package struct Run: Sendable {
        /// Every leak verdict.
        package var leaks: [LeakRecord]
        /// The node lives, when traces are sent.
        package var trace: NodeLifeTrace?
        /// The processes' counts at the end.
        package var snapshot: ExportSnapshot
        /// When the counts were read, on the collector's clock.
        package var snapshotNanos: UInt64

        /// A run's export.
        package init(leaks: [LeakRecord], trace: NodeLifeTrace?, snapshot: ExportSnapshot, snapshotNanos: UInt64) {
            self.leaks = leaks
            self.trace = trace
            self.snapshot = snapshot
            self.snapshotNanos = snapshotNanos
        }
    }

    /// What was sent of each signal.
    package typealias Outcomes = [OTLPConfiguration.Signal: OTLPHTTP.Outcome]

    /// Sends `run` to `configuration`'s endpoints.
    package static func export(_ run: Run, configuration: OTLPConfiguration, resource: OTLPResource) async -> Outcomes {
        let clock = UnixClock()
        let bound = configuration.targets.values.map(\.timeoutMilliseconds).max() ?? 0
        let deadline = NIODeadline.now() + .milliseconds(Int64(bound))
        let client = OTLPHTTP.makeClient(connectMilliseconds: bound)
        let outcomes = await withTaskGroup(of: (OTLPConfiguration.Signal, OTLPHTTP.Outcome).self) { group in
            for signal in configuration.signals {
                guard let target = configuration.target(signal) else { continue }
                let end = min(deadline, NIODeadline.now() + .milliseconds(Int64(target.timeoutMilliseconds)))
                group.addTask {
                    switch signal {
                    case .logs:
                        let requests = OTLPLeakLogs.requests(run.leaks, resource: resource, clock: clock)
                        return (signal, await OTLPHTTP.post(requests, to: target, client: client, deadline: end))
                    case .traces:
                        guard let trace = run.trace else { return (signal, OTLPHTTP.Outcome()) }
                        // A big run's spans take time to build: that time counts in the bound too.
                        guard
                            let requests = await OTLPHTTP.first(
                                by: end, { OTLPNodeSpans.requests(trace, resource: resource, clock: clock) })
                        else {
                            var outcome = OTLPHTTP.Outcome()
                            outcome.dropped = trace.processes.reduce(0) { $0 + $1.lifetimes.count }
                            outcome.failure = "the spans were not ready within the export's bound"
                            return (signal, outcome)
                        }
                        return (signal, await OTLPHTTP.post(requests, to: target, client: client, deadline: end))
                    case .metrics:
                        let request = OTLPMetrics.request(
                            run.snapshot, daemon: false, daemonStartNanos: run.snapshotNanos, nowNanos: run.snapshotNanos,
                            resource: resource, clock: clock)
                        let requests = request.resourceMetrics.isEmpty ? [] : [request]
                        return (signal, await OTLPHTTP.post(requests, to: target, client: client, deadline: end))
                    }
                }
            }
            var outcomes: Outcomes = [:]
            for await (signal, outcome) in group { outcomes[signal] = outcome }
            return outcomes
        }
        await OTLPHTTP.shutDown(client, before: deadline + .milliseconds(100))
        return outcomes
    }
}
#endif
