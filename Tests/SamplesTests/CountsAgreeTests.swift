import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

extension SamplesTests {
    /// One count, told the same way everywhere: for each sample, with and without its leak, while
    /// it holds and after it exits, `ps` (JSON and table), `tree` (JSON and header), `leaks`
    /// (JSON and its last line) and the web view (whose `/api/processes` is the body of
    /// `ps --json`, and whose words are checked by the browser test) give the same numbers, and
    /// those numbers are the nodes the tree shows.
    @Suite("Counts agree across the commands")
    struct CountsAgree {
        static let runs: [(sample: String, leak: Bool)] = [
            "sample-nodes", "sample-ribs", "sample-viper", "sample-bfg", "sample-modules",
        ].flatMap { [($0, false), ($0, true)] }

        @Test(arguments: runs.indices)
        func everyCommandCountsAlike(_ index: Int) throws {
            let (sample, leak) = Self.runs[index]
            let harness = try SampleHarness()
            defer { harness.stop() }
            let host = try harness.startHeld(sample, leak ? ["--leak", "retain-cycle"] : [])
            defer { host.stop() }
            let pid = host.process.processIdentifier
            harness.waitPastGrace()
            let holding = try settled(harness, pid: pid)
            #expect(holding.end == nil)
            if leak { #expect(holding.counts.leaked + holding.counts.retainedByGlobal >= 1, "\(sample): \(holding.counts)") }
            if !leak { #expect(holding.counts == NodeCounts(attached: holding.counts.attached), "\(sample): \(holding.counts)") }
            try expectAgreement(harness, pid: pid, label: "\(sample)\(leak ? " --leak" : "") holding")

            // Ended normally (SIGTERM ends the hold): the counts of an ended process agree too.
            host.signal(SIGTERM)
            #expect(host.waitForExit(seconds: 30) == 0)
            let deadline = Date().addingTimeInterval(10)
            var ended: ProcessSummary?
            while Date() < deadline {
                ended = try processes(harness).first { $0.pid == UInt32(pid) && $0.end != nil }
                if ended != nil { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(ended?.end == .normalExit, "\(sample): \(String(describing: ended))")
            try expectAgreement(harness, pid: pid, label: "\(sample)\(leak ? " --leak" : "") exited")
        }

        /// `check` counts as the others do: its JSON's counts, its processes' counts and the line
        /// before its verdict say the same.
        @Test(arguments: ["sample-nodes", "sample-ribs", "sample-viper", "sample-bfg", "sample-modules"])
        func checkCountsAlike(_ sample: String) throws {
            let report = makeScratchDirectory().appendingPathComponent("check.json").path
            let check = try ChildProcess(
                "nodescope",
                ["check", "--json", report, "--", ChildProcess.binDirectory.appendingPathComponent(sample).path]
                    + ["--quiet", "--leak", "retain-cycle"])
            #expect(check.waitForExit(seconds: 120) == 1, "\(check.stderr)")
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
            let counts = try JSONDecoder().decode(
                NodeCounts.self, from: JSONSerialization.data(withJSONObject: try #require(json["counts"] as? [String: Any])))
            let processes = try #require(json["processes"] as? [[String: Any]])
            var summed = NodeCounts()
            for process in processes {
                let decoded = try JSONDecoder().decode(
                    NodeCounts.self, from: JSONSerialization.data(withJSONObject: try #require(process["counts"] as? [String: Any])))
                (summed.leaked, summed.retainedByGlobal) = (
                    summed.leaked + decoded.leaked, summed.retainedByGlobal + decoded.retainedByGlobal
                )
                (summed.unverified, summed.exitFlushCut) = (
                    summed.unverified + decoded.unverified, summed.exitFlushCut + decoded.exitFlushCut
                )
                summed.releasedLate += decoded.releasedLate
                #expect(process["leaks"] as? Int == decoded.leaked, "\(sample)")
            }
            #expect(summed == counts, "\(sample): processes \(summed) vs report \(counts)")
            #expect(counts.leaked + counts.retainedByGlobal >= 1, "\(sample): \(counts)")
            let lines = check.stderr.split(separator: "\n").map(String.init)
            let verdict = try #require(lines.lastIndex { $0.hasPrefix("nodescope check:") }, "\(check.stderr)")
            #expect(verdict > 0 && lines[verdict - 1] == Self.words(counts, attached: false), "\(sample): \(check.stderr)")
        }

        /// `ps --json`, decoded.
        func processes(_ harness: SampleHarness) throws -> [ProcessSummary] {
            let (status, output) = try harness.run(["ps", "--json"])
            #expect(status == 0)
            return try JSONDecoder().decode([ProcessSummary].self, from: Data(output.utf8))
        }

        /// The process's summary once nothing of it awaits release any more.
        func settled(_ harness: SampleHarness, pid: Int32) throws -> ProcessSummary {
            let deadline = Date().addingTimeInterval(15)
            while true {
                let summary = try #require(try processes(harness).first { $0.pid == UInt32(pid) })
                if summary.counts.awaitingRelease == 0 || Date() > deadline { return summary }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }

        /// `5 attached, 1 leaked, 0 unverified, 0 released late`, as `ps`, `tree` and the web view
        /// write it (Vocabulary.nodeCounts).
        static func words(_ counts: NodeCounts, attached: Bool = true) -> String {
            var line = attached ? "\(counts.attached) attached, " : ""
            line += "\(counts.leaked) leaked, \(counts.unverified) unverified, \(counts.releasedLate) released late"
            if counts.retainedByGlobal > 0 {
                line += ", \(counts.retainedByGlobal) retained by \(counts.retainedByGlobal == 1 ? "a global" : "globals")"
            }
            if attached, counts.awaitingRelease > 0 { line += ", \(counts.awaitingRelease) awaiting release" }
            return line
        }

        func expectAgreement(_ harness: SampleHarness, pid: Int32, label: String) throws {
            let summary = try #require(try processes(harness).first { $0.pid == UInt32(pid) }, "\(label): not in ps")
            let counts = summary.counts
            #expect(summary.liveNodes == counts.attached, "\(label)")
            #expect(summary.leaks == counts.leaked, "\(label)")
            #expect(summary.awaitingRelease == counts.awaitingRelease, "\(label)")

            // The table says the same.
            let table = try harness.run(["ps"]).output
            let row = try #require(table.split(separator: "\n").first { $0.hasPrefix("\(pid) ") }, "\(label): \(table)")
            #expect(row.hasSuffix(Self.words(counts)), "\(label): \(row)")

            // The tree: its counts, its header, and the nodes it shows.
            let (treeStatus, treeJSON) = try harness.run(["tree", "\(pid)", "--json"])
            #expect(treeStatus == 0, "\(label): \(treeJSON)")
            let view = try JSONDecoder().decode(TreeView.self, from: Data(treeJSON.utf8))
            #expect(view.counts == counts, "\(label): tree \(String(describing: view.counts)) vs ps \(counts)")
            var shown = NodeCounts(nodes: view.nodes)
            // Which leaked node only globals hold is told by the records' paths: compare the sum.
            shown.leaked += shown.retainedByGlobal
            shown.retainedByGlobal = 0
            var expected = counts
            expected.leaked += expected.retainedByGlobal
            expected.retainedByGlobal = 0
            expected.exitFlushCut = 0
            #expect(shown == expected, "\(label): the tree shows \(shown), the counts say \(counts)")
            let treeText = try harness.run(["tree", "\(pid)"]).output
            let header = treeText.split(separator: "\n").first.map(String.init) ?? ""
            #expect(header.hasSuffix(Self.words(counts)), "\(label): \(header)")

            // The leak report: its JSON counts the same records, its text ends with the same words.
            let (leaksStatus, leaksJSON) = try harness.run(["leaks", "\(pid)", "--format", "json"])
            #expect(leaksStatus == 0, "\(label): \(leaksJSON)")
            let document = try JSONDecoder().decode(LeaksJSON.self, from: Data(leaksJSON.utf8))
            #expect(document.processes.map(\.pid) == [UInt32(pid)], "\(label)")
            #expect(document.processes.first?.counts == counts, "\(label)")
            var verdicts = counts
            (verdicts.attached, verdicts.awaitingRelease) = (0, 0)
            #expect(document.counts == verdicts, "\(label): leaks \(document.counts) vs ps \(counts)")
            let listed = document.leaks.count + (document.processes.first?.exitFlushCut?.unverified ?? 0)
            #expect(listed == counts.leaked + counts.retainedByGlobal + counts.unverified + counts.releasedLate, "\(label)")
            let report = try harness.run(["leaks", "\(pid)"]).output
            let last = report.split(separator: "\n").last.map(String.init) ?? ""
            let nothing = counts.leaked + counts.retainedByGlobal + counts.unverified + counts.releasedLate == 0
            #expect(last == (nothing ? "no leaks" : Self.words(counts, attached: false)), "\(label): \(report)")
        }
    }
}
