import NodescopeCollector

/// The one leak-report model: what leaked, grouped, with what a baseline accepts. `check` builds
/// it after a run (inside a ``CheckOutcome``), `leaks` from what a collector holds now; every
/// writer (text, JUnit, SARIF, JSON, diagrams) reads it.
package struct LeakReport: Sendable {
    /// The host processes the report covers.
    package var processes: [ProcessSummary]
    /// The leaks, grouped by verdict and fingerprint (see ``LeakGroup/groups(of:baseline:)``),
    /// except the unverified nodes of processes whose exit flush was cut: those are
    /// ``exitFlushCuts``.
    package var groups: [LeakGroup]
    /// Per process whose exit flush was cut, how many of its nodes that left unverified: one
    /// entry each, not one per node.
    package var exitFlushCuts: [ExitFlushCut]
    /// Where the nodes of every record stand (the verdicts; nothing is attached in a report).
    package var counts: NodeCounts
    /// Baseline entries that matched no leak.
    package var staleEntries: [Baseline.Entry]
    /// The baseline file, if one was given.
    package var baselineFile: String?
    /// Whether unverified nodes fail like leaks.
    package var strict: Bool
    /// Whether leaks held only by globals count as leaks (`check --count-globals`); when false
    /// they are reported apart and fail nothing.
    package var countGlobals: Bool
    /// The grace the leaks were judged with, in nanoseconds, when it is known.
    package var graceNanos: UInt64?
    /// The directory that source paths (attach sites, tests) are reported relative to: the
    /// repository's root, as SARIF's `%SRCROOT%`. Nil: paths are reported as the host sent them.
    package var sourceRoot: String?
    /// Every test the processes attached nodes under, leaks or not (JUnit shows the clean ones
    /// as passing cases).
    package var tests: [TestInfo] = []

    /// Groups `leaks` and matches them against `baseline`.
    package init(
        leaks: [LeakRecord], processes: [ProcessSummary], baseline: Baseline? = nil, baselineFile: String? = nil,
        strict: Bool = false, countGlobals: Bool = false, graceNanos: UInt64? = nil
    ) {
        self.processes = processes
        let (kept, cuts) = ExitFlushCut.split(leaks, processes: processes)
        let cutSessions = Set(cuts.filter { $0.cause == .exitFlushCut }.map(\.session))
        self.counts = NodeCounts(records: leaks, flushCut: { cutSessions.contains($0) })
        self.exitFlushCuts = cuts
        self.groups = LeakGroup.groups(of: kept, baseline: baseline)
        let used = Set(groups.compactMap { $0.baselineEntry?.number })
        self.staleEntries = baseline?.entries.filter { !used.contains($0.number) } ?? []
        self.baselineFile = baselineFile
        self.strict = strict
        self.countGlobals = countGlobals
        self.graceNanos = graceNanos
    }

    /// The tests that leak groups were attached under, in order of their first group, each with
    /// its groups.
    package var testsWithGroups: [(test: TestInfo, groups: [LeakGroup])] {
        var order: [TestInfo] = []
        var byTest: [TestInfo: [LeakGroup]] = [:]
        for group in groups {
            guard let test = group.test else { continue }
            if byTest[test] == nil { order.append(test) }
            byTest[test, default: []].append(group)
        }
        return order.map { ($0, byTest[$0] ?? []) }
    }

    /// The groups that fail a gate: new leaks, and new unverified nodes when strict.
    package var failingGroups: [LeakGroup] { groups.filter { $0.fails(strict: strict, countGlobals: countGlobals) } }

    /// Whether cut exit flushes fail the gate: their nodes are unverified, which fails only
    /// when strict.
    package var exitFlushCutsFail: Bool { strict && !exitFlushCuts.isEmpty }

    /// Whether the report has nothing to say: no group and no cut exit flush.
    package var isEmpty: Bool { groups.isEmpty && exitFlushCuts.isEmpty }

    /// The leak groups held only by globals that are not counted as leaks.
    package var uncountedGlobalGroups: [LeakGroup] { groups.filter { $0.isUncountedGlobal(countGlobals: countGlobals) } }

    /// `2 leaked, 0 unverified, 1 released late`: nodes, every occurrence counted, known ones
    /// included (``Vocabulary/verdictCounts(_:countGlobals:)`` of ``counts``, the numbers `ps`
    /// shows); then `, 1 retained by a global` when leaks held only by globals are not counted
    /// (they are left out of `leaked`).
    package var countsLine: String { Vocabulary.verdictCounts(counts, countGlobals: countGlobals) }
}

/// What a written report is about: a `check` run, or what a collector holds now (`leaks`), with
/// the command line that produced it. Only a check run has a command result and an exit code:
/// reports of a collector say nothing of either.
package enum ReportSubject: Sendable {
    /// A `check` run and its decision.
    case check(CheckOutcome)
    /// What a collector holds, as read by the command line given (`nodescope leaks …`).
    case collector(LeakReport, commandLine: [String])

    /// The leak report.
    package var report: LeakReport {
        switch self {
        case .check(let outcome): outcome.report
        case .collector(let report, _): report
        }
    }

    /// The check run, if this is one.
    package var outcome: CheckOutcome? {
        if case .check(let outcome) = self { return outcome }
        return nil
    }

    /// The command line: the checked command, or the reading command.
    package var commandLine: [String] {
        switch self {
        case .check(let outcome): outcome.command
        case .collector(_, let commandLine): commandLine
        }
    }
}
