import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

@testable import NodescopeReports

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reports of leaks whose nodes carry their attach site and the test they were attached under:
/// a JUnit case per test, SARIF results at the attach site, text and JSON by test.
@Suite(.offTheCooperativePool) struct TestAttributionReportTests {
    static let root = "/repo"

    static func test(_ name: String, line: UInt32) -> TestInfo {
        TestInfo(suite: "LeakyTests", name: name, location: SourceSite(file: "/repo/Tests/LeakyTests/LeakyTests.swift", line: line))
    }

    static func record(_ path: [String], test: TestInfo?, line: UInt32, pid: UInt32 = 7) -> LeakRecord {
        LeakRecord(
            session: SessionID(rawValue: 1), pid: pid, processName: "LeakyPackageTests.xctest", nodeID: UInt64(line), kind: "Flow",
            path: path, aliveObjects: [ObjectInfo(index: 1, role: "context", typeName: "LeakyContext", isAlive: true)],
            detachedAtNanos: 1_000_000_000, flaggedAtNanos: 2_000_000_000, releasedAtNanos: nil, verdict: .leaked,
            fingerprint: LeakFingerprint.fingerprint(path: path, aliveRoles: ["context"]),
            attachSite: SourceSite(file: "/repo/Sources/LeakyApp/AppFlow.swift", line: line), test: test)
    }

    /// Two tests leak the same node (one fingerprint) and a third node leaks outside any test.
    static func outcome() -> CheckOutcome {
        let first = test("leaksThroughAClosure()", line: 10)
        let second = test("leaksThroughACycle()", line: 20)
        var outcome = CheckOutcome(
            command: ["swift", "test"], termination: .exited(0),
            leaks: [
                record(["App", "Profile"], test: first, line: 31),
                record(["App", "Profile"], test: second, line: 31),
                record(["App", "Other"], test: nil, line: 40),
            ],
            processes: [], baseline: nil, baselineFile: nil, baselineOutput: nil, strict: false, graceNanos: 1_000_000_000)
        outcome.report.sourceRoot = root
        return outcome
    }

    @Test func oneLeakOfTwoTestsIsTwoGroups() {
        let groups = Self.outcome().groups
        #expect(groups.map(\.test?.name) == ["leaksThroughAClosure()", "leaksThroughACycle()", nil])
        #expect(Self.outcome().report.testsWithGroups.map(\.test.name) == ["leaksThroughAClosure()", "leaksThroughACycle()"])
    }

    @Test func theTextNamesEachTestAndTheAttachSite() {
        let text = ReportText.render(.check(Self.outcome()), colorful: false)
        #expect(
            text.contains("TEST FAILS  LeakyTests/leaksThroughAClosure()  (Tests/LeakyTests/LeakyTests.swift:10)\n\nLEAK  App › Profile"))
        #expect(text.contains("  test:        LeakyTests/leaksThroughACycle()\n  attached at: Sources/LeakyApp/AppFlow.swift:31\n"))
        #expect(text.contains("NOT UNDER A TEST\n\nLEAK  App › Other"))
    }

    @Test func junitHasACasePerTestFailingWithItsOwnLeak() throws {
        let xml = ReportJUnit.render(.check(Self.outcome()))
        let document = try XMLDocument(data: Data(xml.utf8))
        let cases = try document.nodes(forXPath: "//testcase").compactMap { $0 as? XMLElement }
        #expect(
            cases.map { "\($0.attribute(forName: "classname")?.stringValue ?? "")/\($0.attribute(forName: "name")?.stringValue ?? "")" }
                == ["LeakyTests/leaksThroughAClosure()", "LeakyTests/leaksThroughACycle()", "LeakyPackageTests.xctest/App/Other"])
        let message = try #require(
            (cases[0].elements(forName: "failure").first)?.attribute(forName: "message")?.stringValue)
        #expect(message.hasPrefix("leaked: App/Profile attached at Sources/LeakyApp/AppFlow.swift:31, alive context LeakyContext"))
    }

    @Test func sarifResultsAreAtTheAttachSiteWithTheTestRelated() throws {
        let sarif = ReportSARIF.render(.check(Self.outcome()))
        let log = try #require(try JSONSerialization.jsonObject(with: Data(sarif.utf8)) as? [String: Any])
        let run = try #require((log["runs"] as? [[String: Any]])?.first)
        let bases = run["originalUriBaseIds"] as? [String: [String: Any]]
        #expect(bases?["%SRCROOT%"]?["uri"] as? String == "file:///repo/")
        let results = try #require(run["results"] as? [[String: Any]])
        let physical = try #require(((results[0]["locations"] as? [[String: Any]])?.first)?["physicalLocation"] as? [String: Any])
        let artifact = physical["artifactLocation"] as? [String: Any]
        #expect(artifact?["uri"] as? String == "Sources/LeakyApp/AppFlow.swift")
        #expect(artifact?["uriBaseId"] as? String == "%SRCROOT%")
        #expect((physical["region"] as? [String: Any])?["startLine"] as? Int == 31)
        let related = try #require((results[1]["relatedLocations"] as? [[String: Any]])?.last)
        let testArtifact = (related["physicalLocation"] as? [String: Any])?["artifactLocation"] as? [String: Any]
        #expect(testArtifact?["uri"] as? String == "Tests/LeakyTests/LeakyTests.swift")
        #expect(((related["message"] as? [String: Any])?["text"] as? String)?.hasSuffix("LeakyTests/leaksThroughACycle()") == true)
        try RetainerReportTests.validate(sarif, against: RetainerReportTests.sarifSchema)
    }

    @Test func jsonListsTheTestsAndEachLeaksSiteAndTest() throws {
        let json = ReportJSON.render(Self.outcome())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let tests = try #require(object["tests"] as? [[String: Any]])
        #expect(tests.map { $0["name"] as? String } == ["leaksThroughAClosure()", "leaksThroughACycle()"])
        #expect(tests.map { $0["leaks"] as? [Int] } == [[0], [1]])
        let leak = try #require((object["leaks"] as? [[String: Any]])?.first)
        #expect((leak["attachSite"] as? [String: Any])?["relativePath"] as? String == "Sources/LeakyApp/AppFlow.swift")
        #expect((leak["test"] as? [String: Any])?["suite"] as? String == "LeakyTests")
        try RetainerReportTests.validate(
            json, against: RetainerReportTests.repositoryRoot.appendingPathComponent("docs/check-report.schema.json"))
    }
}
