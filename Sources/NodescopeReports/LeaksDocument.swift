import NodescopeCollector

/// What `nodescope leaks --format json` writes: the collector's leak records of the processes
/// covered, except the unverified nodes of a process whose exit flush was cut (those are one
/// entry of ``processes`` each, a count and the first paths), with the counts that `ps`,
/// `tree` and the web view show.
package struct LeaksDocument: Sendable, Equatable, Codable {
    /// One process the report covers.
    package struct Process: Sendable, Equatable, Codable {
        /// The session.
        package var session: SessionID
        /// The host's process id.
        package var pid: UInt32
        /// The host's process name.
        package var processName: String
        /// How the session ended; nil while the host is connected.
        package var end: SessionEnd?
        /// Where its nodes stand, as `ps` counts them.
        package var counts: NodeCounts
        /// When its exit flush was cut: how many nodes that left unverified, and the first paths.
        package var exitFlushCut: FlushCut?

        /// Creates an entry.
        package init(session: SessionID, pid: UInt32, processName: String, end: SessionEnd?, counts: NodeCounts, exitFlushCut: FlushCut?) {
            self.session = session
            self.pid = pid
            self.processName = processName
            self.end = end
            self.counts = counts
            self.exitFlushCut = exitFlushCut
        }
    }

    /// A cut exit flush, once per process.
    package struct FlushCut: Sendable, Equatable, Codable {
        /// How many of the process's nodes the cut left unverified.
        package var unverified: Int
        /// The paths of the first of them (at most ten), names from the root.
        package var paths: [[String]]
        /// What it means and how to avoid it.
        package var explanation: String
        /// Why: the exit flush was cut, or the process ended without a goodbye.
        package var cause: ExitFlushCut.Cause?

        /// Creates an entry.
        package init(unverified: Int, paths: [[String]], explanation: String, cause: ExitFlushCut.Cause? = .exitFlushCut) {
            self.unverified = unverified
            self.paths = paths
            self.explanation = explanation
            self.cause = cause
        }
    }

    /// The counts of every record covered (nothing attached is counted: see each process).
    package var counts: NodeCounts
    /// The processes covered.
    package var processes: [Process]
    /// The leak records, in flag order, without those of ``FlushCut``s.
    package var leaks: [LeakRecord]

    /// Creates a document.
    package init(counts: NodeCounts, processes: [Process], leaks: [LeakRecord]) {
        self.counts = counts
        self.processes = processes
        self.leaks = leaks
    }

    /// The document of `records` about `processes`.
    package init(records: [LeakRecord], processes: [ProcessSummary]) {
        let (kept, cuts) = ExitFlushCut.split(records, processes: processes)
        let cutSessions = Set(cuts.filter { $0.cause == .exitFlushCut }.map(\.session))
        self.init(
            counts: NodeCounts(records: records, flushCut: { cutSessions.contains($0) }),
            processes: processes.map { summary in
                let cut = cuts.first { $0.session == summary.session }
                return Process(
                    session: summary.session, pid: summary.pid, processName: summary.processName, end: summary.end,
                    counts: summary.counts,
                    exitFlushCut: cut.map {
                        FlushCut(unverified: $0.count, paths: $0.paths, explanation: $0.explanation, cause: $0.cause)
                    })
            },
            leaks: kept)
    }
}
