import NodescopeCollector

/// One leak as reports show it: every record with the same fingerprint and verdict (and test, for
/// nodes attached under a test), across processes, and the baseline entry that accepts it, if any.
package struct LeakGroup: Sendable {
    /// The verdict shared by the records.
    package var verdict: LeakRecord.Verdict
    /// The fingerprint shared by the records.
    package var fingerprint: String
    /// The records, in flag order (never empty).
    package var records: [LeakRecord]
    /// The baseline entry that accepts the leak.
    package var baselineEntry: Baseline.Entry?

    /// The first record.
    package var first: LeakRecord { records[0] }
    /// Whether a baseline entry accepts the leak.
    package var isKnown: Bool { baselineEntry != nil }
    /// The node's path of names.
    package var path: [String] { first.path }
    /// The path joined by `/`.
    package var pathText: String { path.joined(separator: "/") }
    /// The test the node was attached under (every record of the group shares it), if any.
    package var test: TestInfo? { first.test }
    /// Where the first record's node was attached, when its host said.
    package var attachSite: SourceSite? { first.attachSite }

    /// Whether only globals hold the node, in every record (see
    /// ``LeakRecord/isRetainedOnlyByGlobals``): reported distinctly, and not a leak for `check`
    /// unless it counts globals.
    package var isRetainedOnlyByGlobals: Bool { records.allSatisfy(\.isRetainedOnlyByGlobals) }

    /// Whether the group is a leak that is not counted: leaked, not known, and held only by
    /// globals while globals are not counted.
    package func isUncountedGlobal(countGlobals: Bool) -> Bool {
        !countGlobals && !isKnown && verdict == .leaked && isRetainedOnlyByGlobals
    }

    /// Whether the leak fails the gate: a new (not known) leak, unless only globals hold it and
    /// `countGlobals` is false; a new unverified one when strict.
    package func fails(strict: Bool, countGlobals: Bool = false) -> Bool {
        guard !isKnown else { return false }
        switch verdict {
        case .leaked: return countGlobals || !isRetainedOnlyByGlobals
        case .unverified: return strict
        case .lateRelease: return false
        }
    }

    /// How long after its detach the first record was flagged, in nanoseconds.
    package var delayNanos: UInt64 {
        first.flaggedAtNanos >= first.detachedAtNanos ? first.flaggedAtNanos - first.detachedAtNanos : 0
    }

    /// `context HostContext, worker HostWorker`.
    package var aliveText: String {
        let text = first.aliveObjects.map { "\($0.role.isEmpty ? "object" : $0.role) \($0.typeName)" }.joined(separator: ", ")
        return text.isEmpty ? "-" : text
    }

    /// What the verdict means for this group: `still alive 1.0 s after detach`.
    package var explanation: String {
        Vocabulary.explanation(verdict, delayNanos: delayNanos, releaseDelayNanos: first.releaseDelayNanos)
    }

    /// `test-host [pid 42]`, or several such, the first three named.
    package var processesText: String {
        var seen = Set<UInt32>()
        let processes = records.filter { seen.insert($0.pid).inserted }.map { "\($0.processName) [pid \($0.pid)]" }
        return processes.prefix(3).joined(separator: ", ") + (processes.count > 3 ? " and \(processes.count - 3) more" : "")
    }

    /// The SARIF rule of the verdict (`node-retained-by-global` for a leak held only by
    /// globals that is not counted).
    package func ruleID(countGlobals: Bool) -> String {
        if isUncountedGlobal(countGlobals: countGlobals) { return "node-retained-by-global" }
        switch verdict {
        case .leaked: return "node-leak"
        case .unverified: return "node-leak-unverified"
        case .lateRelease: return "node-late-release"
        }
    }

    /// The closure that the first explained suspect reference leads into, when the tools named
    /// where it is written: the line a developer changes (``RetainerPath/suspectClosure``).
    package var suspectClosure: RetainerPath.Closure? {
        first.retainers.lazy.compactMap(\.suspectClosure).first { $0.source != nil }
    }

    /// The retainer paths of the first record's alive objects, as report lines (see
    /// ``RetainerText/reportLines(_:)``).
    package var retainerLines: [String] { RetainerText.reportLines(first) }

    /// `held by Session.listeners[3]` for each alive object of the first record with a path,
    /// joined by `; ` (`context: …` before each, when the node has several alive objects);
    /// `retained by global` and the globals' names once, for a node held only by globals; empty
    /// when no alive object has a path.
    package var retainerSummary: String {
        let globals = RetainerText.globalNames(first)
        if !globals.isEmpty { return Vocabulary.retainedByGlobal(globals.map(VisibleText.escaped)) }
        let parts = first.aliveObjects.compactMap { object -> String? in
            guard let path = first.retainers(ofObject: object.index) else { return nil }
            let summary = RetainerText.summary(path)
            return first.aliveObjects.count == 1 ? summary : "\(object.role.isEmpty ? "object" : object.role): \(summary)"
        }
        return parts.joined(separator: "; ")
    }

    /// Groups records by verdict, fingerprint and test: leaks first, then unverified nodes, then late
    /// releases, each in order of first flag time.
    package static func groups(of records: [LeakRecord], baseline: Baseline?) -> [LeakGroup] {
        var groups: [LeakGroup] = []
        var positions: [String: Int] = [:]
        for record in records {
            var key = record.verdict.rawValue + "/" + record.fingerprint
            // A leak of two tests is two leaks: each test fails with its own.
            if let test = record.test { key += "/" + test.description + "@" + (test.location.map { "\($0.file):\($0.line)" } ?? "") }
            if let position = positions[key] {
                groups[position].records.append(record)
            } else {
                positions[key] = groups.count
                groups.append(
                    LeakGroup(
                        verdict: record.verdict, fingerprint: record.fingerprint, records: [record],
                        baselineEntry: baseline?.entry(matchingFingerprint: record.fingerprint, path: record.path)))
            }
        }
        let rank: [LeakRecord.Verdict: Int] = [.leaked: 0, .unverified: 1, .lateRelease: 2]
        return groups.enumerated()
            .sorted { (rank[$0.element.verdict] ?? 3, $0.offset) < (rank[$1.element.verdict] ?? 3, $1.offset) }
            .map(\.element)
    }
}
