import NodescopeCollector

/// The decision of one `check` run: what ran and how it ended, what leaked, what the baseline
/// accepts, and so the exit code. Pure: every report is written from it.
struct CheckOutcome: Sendable {
    /// The command and its arguments.
    var command: [String]
    /// How the command ended.
    var termination: CheckTermination
    /// The leak grace, in nanoseconds.
    var graceNanos: UInt64
    /// Whether unverified nodes fail the gate.
    var strict: Bool
    /// The baseline file, if one was given.
    var baselineFile: String?
    /// Where `--write-baseline` writes, if asked: the run then passes unless the command failed.
    var baselineOutput: String?
    /// Every host process that connected.
    var processes: [ProcessSummary]
    /// The leaks, grouped (see ``CheckLeakGroup/groups(of:baseline:)``).
    var groups: [CheckLeakGroup]
    /// Baseline entries that matched no leak.
    var staleEntries: [Baseline.Entry]
    /// Why the private collector could not report, if it could not: the run is then an internal
    /// error, whatever the leaks read so far.
    var collectorFailure: String?

    /// Decides on what the collector found.
    init(
        command: [String], termination: CheckTermination, findings: CheckFindings, baseline: Baseline?,
        baselineFile: String?, baselineOutput: String?, strict: Bool, graceNanos: UInt64
    ) {
        self.command = command
        self.termination = termination
        self.graceNanos = graceNanos
        self.strict = strict
        self.baselineFile = baselineFile
        self.baselineOutput = baselineOutput
        self.processes = findings.processes
        self.collectorFailure = findings.collectorFailure
        self.groups = CheckLeakGroup.groups(of: findings.leaks, baseline: baseline)
        let used = Set(groups.compactMap { $0.baselineEntry?.number })
        self.staleEntries = baseline?.entries.filter { !used.contains($0.number) } ?? []
    }

    /// The groups that fail the gate.
    var failingGroups: [CheckLeakGroup] { groups.filter { $0.fails(strict: strict) } }

    /// Why the run fails, if it does.
    enum Failure: String, Sendable {
        /// The command failed (its status wins over leaks).
        case command
        /// New leaks (or, with --strict, unverified nodes).
        case leaks
        /// The private collector failed: nothing can be said about leaks.
        case collector
    }

    /// Why the run fails; nil when it passes.
    var failure: Failure? {
        if !termination.succeeded { return .command }
        if collectorFailure != nil { return .collector }
        if baselineOutput == nil, !failingGroups.isEmpty { return .leaks }
        return nil
    }

    /// 0 pass; 1 new leaks; the command's status (128 + N for signal N) when it failed; 2 when
    /// the private collector failed.
    var exitCode: Int32 {
        switch failure {
        case nil: 0
        case .leaks: 1
        case .collector: 2
        case .command: termination.passedOnCode
        }
    }

    /// What `--write-baseline` writes: the leaks that can fail a gate, one entry per fingerprint,
    /// keeping the reason of the entry that accepted a leak before.
    var baselineDocument: String {
        var seen = Set<String>()
        let leaks = groups.filter { $0.verdict != .lateRelease && seen.insert($0.fingerprint).inserted }
            .map { (fingerprint: $0.fingerprint, path: $0.path, reason: $0.baselineEntry?.reason) }
        return Baseline.document(for: leaks)
    }

    /// `nodescope check: 2 new leaks (1 known, 1 stale baseline entry) — failing`.
    var verdictLine: String {
        let failing = failingGroups.count
        let known = groups.filter(\.isKnown).count
        let unverified = groups.filter { $0.verdict == .unverified && !$0.isKnown && !strict }.count
        let late = groups.filter { $0.verdict == .lateRelease && !$0.isKnown }.count
        var notes: [String] = []
        if known > 0 { notes.append("\(known) known") }
        if unverified > 0 { notes.append(Self.count(unverified, "unverified", "unverified")) }
        if late > 0 { notes.append(Self.count(late, "late release", "late releases")) }
        if !staleEntries.isEmpty { notes.append(Self.count(staleEntries.count, "stale baseline entry", "stale baseline entries")) }
        var line = "nodescope check: "
        if failing > 0 {
            line += Self.count(failing, strict ? "new leak or unverified node" : "new leak", strict ? "new leaks or unverified nodes" : "new leaks")
        } else {
            line += groups.isEmpty ? "no leaks" : "no new leaks"
        }
        if !notes.isEmpty { line += " (" + notes.joined(separator: ", ") + ")" }
        switch failure {
        case .command?:
            switch termination {
            case let .exited(status): line += " — the command failed with exit status \(status); exiting \(exitCode)"
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

    static func count(_ value: Int, _ singular: String, _ plural: String) -> String {
        "\(value) \(value == 1 ? singular : plural)"
    }
}
