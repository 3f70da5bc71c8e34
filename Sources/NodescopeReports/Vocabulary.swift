import Foundation
import NodescopeCollector

/// The one vocabulary of every report and view: the word, mark and colour of each node state
/// and verdict, and how durations read. The terminal views, the text reports, JUnit, SARIF and
/// the diagrams all say the same thing the same way.
package enum Vocabulary {
    /// A colour of the terminal palette (SGR codes); whether it is used is the writer's choice.
    package enum Color: String, Sendable {
        case red = "31", green = "32", yellow = "33", blue = "34", magenta = "35", cyan = "36", gray = "90", bold = "1"
    }

    /// Paints text with a colour when `enabled`.
    package static func paint(_ text: String, _ color: Color, enabled: Bool) -> String {
        enabled ? "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// A verdict's title in reports: `LEAK`, `UNVERIFIED`, `LATE RELEASE`.
    package static func title(_ verdict: LeakRecord.Verdict) -> String {
        switch verdict {
        case .leaked: "LEAK"
        case .unverified: "UNVERIFIED"
        case .lateRelease: "LATE RELEASE"
        }
    }

    /// A verdict in running text: `leaked`, `unverified`, `released late`.
    package static func phrase(_ verdict: LeakRecord.Verdict) -> String {
        switch verdict {
        case .leaked: "leaked"
        case .unverified: "unverified"
        case .lateRelease: "released late"
        }
    }

    /// A verdict's colour: red for a leak, cyan for unverified, magenta for a late release.
    package static func color(_ verdict: LeakRecord.Verdict) -> Color {
        switch verdict {
        case .leaked: .red
        case .unverified: .cyan
        case .lateRelease: .magenta
        }
    }

    /// When a leak was flagged, after its detach: `1.0 s after detach`, or, for one flagged
    /// before its grace ran out (settled at its process's normal exit from what holds it),
    /// `at its process's exit, 126 ms after detach (within the grace: nothing holding it lets go)`.
    package static func flagged(delayNanos: UInt64, graceNanos: UInt64?) -> String {
        guard let graceNanos, delayNanos < graceNanos else { return "\(duration(delayNanos)) after detach" }
        return "at its process's exit, \(duration(delayNanos)) after detach (within the grace: nothing holding it lets go)"
    }

    /// A node state's mark and words, as `tree` and `attach` show them: `● active`, `✖ LEAKED`.
    package static func mark(_ status: NodeStatus) -> String {
        switch status {
        case .active: "● active"
        case .started: "◐ started"
        case .attached: "○ attached"
        case .inactive: "○ inactive"
        case .ended: "◌ ended"
        case .detached: "⧗ detached, awaiting release"
        case .leaked: "✖ LEAKED"
        case .lateRelease: "⚠ released late"
        case .unverified: "? unverified"
        }
    }

    /// The mark of a released node kept because a leaked node hangs below it.
    package static let placeholderMark = "◌ released (a leaked node remains below)"

    /// A node state's colour.
    package static func color(_ status: NodeStatus) -> Color {
        switch status {
        case .active, .started: .green
        case .attached, .inactive, .ended: .gray
        case .detached: .yellow
        case .leaked: .red
        case .lateRelease: .magenta
        case .unverified: .cyan
        }
    }

    /// What a verdict means, in one sentence, for a leak with `delay` between detach and flag.
    package static func explanation(_ verdict: LeakRecord.Verdict, delayNanos: UInt64, releaseDelayNanos: UInt64?) -> String {
        switch verdict {
        case .leaked: "still alive \(duration(delayNanos)) after detach"
        case .unverified: "alive when its process ended, within the grace, not normally"
        case .lateRelease: "\(releaseDelayNanos.map(duration) ?? "?") after detach, later than the grace"
        }
    }

    /// `350 ms`, `2.7 s`, `12 min`.
    package static func duration(_ nanoseconds: UInt64) -> String {
        let seconds = Double(nanoseconds) / 1e9
        if seconds < 1 { return String(format: "%.0f ms", seconds * 1_000) }
        if seconds < 120 { return String(format: "%.1f s", seconds) }
        return String(format: "%.0f min", seconds / 60)
    }

    // MARK: Retainer paths

    /// The lead and the arrow of a reference on a retainer path: `─ .listeners[3] ─▶ Session`.
    package static let referenceLead = "─"
    /// See ``referenceLead``.
    package static let referenceArrow = "─▶"
    /// What the reference a developer most likely has to cut is called.
    package static let suspect = "suspect: the reference to cut"
    /// The mark of that reference at the end of its line.
    package static let suspectMark = "◀ " + suspect

    /// The suspect reference named on a line of its own: `◀ suspect: Session.listeners[0], the
    /// reference to cut`.
    package static func suspectLine(_ reference: String) -> String {
        "◀ suspect: \(reference), the reference to cut"
    }

    /// What a holder kind adds to a holder's name on a retainer path (`AppFlowImp (attached
    /// node)`); nil when the name says enough (a type, a closure context, a collection).
    package static func word(_ kind: RetainerPath.HolderKind) -> String? {
        switch kind {
        case .attachedNodeObject: "attached node"
        case .detachedNodeObject: "detached node"
        case .global: "global"
        case .stack: "thread stack"
        case .unknownMemory: "unknown memory"
        case .object, .closureContext, .collection: nil
        }
    }

    /// How a leak held only by globals reads: `retained by global`, then the name in backticks
    /// (`main.app` in backticks), or `retained by globals` and the names.
    package static func retainedByGlobal(_ names: [String]) -> String {
        let quoted = names.map { "`\($0)`" }
        return names.count == 1 ? "retained by global \(quoted[0])" : "retained by globals \(quoted.joined(separator: ", "))"
    }

    /// Why a leak held only by globals does not fail `check`.
    package static let globalNotCounted = "not counted as a leak by check: only a global holds it (--count-globals counts it)"

    /// What an analysis that found no reference means.
    package static let unknownHolder =
        "holder unknown: the analysis found no reference to it (a register, an encoded pointer or an unbalanced retain may hold it)"

    /// What a path cut short means, when the host says nothing more.
    package static let cutShort = "the analysis ran out of its bound: this is the shortest path found so far"

    // MARK: Counts

    /// The verdict counts, as every view and report ends them: `1 leaked, 2 unverified, 0
    /// released late`, then `, 1 retained by a global` when some leaked node is held only by
    /// globals (counted apart from `leaked`). With `countGlobals`, those are counted as leaked.
    package static func verdictCounts(_ counts: NodeCounts, countGlobals: Bool = false) -> String {
        let globals = countGlobals ? 0 : counts.retainedByGlobal
        var line =
            "\(counts.leaked + (countGlobals ? counts.retainedByGlobal : 0)) leaked, \(counts.unverified) unverified, "
            + "\(counts.releasedLate) released late"
        if globals > 0 { line += ", " + count(globals, "retained by a global", "retained by globals") }
        return line
    }

    /// A process's counts, as `ps`, `tree`, `attach` and the web view show them: `5 attached,
    /// 1 leaked, 2 unverified, 0 released late`, with `, 3 awaiting release` when some are.
    package static func nodeCounts(_ counts: NodeCounts) -> String {
        var line = "\(counts.attached) attached, " + verdictCounts(counts)
        if counts.awaitingRelease > 0 { line += ", \(counts.awaitingRelease) awaiting release" }
        return line
    }

    /// What a cut exit flush means, for a process with `count` unverified nodes: once per
    /// process, instead of one entry per node.
    package static func exitFlushCut(_ count: Int) -> String {
        "\(count == 1 ? "1 node is" : "\(count) nodes are") unverified: the process's exit flush ran out of time "
            + "before everything it had queued was written (raise NODESCOPE_EXIT_FLUSH=SECONDS, or run it under "
            + "`nodescope check`, which holds the exit)"
    }

    /// What many unverified nodes of a process that ended without a goodbye mean.
    package static func endedAbnormallyWithPending(_ count: Int) -> String {
        "\(count == 1 ? "1 node is" : "\(count) nodes are") unverified: the process ended without a goodbye while "
            + "they awaited release (it crashed or was killed, or its exit flush could not reach a busy collector in "
            + "time: run it under `nodescope check`, which holds the exit, or raise NODESCOPE_EXIT_FLUSH=SECONDS)"
    }

    /// `1 occurrence`, `2 occurrences`.
    package static func count(_ value: Int, _ singular: String, _ plural: String) -> String {
        "\(value) \(value == 1 ? singular : plural)"
    }
}
