import NodescopeCollector

/// One leak as reports show it: every record with the same fingerprint and verdict, across
/// processes, and the baseline entry that accepts it, if any.
public struct LeakGroup: Sendable {
    /// The verdict shared by the records.
    public var verdict: LeakRecord.Verdict
    /// The fingerprint shared by the records.
    public var fingerprint: String
    /// The records, in flag order (never empty).
    public var records: [LeakRecord]
    /// The baseline entry that accepts the leak.
    public var baselineEntry: Baseline.Entry?

    /// The first record.
    public var first: LeakRecord { records[0] }
    /// Whether a baseline entry accepts the leak.
    public var isKnown: Bool { baselineEntry != nil }
    /// The node's path of names.
    public var path: [String] { first.path }
    /// The path joined by `/`.
    public var pathText: String { path.joined(separator: "/") }

    /// Whether the leak fails the gate: a new (not known) leak; a new unverified one when strict.
    public func fails(strict: Bool) -> Bool {
        guard !isKnown else { return false }
        switch verdict {
        case .leaked: return true
        case .unverified: return strict
        case .lateRelease: return false
        }
    }

    /// How long after its detach the first record was flagged, in nanoseconds.
    public var delayNanos: UInt64 {
        first.flaggedAtNanos >= first.detachedAtNanos ? first.flaggedAtNanos - first.detachedAtNanos : 0
    }

    /// `context HostContext, worker HostWorker`.
    public var aliveText: String {
        let text = first.aliveObjects.map { "\($0.role.isEmpty ? "object" : $0.role) \($0.typeName)" }.joined(separator: ", ")
        return text.isEmpty ? "-" : text
    }

    /// What the verdict means for this group: `still alive 1.0 s after detach`.
    public var explanation: String {
        Vocabulary.explanation(verdict, delayNanos: delayNanos, releaseDelayNanos: first.releaseDelayNanos)
    }

    /// `test-host [pid 42]`, or several such, the first three named.
    public var processesText: String {
        var seen = Set<UInt32>()
        let processes = records.filter { seen.insert($0.pid).inserted }.map { "\($0.processName) [pid \($0.pid)]" }
        return processes.prefix(3).joined(separator: ", ") + (processes.count > 3 ? " and \(processes.count - 3) more" : "")
    }

    /// The SARIF rule of the verdict.
    public var ruleID: String {
        switch verdict {
        case .leaked: "node-leak"
        case .unverified: "node-leak-unverified"
        case .lateRelease: "node-late-release"
        }
    }

    /// Groups records by verdict and fingerprint: leaks first, then unverified nodes, then late
    /// releases, each in order of first flag time.
    public static func groups(of records: [LeakRecord], baseline: Baseline?) -> [LeakGroup] {
        var groups: [LeakGroup] = []
        var positions: [String: Int] = [:]
        for record in records {
            let key = record.verdict.rawValue + "/" + record.fingerprint
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
