import NodescopeCollector

/// The leak report for people: one block per leak group, the stale baseline entries, then one
/// line: `check`'s verdict, or the counts for `leaks`.
public enum ReportText {
    /// The report; colours only when `colorful`.
    public static func render(_ subject: ReportSubject, colorful: Bool) -> String {
        func paint(_ text: String, _ color: Vocabulary.Color) -> String { Vocabulary.paint(text, color, enabled: colorful) }
        let report = subject.report
        var blocks: [String] = []
        if let outcome = subject.outcome, outcome.processes.isEmpty {
            blocks.append(
                "nodescope check: no process reported a node tree, so nothing was checked. Does the command use the "
                    + "Nodes runtime (or NodesDebug), and does it pass NODESCOPE_SOCKET on to its children?")
        }
        for group in report.groups {
            let uncountedGlobal = group.isUncountedGlobal(countGlobals: report.countGlobals)
            let color: Vocabulary.Color =
                group.isKnown || uncountedGlobal
                ? .yellow : (group.verdict == .unverified && report.strict ? .red : Vocabulary.color(group.verdict))
            let title = paint(
                uncountedGlobal ? "RETAINED BY GLOBAL" : (group.isKnown ? "KNOWN " : "") + Vocabulary.title(group.verdict), color)
            var lines = [
                "\(title)  \(VisibleText.escaped(group.path.joined(separator: " › ")))  (\(VisibleText.escaped(group.first.kind)))"
            ]
            lines.append("  process:     \(VisibleText.escaped(group.processesText))")
            lines.append("  alive:       \(VisibleText.escaped(group.aliveText))")
            lines += group.retainerLines
            if uncountedGlobal { lines.append("  not a leak:  " + Vocabulary.globalNotCounted) }
            switch group.verdict {
            case .leaked:
                lines.append("  flagged:     \(Vocabulary.duration(group.delayNanos)) after detach")
            case .unverified:
                lines.append(
                    "  unverified:  the process ended \(Vocabulary.duration(group.delayNanos)) after detach, within the grace, not normally"
                )
            case .lateRelease:
                let released = group.first.releaseDelayNanos.map { ", released \(Vocabulary.duration($0)) after detach" } ?? ""
                lines.append("  flagged:     \(Vocabulary.duration(group.delayNanos)) after detach\(released)")
            }
            let count = group.records.count
            lines.append("  fingerprint: \(group.fingerprint)  (\(Vocabulary.count(count, "occurrence", "occurrences")))")
            if let entry = group.baselineEntry {
                lines.append("  baseline:    \(VisibleText.escaped(entry.reason))  (\(report.baselineFile ?? "baseline"):\(entry.line))")
            }
            blocks.append(lines.joined(separator: "\n"))
        }
        for entry in report.staleEntries {
            blocks.append(
                "\(paint("STALE BASELINE ENTRY", .yellow))  \(entry.label)  (\(report.baselineFile ?? "baseline"):\(entry.line))\n"
                    + "  matched no leak in this run: remove it if the leak is fixed\n"
                    + "  reason:      \(VisibleText.escaped(entry.reason))")
        }
        switch subject {
        case .check(let outcome): blocks.append(outcome.verdictLine)
        case .collector: blocks.append(report.groups.isEmpty ? "no leaks" : report.countsLine)
        }
        return blocks.joined(separator: "\n\n") + "\n"
    }
}
