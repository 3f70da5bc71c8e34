import NodescopeCollector

/// The leak report for people: one block per leak group (under a heading per test, for nodes
/// attached under a test), the stale baseline entries, then one line: `check`'s verdict, or the
/// counts for `leaks`.
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
        let tests = report.testsWithGroups
        var ordered: [(heading: String?, group: LeakGroup)] = []
        for (test, groups) in tests {
            let location = test.location.map { "  (\(SourcePaths.text($0, root: report.sourceRoot)))" } ?? ""
            let failing = groups.contains { $0.fails(strict: report.strict, countGlobals: report.countGlobals) }
            let heading =
                paint(failing ? "TEST FAILS" : "TEST", failing ? .red : .yellow)
                + "  \(VisibleText.escaped(test.description))\(VisibleText.escaped(location))"
            for (position, group) in groups.enumerated() { ordered.append((position == 0 ? heading : nil, group)) }
        }
        let outside = report.groups.filter { $0.test == nil }
        for (position, group) in outside.enumerated() {
            ordered.append((position == 0 && !tests.isEmpty ? "NOT UNDER A TEST" : nil, group))
        }
        for (heading, group) in ordered {
            if let heading { blocks.append(heading) }
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
            if let test = group.test { lines.append("  test:        \(VisibleText.escaped(test.description))") }
            if let site = group.attachSite {
                lines.append("  attached at: \(VisibleText.escaped(SourcePaths.text(site, root: report.sourceRoot)))")
            }
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
