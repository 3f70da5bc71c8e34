import NodescopeCollector

/// What the daemon hands its exports at one instant: every process it lists (as `nodescope ps`
/// lists them, ended ones until they age out) and its own counts. An export reads it and
/// changes nothing.
package struct ExportSnapshot: Sendable, Equatable {
    /// The daemon's own counts.
    package struct Daemon: Sendable, Equatable {
        /// Hosts connected (their hello accepted).
        package var hosts: Int
        /// Clients connected (commands, `attach`, web views), counted apart from hosts.
        package var clients: Int
        /// Recordings being written (`record`, `daemon --record-dir`).
        package var recordings: Int
        /// Recordings that could not be written, since the daemon started.
        package var failedRecordings: Int
        /// What the OTLP export of each signal sent and dropped, since the daemon started (none
        /// without `--otlp-endpoint`).
        package var otlp: [OTLPCount]

        /// Counts.
        package init(hosts: Int = 0, clients: Int = 0, recordings: Int = 0, failedRecordings: Int = 0, otlp: [OTLPCount] = []) {
            self.hosts = hosts
            self.clients = clients
            self.recordings = recordings
            self.failedRecordings = failedRecordings
            self.otlp = otlp
        }
    }

    /// What the OTLP export of one signal sent and dropped.
    package struct OTLPCount: Sendable, Equatable {
        /// `logs`, `traces` or `metrics`.
        package var signal: String
        /// Items (log records, spans, data points) the endpoint took.
        package var sent: Int
        /// Items dropped: not sent (the endpoint failed, or the export fell behind), or refused.
        package var dropped: Int

        /// A count.
        package init(signal: String, sent: Int, dropped: Int) {
            self.signal = signal
            self.sent = sent
            self.dropped = dropped
        }
    }

    /// The processes, connected first (as the collector lists them).
    package var processes: [ProcessSummary]
    /// The daemon's own counts.
    package var daemon: Daemon

    /// A snapshot.
    package init(processes: [ProcessSummary], daemon: Daemon) {
        self.processes = processes
        self.daemon = daemon
    }
}
