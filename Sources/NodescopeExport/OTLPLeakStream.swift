#if Export
import AsyncHTTPClient
import Logging
import NIOCore
import NodescopeCollector
import ServiceLifecycle
import Synchronization

/// The daemon's OTLP export of leak verdicts (`daemon --otlp-endpoint`): the collector's loop
/// offers every leak record it creates or changes (``offer(_:)`` only appends, under a lock, to a
/// bounded list), and this service posts them once a second, one log record per verdict.
///
/// A leak is posted once its host's explanation has arrived, or ``settleNanos`` after it was
/// flagged without one, so that its record carries the retain path and the fingerprint that
/// reports show; a late release is posted as its own verdict. An endpoint that fails or is slow
/// costs records (counted, and said once per outage in the daemon's log), never the collector's
/// time: nothing here runs on its loop.
package final class OTLPLeakStream: Service, Sendable {
    /// At most this many records wait; past it, the newest are dropped (and counted).
    package static let maxWaiting = 10_000
    /// How long the daemon's stop waits for the last records to be posted, at most.
    package static let lastPostMilliseconds = 1_000
    /// How long a flagged leak waits for its host's explanation before it is posted without.
    package static let settleNanos: UInt64 = 2_000_000_000

    private struct Waiting {
        var record: LeakRecord
        var offeredAt: UInt64
    }

    private struct Key: Hashable {
        var session: SessionID
        var node: UInt64
        var verdict: String
    }

    private struct State {
        var waiting: [Key: Waiting] = [:]
        var order: [Key] = []
        var posted: Set<Key> = []
        var sent = 0
        var dropped = 0
    }

    private let target: OTLPConfiguration.Target
    private let resource: OTLPResource
    private let logger: Logger
    private let state = Mutex(State())

    /// A stream to `target`, the logs' endpoint.
    package init(target: OTLPConfiguration.Target, resource: OTLPResource, logger: Logger) {
        self.target = target
        self.resource = resource
        self.logger = logger
    }

    /// Records sent and dropped so far.
    package var counts: (sent: Int, dropped: Int) {
        state.withLock { ($0.sent, $0.dropped) }
    }

    /// Takes leak records from the collector's loop; returns at once.
    package func offer(_ records: [LeakRecord], now: UInt64 = OTLPLeakStream.monotonicNow()) {
        state.withLock { state in
            for record in records {
                let key = Key(session: record.session, node: record.nodeID, verdict: OTLPLeakLogs.verdictName(record))
                guard !state.posted.contains(key) else { continue }
                if state.waiting[key] != nil {
                    state.waiting[key]?.record = record
                } else if state.waiting.count < Self.maxWaiting {
                    state.waiting[key] = Waiting(record: record, offeredAt: now)
                    state.order.append(key)
                } else {
                    state.dropped += 1
                }
            }
        }
    }

    /// Posts what is ready once a second until the daemon stops, then what is left, within the
    /// export's timeout.
    package func run() async throws {
        let client = OTLPHTTP.makeClient(connectMilliseconds: target.timeoutMilliseconds)
        let failing = Mutex(false)
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(1))
                await self.post(self.ready(all: false), client: client, failing: failing)
            }
        }
        // What is left goes out as the daemon stops, within a second at most: a dead endpoint
        // never holds a daemon's exit for its whole timeout.
        let last = NIODeadline.now() + .milliseconds(Int64(min(target.timeoutMilliseconds, Self.lastPostMilliseconds)))
        await post(ready(all: true), client: client, failing: failing, before: last)
        await OTLPHTTP.shutDown(client, before: last + .milliseconds(200))
    }

    /// The records to post now: explained leaks and late releases, and leaks that waited their
    /// settle time; everything when `all`.
    func ready(all: Bool, now: UInt64 = OTLPLeakStream.monotonicNow()) -> [LeakRecord] {
        state.withLock { state in
            var ready: [LeakRecord] = []
            var kept: [Key] = []
            for key in state.order {
                guard let waiting = state.waiting[key] else { continue }
                let settled =
                    all || waiting.record.verdict == .lateRelease || !waiting.record.retainers.isEmpty
                    || now &- waiting.offeredAt >= Self.settleNanos
                if settled {
                    ready.append(waiting.record)
                    state.waiting[key] = nil
                    // The keys posted are kept to refuse a verdict twice; a daemon that has
                    // posted a million forgets them rather than grow.
                    if state.posted.count >= 1_000_000 { state.posted.removeAll() }
                    state.posted.insert(key)
                } else {
                    kept.append(key)
                }
            }
            state.order = kept
            return ready
        }
    }

    /// Posts `records`; `failing` says whether the last post failed, so that an outage is said
    /// once and its end once.
    private func post(
        _ records: [LeakRecord], client: HTTPClient, failing: borrowing Mutex<Bool>, before end: NIODeadline? = nil
    ) async {
        guard !records.isEmpty else { return }
        for request in OTLPLeakLogs.requests(records, resource: resource, clock: UnixClock()) {
            let deadline = end ?? NIODeadline.now() + .milliseconds(Int64(target.timeoutMilliseconds))
            let outcome = await OTLPHTTP.post([request], to: target, client: client, deadline: deadline)
            state.withLock {
                $0.sent += outcome.sent
                $0.dropped += outcome.dropped
            }
            let failure = outcome.failure
            let wasFailing = failing.withLock { was in
                defer { was = failure != nil }
                return was
            }
            if let failure, !wasFailing {
                logger.warning(
                    "OTLP export failing: leak records are dropped until it recovers",
                    metadata: ["endpoint": "\(target.url)", "reason": "\(failure)"])
            } else if failure == nil, wasFailing {
                let (sent, dropped) = counts
                logger.notice(
                    "OTLP export recovered", metadata: ["endpoint": "\(target.url)", "sent": "\(sent)", "dropped": "\(dropped)"])
            }
        }
    }

    static func monotonicNow() -> UInt64 {
        NIODeadline.now().uptimeNanoseconds
    }
}
#endif
