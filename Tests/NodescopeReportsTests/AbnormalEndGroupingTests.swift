import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

@testable import NodescopeReports

/// A process that ended without a goodbye while many of its nodes awaited release: one entry
/// with the count and what to do, not thousands; a few such nodes keep an entry each.
@Suite(.offTheCooperativePool) struct AbnormalEndGroupingTests {
    static func report() -> LeakReport {
        var records: [LeakRecord] = []
        for node in 1...300 { records.append(CountsTests.record(UInt64(node), .unverified, session: 1, pid: 41)) }
        records += (1...3).map { CountsTests.record(UInt64($0), .unverified, session: 2, pid: 42) }
        records.append(CountsTests.record(9, .leaked, session: 1, pid: 41))
        return LeakReport(
            leaks: records,
            processes: [
                CountsTests.process(session: 1, pid: 41, end: .abnormal), CountsTests.process(session: 2, pid: 42, end: .abnormal),
            ], strict: false)
    }

    @Test func manyUnverifiedNodesOfAnAbnormalEndAreOneEntry() throws {
        let report = Self.report()
        #expect(report.exitFlushCuts.map(\.cause) == [.endedAbnormally])
        #expect(report.exitFlushCuts.map(\.count) == [300])
        #expect(report.exitFlushCuts.first?.paths.count == ExitFlushCut.maxPaths)
        // The leak of the same process and the few unverified nodes of the other keep their entries.
        #expect(report.groups.flatMap(\.records).map(\.pid).sorted() == [41, 42, 42, 42])
        // Not a cut flush: the counts say unverified, not "exit flush cut".
        #expect(report.counts == NodeCounts(leaked: 1, unverified: 303))

        let text = ReportText.render(.collector(report, commandLine: ["nodescope", "leaks"]), colorful: false)
        #expect(text.contains("UNVERIFIED  app-41 [pid 41]: 300 nodes are unverified: the process ended without a goodbye"), "\(text)")
        #expect(text.components(separatedBy: "UNVERIFIED").count - 1 == 4, "\(text)")

        let junit = ReportJUnit.render(.collector(report, commandLine: ["nodescope", "leaks"]))
        #expect(junit.contains("name=\"ended abnormally (300 nodes unverified)\""), "\(junit)")
        let sarif = ReportSARIF.render(.collector(report, commandLine: ["nodescope", "leaks"]))
        #expect(sarif.contains("ended-abnormally:app-41"))
        try RetainerReportTests.validate(sarif, against: RetainerReportTests.sarifSchema)

        let document = LeaksDocument(records: report.groups.flatMap(\.records), processes: report.processes)
        #expect(document.counts.exitFlushCut == 0)
    }
}
