#if Export
import Logging
import Synchronization

/// What one of the daemon's OTLP streams has sent and dropped, and whether its endpoint is
/// failing: an outage is said once in the daemon's log when it begins, and once when it ends.
package final class OTLPExportHealth: Sendable {
    private let what: String
    private let endpoint: String
    private let logger: Logger
    private let state = Mutex((sent: 0, dropped: 0, failing: false))

    /// The health of the export of `what` (`span`, `metric`) to `endpoint`.
    package init(_ what: String, endpoint: String, logger: Logger) {
        self.what = what
        self.endpoint = endpoint
        self.logger = logger
    }

    /// Items sent and dropped so far.
    package var counts: (sent: Int, dropped: Int) {
        state.withLock { ($0.sent, $0.dropped) }
    }

    /// Counts items dropped before they were posted.
    package func dropped(_ count: Int) {
        state.withLock { $0.dropped += count }
    }

    /// Counts what a post did, and says when an outage begins or ends.
    package func record(_ outcome: OTLPHTTP.Outcome, dropping consequence: String) {
        let wasFailing = state.withLock { state in
            defer {
                state.sent += outcome.sent
                state.dropped += outcome.dropped
                state.failing = outcome.failure != nil
            }
            return state.failing
        }
        if let failure = outcome.failure, !wasFailing {
            logger.warning(
                "OTLP \(what) export failing: \(consequence) until it recovers",
                metadata: ["endpoint": "\(endpoint)", "reason": "\(failure)"])
        } else if outcome.failure == nil, wasFailing {
            logger.notice("OTLP \(what) export recovered", metadata: ["endpoint": "\(endpoint)"])
        }
    }
}
#endif
