#if Export
import AsyncHTTPClient
import Logging
import NIOCore
import NodescopeCollector
import ServiceLifecycle
import Synchronization

/// The daemon's OTLP export of its counts (`daemon --otlp-endpoint`): every
/// `OTEL_METRIC_EXPORT_INTERVAL` (60 s by default), and once more as the daemon stops, it reads
/// one ``ExportSnapshot`` (the same that `/metrics` serves) and posts it as OTLP metrics. A
/// snapshot that cannot be posted is dropped, never queued: the next one carries the counts
/// again. An outage is said once in the daemon's log, and its end once.
package final class OTLPMetricStream: Service, Sendable {
    private let target: OTLPConfiguration.Target
    private let intervalMilliseconds: Int
    private let resource: OTLPResource
    private let logger: Logger
    private let snapshot: @Sendable () async throws -> ExportSnapshot
    private let startNanos = NIODeadline.now().uptimeNanoseconds
    private let health: OTLPExportHealth

    /// A stream to `target`, the metrics' endpoint, every `intervalMilliseconds`.
    package init(
        target: OTLPConfiguration.Target, intervalMilliseconds: Int, resource: OTLPResource, logger: Logger,
        snapshot: @escaping @Sendable () async throws -> ExportSnapshot
    ) {
        self.target = target
        self.health = OTLPExportHealth("metric", endpoint: target.url, logger: logger)
        self.intervalMilliseconds = intervalMilliseconds
        self.resource = resource
        self.logger = logger
        self.snapshot = snapshot
    }

    /// Data points sent and dropped so far.
    package var sentAndDropped: (sent: Int, dropped: Int) {
        health.counts
    }

    /// Posts a snapshot every interval until the daemon stops, then one last within a second.
    package func run() async throws {
        let client = OTLPHTTP.makeClient(connectMilliseconds: target.timeoutMilliseconds)
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: .milliseconds(self.intervalMilliseconds))
                await self.post(client: client, before: NIODeadline.now() + .milliseconds(Int64(self.target.timeoutMilliseconds)))
            }
        }
        let last = NIODeadline.now() + .milliseconds(Int64(min(target.timeoutMilliseconds, OTLPLeakStream.lastPostMilliseconds)))
        await post(client: client, before: last)
        await OTLPHTTP.shutDown(client, before: last + .milliseconds(200))
    }

    private func post(client: HTTPClient, before deadline: NIODeadline) async {
        // The collector answers on its own loop; a daemon stopping may no longer answer.
        guard let taken = try? await snapshot() else { return }
        let request = OTLPMetrics.request(
            taken, daemon: true, daemonStartNanos: startNanos, nowNanos: NIODeadline.now().uptimeNanoseconds, resource: resource,
            clock: UnixClock())
        let outcome = await OTLPHTTP.post([request], to: target, client: client, deadline: deadline)
        health.record(outcome, dropping: "snapshots are dropped")
    }
}
#endif
