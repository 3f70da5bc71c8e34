import Foundation
import NodescopeCollector
import Testing

@testable import NodescopeReports

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The decision (exit codes, verdict line) and the reports, on made-up findings: no processes.
@Suite struct CheckOutcomeTests {
    private func record(
        _ path: [String], verdict: LeakRecord.Verdict = .leaked, roles: [String] = ["context"], pid: UInt32 = 7,
        name: String = "host", flagged: UInt64 = 2_000_000_000
    ) -> LeakRecord {
        LeakRecord(
            session: SessionID(rawValue: 1), pid: pid, processName: name, nodeID: UInt64(path.count), kind: "Flow", path: path,
            aliveObjects: roles.enumerated().map {
                ObjectInfo(index: UInt16($0.offset + 1), role: $0.element, typeName: "T\($0.offset)", isAlive: true)
            },
            detachedAtNanos: 1_000_000_000, flaggedAtNanos: flagged,
            releasedAtNanos: verdict == .lateRelease ? 2_500_000_000 : nil, verdict: verdict,
            fingerprint: LeakFingerprint.fingerprint(path: path, aliveRoles: roles))
    }

    private func outcome(
        _ leaks: [LeakRecord], termination: CheckTermination = .exited(0), baseline: String? = nil, strict: Bool = false,
        writing: String? = nil
    ) throws -> CheckOutcome {
        let known = try baseline.map { text throws in try Baseline.parse(Array(text.utf8)) }
        let process = ProcessSummary(
            session: SessionID(rawValue: 1), pid: 7, processName: "host", connectedAtNanos: 0, endedAtNanos: 3_000_000_000,
            endedNormally: true, liveNodes: 0, leaks: leaks.count, eventsIngested: 10, droppedReported: 0)
        return CheckOutcome(
            command: ["swift", "test"], termination: termination, leaks: leaks, processes: [process], baseline: known,
            baselineFile: baseline == nil ? nil : "b.json", baselineOutput: writing, strict: strict, graceNanos: 1_000_000_000)
    }

    @Test func exitCodes() throws {
        #expect(try outcome([]).exitCode == 0)
        #expect(try outcome([record(["A", "B"])]).exitCode == 1)
        #expect(try outcome([record(["A", "B"])], termination: .exited(3)).exitCode == 3, "the command's status wins")
        #expect(try outcome([], termination: .signaled(9)).exitCode == 137)
        #expect(try outcome([record(["A"], verdict: .unverified)]).exitCode == 0)
        #expect(try outcome([record(["A"], verdict: .unverified)], strict: true).exitCode == 1)
        #expect(try outcome([record(["A"], verdict: .lateRelease)], strict: true).exitCode == 0)
        #expect(try outcome([record(["A", "B"])], writing: "b.json").exitCode == 0)
        #expect(try outcome([record(["A", "B"])], termination: .exited(4), writing: "b.json").exitCode == 4)
    }

    @Test func groupsByFingerprintAndVerdict() throws {
        let result = try outcome([
            record(["A", "Late"], verdict: .lateRelease),
            record(["A", "B"], pid: 1),
            record(["A", "B"], pid: 2, flagged: 2_100_000_000),
            record(["A", "B"], roles: ["context", "worker"]),
            record(["A", "U"], verdict: .unverified),
        ])
        #expect(result.groups.map(\.pathText) == ["A/B", "A/B", "A/U", "A/Late"])
        #expect(result.groups.map(\.records.count) == [2, 1, 1, 1])
        #expect(result.groups[0].processesText == "host [pid 1], host [pid 2]")
        #expect(result.verdictLine == "nodescope check: 2 new leaks (1 unverified, 1 late release) — failing")
    }

    @Test func verdictLines() throws {
        let baseline = """
            {"version": 1, "entries": [{"path": "A/*", "reason": "known"}, {"path": "Z", "reason": "stale"}, {"path": "Y", "reason": "stale"}]}
            """
        #expect(try outcome([]).verdictLine == "nodescope check: no leaks — passing")
        #expect(
            try outcome([record(["A", "B"])], baseline: baseline).verdictLine
                == "nodescope check: no new leaks (1 known, 2 stale baseline entries) — passing")
        #expect(
            try outcome([record(["A", "B"]), record(["C"])], baseline: baseline).verdictLine
                == "nodescope check: 1 new leak (1 known, 2 stale baseline entries) — failing")
        #expect(
            try outcome([record(["C"])], termination: .exited(3)).verdictLine
                == "nodescope check: 1 new leak — the command failed with exit status 3; exiting 3")
        #expect(
            try outcome([], termination: .signaled(15)).verdictLine
                == "nodescope check: no leaks — the command was killed by SIGTERM (signal 15); exiting 143")
        #expect(
            try outcome([record(["C"], verdict: .unverified)], strict: true).verdictLine
                == "nodescope check: 1 new leak or unverified node — failing")
        #expect(try outcome([record(["C"])], writing: "b.json").verdictLine == "nodescope check: 1 new leak — wrote the baseline b.json")
    }

    @Test func theWrittenBaselineKeepsKnownReasonsAndSkipsLateReleases() throws {
        let result = try outcome(
            [record(["A", "B"]), record(["C"]), record(["L"], verdict: .lateRelease)],
            baseline: "{\"version\": 1, \"entries\": [{\"path\": \"A/B\", \"reason\": \"kept\"}]}", writing: "b.json")
        let written = try Baseline.parse(Array(result.baselineDocument.utf8))
        #expect(written.entries.map(\.reason) == ["kept", Baseline.placeholderReason])
        #expect(written.entries.map { $0.path?.text } == ["A/B", "C"])
    }

    @Test func theHumanSummaryNamesEverything() throws {
        let text = ReportText.render(
            .check(
                try outcome(
                    [record(["A", "B"], roles: ["context", "worker"]), record(["Z"])],
                    baseline:
                        "{\"version\": 1, \"entries\": [{\"path\": \"A/B\", \"reason\": \"kept\"}, {\"fingerprint\": \"0123456789abcdef\", \"reason\": \"old\"}]}"
                )),
            colorful: false)
        #expect(text.contains("KNOWN LEAK  A › B  (Flow)"))
        #expect(text.contains("  process:     host [pid 7]"))
        #expect(text.contains("  alive:       context T0, worker T1"))
        #expect(text.contains("  flagged:     1.0 s after detach"))
        #expect(text.contains("  baseline:    kept  (b.json:1)"))
        #expect(text.contains("LEAK  Z  (Flow)"))
        #expect(text.contains("STALE BASELINE ENTRY  fingerprint 0123456789abcdef  (b.json:1)"))
        #expect(text.hasSuffix("nodescope check: 1 new leak (1 known, 1 stale baseline entry) — failing\n"))
    }

    @Test func theJUnitReportEscapesAndParses() throws {
        let nasty = ["Root<&>", "\"Quoted\" 'Flow'\u{01}"]
        let xml = ReportJUnit.render(
            .check(
                try outcome([
                    record(nasty, name: "host&<co>"), record(["U"], verdict: .unverified), record(["L"], verdict: .lateRelease),
                ])))
        let parser = XMLParser(data: Data(xml.utf8))
        let collector = AttributeCollector()
        parser.delegate = collector
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")\n\(xml)")
        #expect(collector.testcases.first == "host&<co> Root<&>/\"Quoted\" 'Flow'\u{FFFD}")
        #expect(collector.elements.filter { $0 == "failure" }.count == 1)
        #expect(collector.elements.filter { $0 == "skipped" }.count == 1)
        #expect(xml.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""))
        let empty = ReportJUnit.render(.check(try outcome([])))
        #expect(empty.contains("<testcase classname=\"nodescope\" name=\"no leaks\" time=\"0\"/>"))
    }

    @Test func theJSONReportsParse() throws {
        let result = try outcome([record(["Ünï\"code\"\n", "B\u{7}"]), record(["K"], verdict: .lateRelease)], termination: .signaled(6))
        for text in [ReportJSON.render(result), ReportSARIF.render(.check(result))] {
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "\(text)")
        }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(ReportJSON.render(result).utf8)) as? [String: Any])
        #expect(json["schemaVersion"] as? Int == 5)
        #expect((json["commandResult"] as? [String: Any])?["signalName"] as? String == "SIGABRT")
        #expect(json["exitCode"] as? Int == 134)
        #expect(json["failure"] as? String == "command")
        let leaks = try #require(json["leaks"] as? [[String: Any]])
        #expect(leaks.first?["path"] as? [String] == ["Ünï\"code\"\n", "B\u{7}"])
    }

    @Test func waitStatuses() {
        #expect(CheckTermination(waitStatus: 0) == .exited(0))
        #expect(CheckTermination(waitStatus: 3 << 8) == .exited(3))
        #expect(CheckTermination(waitStatus: 15) == .signaled(15))
        #expect(CheckTermination(waitStatus: 0x80 | 11) == .signaled(11), "a core dump bit does not hide the signal")
    }

    @Test func aReportOfACollectorStatesNoCommandResultAndNoExitCode() throws {
        let report = LeakReport(leaks: [record(["A", "B"]), record(["L"], verdict: .lateRelease)], processes: [], graceNanos: 500_000_000)
        let subject = ReportSubject.collector(report, commandLine: ["nodescope", "leaks", "host"])
        let xml = ReportJUnit.render(subject)
        #expect(xml.contains("<testsuites name=\"nodescope leaks\""))
        #expect(xml.contains("<property name=\"command\" value=\"nodescope leaks host\"/>"))
        #expect(!xml.contains("commandResult"))
        #expect(xml.contains("<property name=\"graceNanos\" value=\"500000000\"/>"))
        #expect(xml.contains("failures=\"1\""))
        let sarif = try #require(
            try JSONSerialization.jsonObject(with: Data(ReportSARIF.render(subject).utf8)) as? [String: Any])
        let run = try #require((sarif["runs"] as? [[String: Any]])?.first)
        let invocation = try #require((run["invocations"] as? [[String: Any]])?.first)
        #expect(invocation["exitCode"] == nil)
        #expect(invocation["commandLine"] as? String == "nodescope leaks host")
        #expect((run["properties"] as? [String: Any])?["exitCode"] == nil)
        let text = ReportText.render(subject, colorful: false)
        #expect(text.hasSuffix("1 leaked, 0 unverified, 1 released late\n"))
        #expect(!text.contains("nodescope check"))
    }
}

private final class AttributeCollector: NSObject, XMLParserDelegate {
    var elements: [String] = []
    var testcases: [String] = []

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        elements.append(elementName)
        if elementName == "testcase" { testcases.append("\(attributes["classname"] ?? "") \(attributes["name"] ?? "")") }
    }

    @Test func aCollectorFailureStillGivesEveryReportWithTheFailureInIt() throws {
        let outcome = CheckOutcome(
            command: ["swift", "test"], termination: .exited(0),
            leaks: [], processes: [], collectorFailure: "cannot read the private collector", baseline: nil, baselineFile: nil,
            baselineOutput: nil, strict: false, graceNanos: 1_000_000_000)
        #expect(outcome.exitCode == 2)
        #expect(outcome.verdictLine.contains("the private collector failed (cannot read the private collector)"))
        let json = try JSONSerialization.jsonObject(with: Data(ReportJSON.render(outcome).utf8)) as? [String: Any]
        #expect(json?["collectorFailure"] as? String == "cannot read the private collector")
        #expect(json?["failure"] as? String == "collector")
        #expect(ReportJUnit.render(.check(outcome)).contains("errors=\"1\""))
        #expect(ReportJUnit.render(.check(outcome)).contains("<error type=\"collector-failure\""))
        #expect(ReportSARIF.render(.check(outcome)).contains("\"executionSuccessful\": false"))
        // The command's own failure still wins.
        var failed = outcome
        failed.termination = .exited(3)
        #expect(failed.exitCode == 3)
    }
}
