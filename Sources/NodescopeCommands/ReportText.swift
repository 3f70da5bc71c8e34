import Foundation
import NodescopeCollector

/// `check`'s summary for people, on standard error: one block per leak group, the stale baseline
/// entries, then the one-line verdict.
enum ReportText {
    /// Colours only when standard error is a terminal and `NO_COLOR` is unset.
    static let isColorful: Bool = isatty(2) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil

    static func render(_ outcome: CheckOutcome, colorful: Bool = isColorful) -> String {
        func paint(_ text: String, _ code: String) -> String { colorful ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
        var blocks: [String] = []
        if outcome.processes.isEmpty {
            blocks.append(
                "nodescope check: no process reported a node tree, so nothing was checked. Does the command use the "
                    + "Nodes runtime (or NodesDebug), and does it pass NODESCOPE_SOCKET on to its children?")
        }
        for group in outcome.groups {
            let title: String
            switch (group.verdict, group.isKnown) {
            case (_, true): title = paint("KNOWN " + Self.word(group.verdict), "33")
            case (.leaked, false): title = paint("LEAK", "31")
            case (.unverified, false): title = paint("UNVERIFIED", outcome.strict ? "31" : "36")
            case (.lateRelease, false): title = paint("LATE RELEASE", "35")
            }
            var lines = ["\(title)  \(VisibleText.escaped(group.path.joined(separator: " › ")))  (\(VisibleText.escaped(group.first.kind)))"]
            lines.append("  process:     \(VisibleText.escaped(group.processesText))")
            lines.append("  alive:       \(VisibleText.escaped(group.aliveText))")
            switch group.verdict {
            case .leaked:
                lines.append("  flagged:     \(LeakText.duration(group.delayNanos)) after detach")
            case .unverified:
                lines.append("  unverified:  the process ended \(LeakText.duration(group.delayNanos)) after detach, within the grace, not normally")
            case .lateRelease:
                let released = group.first.releaseDelayNanos.map { ", released \(LeakText.duration($0)) after detach" } ?? ""
                lines.append("  flagged:     \(LeakText.duration(group.delayNanos)) after detach\(released)")
            }
            let count = group.records.count
            lines.append("  fingerprint: \(group.fingerprint)  (\(CheckOutcome.count(count, "occurrence", "occurrences")))")
            if let entry = group.baselineEntry {
                lines.append("  baseline:    \(entry.reason)  (\(outcome.baselineFile ?? "baseline"):\(entry.line))")
            }
            blocks.append(lines.joined(separator: "\n"))
        }
        for entry in outcome.staleEntries {
            blocks.append(
                "\(paint("STALE BASELINE ENTRY", "33"))  \(entry.label)  (\(outcome.baselineFile ?? "baseline"):\(entry.line))\n"
                    + "  matched no leak in this run: remove it if the leak is fixed\n"
                    + "  reason:      \(entry.reason)")
        }
        blocks.append(outcome.verdictLine)
        return blocks.joined(separator: "\n\n") + "\n"
    }

    static func word(_ verdict: LeakRecord.Verdict) -> String {
        switch verdict {
        case .leaked: "LEAK"
        case .unverified: "UNVERIFIED"
        case .lateRelease: "LATE RELEASE"
        }
    }
}
