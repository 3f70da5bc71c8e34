import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

@testable import NodescopeReports

/// One count for every view: the counts of leak records, their words, and a cut exit flush told
/// once per process in every report format.
@Suite(.offTheCooperativePool) struct CountsTests {
    static func record(
        _ node: UInt64, _ verdict: LeakRecord.Verdict, session: UInt64 = 1, pid: UInt32 = 42, global: Bool = false
    ) -> LeakRecord {
        let alive = [ObjectInfo(index: 0, role: "context", typeName: "FeedItemContext", isAlive: true)]
        let paths =
            global
            ? [RetainerPath(objectIndex: 0, verdict: .global, hops: [.init(holderKind: .global, holder: "main.app", reference: "")])]
            : []
        return LeakRecord(
            session: SessionID(rawValue: session), pid: pid, processName: "app-\(pid)", nodeID: node, kind: "Flow",
            path: ["AppFlow", "FeedItemFlow\(node)"], aliveObjects: alive, detachedAtNanos: 1_000, flaggedAtNanos: 2_000,
            releasedAtNanos: verdict == .lateRelease ? 3_000 : nil, verdict: verdict, fingerprint: "f\(node)", retainers: paths)
    }

    static func process(session: UInt64, pid: UInt32, end: SessionEnd) -> ProcessSummary {
        ProcessSummary(
            session: SessionID(rawValue: session), pid: pid, processName: "app-\(pid)", connectedAtNanos: 0, endedAtNanos: 9_000,
            endedNormally: end != .abnormal, liveNodes: 0, leaks: 0, eventsIngested: 0, droppedReported: 0, end: end)
    }

    @Test func recordsAreCountedApartByVerdict() {
        let records = [
            Self.record(1, .leaked), Self.record(2, .leaked, global: true), Self.record(3, .unverified),
            Self.record(4, .lateRelease), Self.record(5, .unverified, session: 2),
        ]
        let counts = NodeCounts(attached: 7, awaitingRelease: 1, records: records, flushCut: { $0.rawValue == 2 })
        #expect(
            counts
                == NodeCounts(
                    attached: 7, awaitingRelease: 1, leaked: 1, retainedByGlobal: 1, unverified: 2, exitFlushCut: 1, releasedLate: 1))
        #expect(
            Vocabulary.nodeCounts(counts)
                == "7 attached, 1 leaked, 2 unverified, 1 released late, 1 retained by a global, 1 awaiting release")
        #expect(Vocabulary.verdictCounts(counts) == "1 leaked, 2 unverified, 1 released late, 1 retained by a global")
        #expect(Vocabulary.verdictCounts(counts, countGlobals: true) == "2 leaked, 2 unverified, 1 released late")
        #expect(Vocabulary.nodeCounts(NodeCounts(attached: 1)) == "1 attached, 0 leaked, 0 unverified, 0 released late")
    }

    @Test func theCountsOfATreeAreThoseOfItsNodes() {
        func node(_ id: UInt64, _ status: NodeStatus, placeholder: Bool = false) -> NodeInfo {
            NodeInfo(
                id: id, parent: nil, kind: "Flow", name: "N\(id)", status: status, objects: [], attachedAtNanos: 0,
                detachedAtNanos: nil, depth: 0, isPlaceholder: placeholder)
        }
        let nodes = [
            node(1, .active), node(2, .started), node(3, .detached), node(4, .leaked), node(5, .unverified),
            node(6, .lateRelease), node(7, .detached, placeholder: true),
        ]
        #expect(
            NodeCounts(nodes: nodes)
                == NodeCounts(attached: 2, awaitingRelease: 1, leaked: 1, unverified: 1, releasedLate: 1))
    }

    /// Two hosts whose exit flush was cut (500 nodes each), one that crashed with two nodes.
    static func cutReport(strict: Bool = false) -> LeakReport {
        var records: [LeakRecord] = []
        for node in 1...500 { records.append(record(UInt64(node), .unverified, session: 1, pid: 41)) }
        for node in 1...500 { records.append(record(UInt64(node), .unverified, session: 2, pid: 42)) }
        records += [record(1, .unverified, session: 3, pid: 43), record(2, .unverified, session: 3, pid: 43)]
        return LeakReport(
            leaks: records,
            processes: [
                process(session: 1, pid: 41, end: .exitFlushCut), process(session: 2, pid: 42, end: .exitFlushCut),
                process(session: 3, pid: 43, end: .abnormal),
            ], strict: strict)
    }

    @Test func aCutExitFlushIsOneEntryPerProcess() throws {
        let report = Self.cutReport()
        #expect(report.exitFlushCuts.map(\.count) == [500, 500])
        #expect(report.exitFlushCuts.map(\.paths.count) == [ExitFlushCut.maxPaths, ExitFlushCut.maxPaths])
        #expect(report.groups.flatMap(\.records).map(\.pid) == [43, 43])
        #expect(report.counts == NodeCounts(unverified: 1_002, exitFlushCut: 1_000))

        let text = ReportText.render(.collector(report, commandLine: ["nodescope", "leaks"]), colorful: false)
        #expect(text.split(separator: "\n").filter { $0.contains("exit flush") }.count == 2, "\(text)")
        #expect(
            text.contains(
                "UNVERIFIED  app-41 [pid 41]: 500 nodes are unverified: the process's exit flush ran out of time before "
                    + "everything it had queued was written (raise NODESCOPE_EXIT_FLUSH=SECONDS, or run it under "
                    + "`nodescope check`, which holds the exit)"), "\(text)")
        #expect(text.contains("unverified:  the process ended 0 ms after detach, within the grace, not normally"), "\(text)")
        #expect(text.hasSuffix("0 leaked, 1002 unverified, 0 released late\n"), "\(text)")

        let junit = ReportJUnit.render(.collector(report, commandLine: ["nodescope", "leaks"]))
        #expect(junit.components(separatedBy: "<testcase ").count - 1 == 4, "\(junit)")
        #expect(junit.contains("name=\"exit flush cut (500 nodes unverified)\""), "\(junit)")

        let sarif = ReportSARIF.render(.collector(report, commandLine: ["nodescope", "leaks"]))
        let log = try #require(try JSONSerialization.jsonObject(with: Data(sarif.utf8)) as? [String: Any])
        let results = try #require((log["runs"] as? [[String: Any]])?.first?["results"] as? [[String: Any]])
        #expect(results.count == 4)
        #expect(results.filter { ($0["properties"] as? [String: Any])?["unverifiedNodes"] as? Int == 500 }.count == 2)
        try RetainerReportTests.validate(sarif, against: RetainerReportTests.sarifSchema)

        let document = LeaksDocument(records: report.groups.flatMap(\.records) + [], processes: report.processes)
        #expect(document.leaks.count == 2)
    }

    @Test func aCutExitFlushFailsCheckOnlyWhenStrict() {
        func outcome(strict: Bool) -> CheckOutcome {
            let report = Self.cutReport()
            return CheckOutcome(
                command: ["app"], termination: .exited(0),
                leaks: report.exitFlushCuts.isEmpty ? [] : (1...3).map { Self.record(UInt64($0), .unverified, session: 1, pid: 41) },
                processes: [Self.process(session: 1, pid: 41, end: .exitFlushCut)], baseline: nil, baselineFile: nil,
                baselineOutput: nil, strict: strict, graceNanos: 1_000_000_000)
        }
        #expect(outcome(strict: false).exitCode == 0)
        #expect(outcome(strict: false).verdictLine == "nodescope check: no new leaks (3 unverified) — passing")
        #expect(outcome(strict: true).exitCode == 1)
        #expect(outcome(strict: true).verdictLine == "nodescope check: 3 new leaks or unverified nodes — failing")
    }
}
