import NodescopeCollector

/// The unverified nodes of one process whose exit flush was cut (``SessionEnd/exitFlushCut``):
/// reported once, as a count with the way to avoid it, not as one entry per node. A busy
/// machine can cut the flush of a clean app that detached thousands of nodes at exit; listing
/// each would bury a real leak.
///
/// A process that ended without a goodbye (``SessionEnd/abnormal``) with more than
/// ``maxPaths`` nodes awaiting release is reported the same way, with its own cause: under load
/// a clean app's exit flush may not reach a slow collector at all, and then nothing tells that
/// end from a crash; one entry with the count keeps a real leak visible. Fewer such nodes keep
/// an entry each.
package struct ExitFlushCut: Sendable, Equatable {
    /// Why the nodes are unverified.
    package enum Cause: String, Sendable, Equatable, Codable {
        /// A goodbye `flushIncomplete`: the exit flush ran out of time.
        case exitFlushCut
        /// No goodbye: the process crashed, was killed, or its exit flush could not reach the
        /// collector in time.
        case endedAbnormally
    }

    /// Why the nodes are unverified.
    package var cause: Cause = .exitFlushCut
    /// The session of the process.
    package var session: SessionID
    /// The host's process id.
    package var pid: UInt32
    /// The host's process name.
    package var processName: String
    /// How many of its nodes are unverified because of the cut.
    package var count: Int
    /// The paths of the first of them (at most ``maxPaths``), in flag order.
    package var paths: [[String]]

    /// The most paths kept as examples.
    package static let maxPaths = 10

    /// `2 nodes are unverified: the process's exit flush ran out of time … (raise …)`.
    package var explanation: String {
        switch cause {
        case .exitFlushCut: Vocabulary.exitFlushCut(count)
        case .endedAbnormally: Vocabulary.endedAbnormallyWithPending(count)
        }
    }

    /// A short name of the cause, for a test case or a rule: `exit flush cut`, `ended abnormally`.
    package var causeName: String {
        switch cause {
        case .exitFlushCut: "exit flush cut"
        case .endedAbnormally: "ended abnormally"
        }
    }

    /// `sample-nodes [pid 42]`.
    package var processText: String { "\(processName) [pid \(pid)]" }

    /// Splits `records` into those reported one by one and, one entry per process (in order of
    /// its first such record), the unverified nodes of processes whose exit flush was cut, and
    /// of processes that ended abnormally with more than ``maxPaths`` unverified nodes (by
    /// ``ProcessSummary/end`` in `processes`).
    package static func split(_ records: [LeakRecord], processes: [ProcessSummary]) -> (
        kept: [LeakRecord], cuts: [ExitFlushCut]
    ) {
        var causes: [SessionID: Cause] = [:]
        for process in processes {
            switch process.end {
            case .exitFlushCut?: causes[process.session] = .exitFlushCut
            case .abnormal?: causes[process.session] = .endedAbnormally
            default: break
            }
        }
        guard !causes.isEmpty else { return (records, []) }
        var unverified: [SessionID: Int] = [:]
        for record in records where record.verdict == .unverified && causes[record.session] == .endedAbnormally {
            unverified[record.session, default: 0] += 1
        }
        for (session, count) in unverified where count <= maxPaths { causes[session] = nil }
        var kept: [LeakRecord] = []
        var cuts: [ExitFlushCut] = []
        var positions: [SessionID: Int] = [:]
        for record in records {
            guard record.verdict == .unverified, let cause = causes[record.session] else {
                kept.append(record)
                continue
            }
            if let position = positions[record.session] {
                cuts[position].count += 1
                if cuts[position].paths.count < maxPaths { cuts[position].paths.append(record.path) }
            } else {
                positions[record.session] = cuts.count
                cuts.append(
                    ExitFlushCut(
                        cause: cause, session: record.session, pid: record.pid, processName: record.processName, count: 1,
                        paths: [record.path]))
            }
        }
        return (kept, cuts)
    }
}
