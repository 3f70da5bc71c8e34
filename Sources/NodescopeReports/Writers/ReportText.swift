import NodescopeCollector

/// The leak report for people: one block per leak group (under a heading per test, for nodes
/// attached under a test), the stale baseline entries, then one line: `check`'s verdict, or the
/// counts for `leaks`.
package enum ReportText {
    /// The report; colours only when `colorful`.
    package static func render(_ subject: ReportSubject, colorful: Bool) -> String {
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
            if let closure = group.suspectClosure, let location = RetainerText.closureLocation(closure, root: report.sourceRoot) {
                let symbol = closure.symbol.map { "  (\(VisibleText.escaped($0)))" } ?? ""
                lines.append("  change:      \(VisibleText.escaped(location))\(symbol)")
            }
            if uncountedGlobal { lines.append("  not a leak:  " + Vocabulary.globalNotCounted) }
            switch group.verdict {
            case .leaked:
                lines.append("  flagged:     " + Vocabulary.flagged(delayNanos: group.delayNanos, graceNanos: report.graceNanos))
            case .unverified:
                lines.append("  unverified:  " + unverifiedReason(group, processes: report.processes))
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
        for cut in report.exitFlushCuts {
            // One line per process, however many nodes the cut left unverified.
            let color: Vocabulary.Color = report.strict ? .red : Vocabulary.color(LeakRecord.Verdict.unverified)
            blocks.append(
                "\(paint(Vocabulary.title(LeakRecord.Verdict.unverified), color))  \(VisibleText.escaped(cut.processText)): \(cut.explanation)"
            )
        }
        // A few stale entries in full, then one line for the rest (a baseline of a project that
        // fixed thousands of leaks must not print thousands of blocks).
        for entry in report.staleEntries.prefix(staleEntriesShown) {
            blocks.append(
                "\(paint("STALE BASELINE ENTRY", .yellow))  \(entry.label)  (\(report.baselineFile ?? "baseline"):\(entry.line))\n"
                    + "  matched no leak in this run: remove it if the leak is fixed\n"
                    + "  reason:      \(VisibleText.escaped(entry.reason))")
        }
        if report.staleEntries.count > staleEntriesShown {
            blocks.append(
                "\(paint("STALE BASELINE ENTRIES", .yellow))  and \(report.staleEntries.count - staleEntriesShown) more that matched no "
                    + "leak in this run (the JSON report lists them all)")
        }
        switch subject {
        case .check(let outcome):
            blocks.append(report.isEmpty ? outcome.verdictLine : report.countsLine + "\n" + outcome.verdictLine)
        case .collector: blocks.append(report.isEmpty ? "no leaks" : report.countsLine)
        }
        return blocks.joined(separator: "\n\n") + "\n"
    }

    /// How many stale baseline entries are shown in full; the rest are counted on one line.
    package static let staleEntriesShown = 10

    /// Why a group's nodes are unverified, in words true of how its first process ended.
    static func unverifiedReason(_ group: LeakGroup, processes: [ProcessSummary]) -> String {
        let delay = Vocabulary.duration(group.delayNanos)
        let end = processes.first { $0.session == group.first.session }?.end
        switch end {
        case .normalExit?:
            return "the process exited normally \(delay) after detach, before the grace ran out (`nodescope check` holds "
                + "the exit until the graces run out)"
        case .agentDisabled?:
            return "the process switched its agent off \(delay) after detach, within the grace"
        case .exitFlushCut?:
            return "the process exited \(delay) after detach, within the grace, and its exit flush was cut"
        case .abnormal?, nil:
            return "the process ended \(delay) after detach, within the grace, not normally"
        }
    }
}
