#if Export
import NodescopeCollector
import Prometheus

/// The daemon's counts in Prometheus' text exposition format (version 0.0.4), written with
/// swift-prometheus from one ``ExportSnapshot``: a new registry for each scrape, so that a
/// process that aged out of the daemon's list leaves the exposition with it and the number of
/// series stays bounded by the daemon's own bounds (hosts connected, `--keep-ended`).
///
/// Each process's series carry `process` (its name), `pid` and `session` (a process that
/// reconnects is a new session, so two series never share labels). Names, help texts and units
/// follow Prometheus' conventions: `_total` for counters, `_nodes` for counts of nodes.
package enum PrometheusExposition {
    /// The content type of the exposition.
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The verdicts of ``NodeCounts`` that are leaks of some kind, as the `verdict` label
    /// names them.
    package static let verdicts: [(label: String, count: @Sendable (NodeCounts) -> Int)] = [
        ("leaked", { $0.leaked }),
        ("unverified", { $0.unverified }),
        ("released_late", { $0.releasedLate }),
        ("retained_by_global", { $0.retainedByGlobal }),
    ]

    /// The exposition of `snapshot`.
    package static func text(of snapshot: ExportSnapshot) -> String {
        String(decoding: bytes(of: snapshot), as: UTF8.self)
    }

    /// The exposition of `snapshot`, as UTF-8.
    package static func bytes(of snapshot: ExportSnapshot) -> [UInt8] {
        let registry = PrometheusCollectorRegistry()
        let daemon = snapshot.daemon
        for (kind, count) in [("host", daemon.hosts), ("client", daemon.clients)] {
            registry.makeGauge(
                name: "nodescope_connections", labels: [("kind", kind)],
                help: "Connections to the daemon: hosts (apps) and clients (commands, attach, web views)."
            ).set(Int64(count))
        }
        let connected = snapshot.processes.filter(\.isConnected).count
        for (state, count) in [("connected", connected), ("ended", snapshot.processes.count - connected)] {
            registry.makeGauge(
                name: "nodescope_sessions", labels: [("state", state)],
                help: "Processes the daemon lists: connected, or ended and kept until they age out (--retention, --keep-ended)."
            ).set(Int64(count))
        }
        registry.makeGauge(name: "nodescope_recordings", help: "Recordings being written.").set(Int64(daemon.recordings))
        registry.makeCounter(
            name: "nodescope_recordings_failed_total", help: "Recordings that could not be written since the daemon started."
        ).increment(by: Int64(daemon.failedRecordings))
        for count in daemon.otlp {
            registry.makeCounter(
                name: "nodescope_otlp_sent_total", labels: [("signal", count.signal)],
                help: "What the OTLP endpoint took since the daemon started: log records, spans, metric data points."
            ).increment(by: Int64(count.sent))
            registry.makeCounter(
                name: "nodescope_otlp_dropped_total", labels: [("signal", count.signal)],
                help: "What the OTLP export dropped since the daemon started: the endpoint failed or refused, or the export fell behind."
            ).increment(by: Int64(count.dropped))
        }

        for process in snapshot.processes {
            let labels = [("process", process.processName), ("pid", String(process.pid)), ("session", process.session.description)]
            registry.makeGauge(
                name: "nodescope_process_connected", labels: labels,
                help: "1 while the process is connected; 0 once it ended (it stays listed until it ages out)."
            ).set(Int64(process.isConnected ? 1 : 0))
            registry.makeGauge(
                name: "nodescope_process_live_nodes", labels: labels,
                help: "Nodes attached in the process's tree (as `nodescope ps` counts them)."
            ).set(Int64(process.counts.attached))
            registry.makeGauge(
                name: "nodescope_process_awaiting_release_nodes", labels: labels,
                help: "Detached nodes still alive within their grace: each will be released, leaked or unverified."
            ).set(Int64(process.counts.awaitingRelease))
            for (verdict, count) in verdicts {
                registry.makeGauge(
                    name: "nodescope_process_leaks", labels: labels + [("verdict", verdict)],
                    help: "Flagged nodes by verdict, as `nodescope leaks` lists them: leaked, unverified (the process "
                        + "ended within their grace), released late, retained by a global."
                ).set(Int64(count(process.counts)))
            }
            registry.makeCounter(
                name: "nodescope_process_events_ingested_total", labels: labels,
                help: "Lifecycle events the daemon ingested from the process."
            ).increment(by: Int64(clamping: process.eventsIngested))
            registry.makeCounter(
                name: "nodescope_process_events_dropped_total", labels: labels,
                help: "Events the process's agent dropped and reported (its queue was full); the daemon resynchronized after."
            ).increment(by: Int64(clamping: process.droppedReported))
            if let end = process.end {
                registry.makeGauge(
                    name: "nodescope_process_ended", labels: labels + [("end", label(of: end))],
                    help: "1 for an ended process, labelled by how it ended: normal_exit, exit_flush_cut, agent_disabled, abnormal."
                ).set(Int64(1))
            }
        }
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return sorted(buffer)
    }

    /// The exposition with its families in name order and each family's samples in the order
    /// of their text (the registry keeps them in hash order, which changes from run to run):
    /// the same counts read the same, for a person comparing two scrapes.
    static func sorted(_ exposition: [UInt8]) -> [UInt8] {
        typealias Family = (name: Substring, comments: [Substring], samples: [Substring])
        var families: [Family] = []
        var current: Family = ("", [], [])
        func close() {
            if !current.comments.isEmpty || !current.samples.isEmpty { families.append(current) }
            current = ("", [], [])
        }
        for line in String(decoding: exposition, as: UTF8.self).split(separator: "\n") {
            guard line.hasPrefix("#") else {
                current.samples.append(line)
                continue
            }
            // A comment after samples, or a HELP after comments, begins the next family.
            if !current.samples.isEmpty || (line.hasPrefix("# HELP ") && !current.comments.isEmpty) { close() }
            if current.comments.isEmpty { current.name = line.split(separator: " ").dropFirst(2).first ?? "" }
            current.comments.append(line)
        }
        close()
        families.sort { $0.name < $1.name }
        var output: [UInt8] = []
        output.reserveCapacity(exposition.count)
        for family in families {
            for line in family.comments + family.samples.sorted() {
                output += line.utf8
                output.append(UInt8(ascii: "\n"))
            }
        }
        return output
    }

    /// How a session's end reads as a label value.
    static func label(of end: SessionEnd) -> String {
        switch end {
        case .normalExit: "normal_exit"
        case .exitFlushCut: "exit_flush_cut"
        case .agentDisabled: "agent_disabled"
        case .abnormal: "abnormal"
        }
    }
}
#endif
