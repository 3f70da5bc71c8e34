import NodescopeCollector

/// The decision of one `check` run: what ran and how it ended, the leak report, and so the
/// exit code. Pure: every report of the run is written from it.
package struct CheckOutcome: Sendable {
    /// The command and its arguments.
    package var command: [String]
    /// How the command ended.
    package var termination: CheckTermination
    /// The leak grace, in nanoseconds.
    package var graceNanos: UInt64
    /// Where `--write-baseline` writes, if asked: the run then passes unless the command failed.
    package var baselineOutput: String?
    /// What leaked, grouped and matched against the baseline.
    package var report: LeakReport
    /// Why the private collector could not report, if it could not: the run is then an internal
    /// error, whatever the leaks read so far.
    package var collectorFailure: String?

    /// Decides on what the collector found.
    package init(
        command: [String], termination: CheckTermination, leaks: [LeakRecord], processes: [ProcessSummary],
        collectorFailure: String? = nil, baseline: Baseline?, baselineFile: String?, baselineOutput: String?,
        strict: Bool, countGlobals: Bool = false, graceNanos: UInt64
    ) {
        self.command = command
        self.termination = termination
        self.graceNanos = graceNanos
        self.baselineOutput = baselineOutput
        self.collectorFailure = collectorFailure
        self.report = LeakReport(
            leaks: leaks, processes: processes, baseline: baseline, baselineFile: baselineFile, strict: strict,
            countGlobals: countGlobals, graceNanos: graceNanos)
    }

    /// Whether unverified nodes fail the gate.
    package var strict: Bool { report.strict }
    /// Whether leaks held only by globals count (`--count-globals`).
    package var countGlobals: Bool { report.countGlobals }
    /// Every host process that connected.
    package var processes: [ProcessSummary] { report.processes }
    /// The leak groups.
    package var groups: [LeakGroup] { report.groups }
    /// Baseline entries that matched no leak.
    package var staleEntries: [Baseline.Entry] { report.staleEntries }
    /// The baseline file, if one was given.
    package var baselineFile: String? { report.baselineFile }

    /// The groups that fail the gate.
    package var failingGroups: [LeakGroup] { report.failingGroups }

    /// Why the run fails, if it does.
    package enum Failure: String, Sendable {
        /// The command failed (its status wins over leaks).
        case command
        /// New leaks (or, with --strict, unverified nodes).
        case leaks
        /// The private collector failed: nothing can be said about leaks.
        case collector
    }

    /// Why the run fails; nil when it passes.
    package var failure: Failure? {
        if !termination.succeeded { return .command }
        if collectorFailure != nil { return .collector }
        if baselineOutput == nil, !failingGroups.isEmpty || report.exitFlushCutsFail { return .leaks }
        return nil
    }

    /// 0 pass; 1 new leaks; the command's status (128 + N for signal N) when it failed; 2 when
    /// the private collector failed.
    package var exitCode: Int32 {
        switch failure {
        case nil: 0
        case .leaks: 1
        case .collector: 2
        case .command: termination.passedOnCode
        }
    }

    /// What `--write-baseline` writes: the leaks that can fail a gate, one entry per fingerprint,
    /// keeping the reason of the entry that accepted a leak before. Leaks held only by globals
    /// are left out unless they are counted.
    package var baselineDocument: String {
        var seen = Set<String>()
        let leaks = groups.filter {
            $0.verdict != .lateRelease && !$0.isUncountedGlobal(countGlobals: countGlobals)
                && seen.insert($0.fingerprint).inserted
        }
        .map { (fingerprint: $0.fingerprint, path: $0.path, reason: $0.baselineEntry?.reason) }
        return Baseline.document(for: leaks)
    }

    /// `nodescope check: 2 new leaks (1 known, 1 stale baseline entry) — failing`.
    package var verdictLine: String {
        let failing = failingGroups.count + (report.exitFlushCutsFail ? report.exitFlushCuts.reduce(0) { $0 + $1.count } : 0)
        let known = groups.filter(\.isKnown).count
        let unverified =
            groups.filter { $0.verdict == .unverified && !$0.isKnown && !strict }.count
            + (strict ? 0 : report.exitFlushCuts.reduce(0) { $0 + $1.count })
        let late = groups.filter { $0.verdict == .lateRelease && !$0.isKnown }.count
        let globals = report.uncountedGlobalGroups.count
        var notes: [String] = []
        if known > 0 { notes.append("\(known) known") }
        if globals > 0 { notes.append(Vocabulary.count(globals, "retained by a global", "retained by globals")) }
        if unverified > 0 { notes.append(Vocabulary.count(unverified, "unverified", "unverified")) }
        if late > 0 { notes.append(Vocabulary.count(late, "late release", "late releases")) }
        if !staleEntries.isEmpty { notes.append(Vocabulary.count(staleEntries.count, "stale baseline entry", "stale baseline entries")) }
        var line = "nodescope check: "
        if failing > 0 {
            line += Vocabulary.count(
                failing, strict ? "new leak or unverified node" : "new leak", strict ? "new leaks or unverified nodes" : "new leaks")
        } else {
            line += report.isEmpty ? "no leaks" : "no new leaks"
        }
        if !notes.isEmpty { line += " (" + notes.joined(separator: ", ") + ")" }
        switch failure {
        case .command?:
            switch termination {
            case .exited(let status): line += " — the command failed with exit status \(status); exiting \(exitCode)"
            case .signaled: line += " — the command was \(termination.phrase); exiting \(exitCode)"
            }
        case .leaks?:
            line += " — failing"
        case .collector?:
            line += " — the private collector failed (\(collectorFailure ?? "")); exiting 2"
        case nil:
            if let baselineOutput {
                line += " — wrote the baseline \(baselineOutput)"
            } else {
                line += " — passing"
            }
        }
        return line
    }
}
