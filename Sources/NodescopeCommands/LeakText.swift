import Foundation
import NodescopeCollector

/// The leak report as text: one block per leak, grouped by fingerprint.
enum LeakText {
    static func render(_ leaks: [LeakRecord], now: UInt64) -> String {
        guard !leaks.isEmpty else { return "no leaks\n" }
        var blocks: [String] = []
        let groups = Dictionary(grouping: leaks, by: \.fingerprint)
        var seen = Set<String>()
        for leak in leaks where seen.insert(leak.fingerprint).inserted {
            let group = groups[leak.fingerprint] ?? [leak]
            let title: String
            switch leak.verdict {
            case .leaked: title = Terminal.paint("LEAK", .red)
            case .unverified: title = Terminal.paint("UNVERIFIED", .cyan)
            case .lateRelease: title = Terminal.paint("LATE RELEASE", .magenta)
            }
            var lines = ["\(title)  \(VisibleText.escaped(leak.path.joined(separator: " › ")))  (\(VisibleText.escaped(leak.kind)))"]
            lines.append("  process:  \(VisibleText.escaped(leak.processName)) [pid \(leak.pid)]")
            let alive = VisibleText.escaped(leak.aliveObjects.map { "\($0.role) \($0.typeName)" }.joined(separator: ", "))
            lines.append("  alive:    \(alive.isEmpty ? "-" : alive)")
            let detachedFor = now >= leak.detachedAtNanos ? now - leak.detachedAtNanos : 0
            var timing = "  detached: \(duration(detachedFor)) ago"
            if let released = leak.releasedAtNanos, released >= leak.detachedAtNanos {
                timing += ", released \(duration(released - leak.detachedAtNanos)) after detach"
            }
            lines.append(timing)
            lines.append("  fingerprint: \(leak.fingerprint)" + (group.count > 1 ? "  (\(group.count) occurrences)" : ""))
            blocks.append(lines.joined(separator: "\n"))
        }
        let leaked = leaks.filter { $0.verdict == .leaked }.count
        let summary = "\(leaked) leaked, \(leaks.filter { $0.verdict == .unverified }.count) unverified, "
            + "\(leaks.filter { $0.verdict == .lateRelease }.count) released late"
        return blocks.joined(separator: "\n\n") + "\n\n" + summary + "\n"
    }

    static func duration(_ nanoseconds: UInt64) -> String {
        let seconds = Double(nanoseconds) / 1e9
        if seconds < 1 { return String(format: "%.0f ms", seconds * 1_000) }
        if seconds < 120 { return String(format: "%.1f s", seconds) }
        return String(format: "%.0f min", seconds / 60)
    }
}
