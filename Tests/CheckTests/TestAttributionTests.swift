import Foundation
import ProcessTestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Leaks per test, end to end: the fixture package's five marked tests (two leak in different
/// ways, one runs beside them, two are clean), in swift-testing and in XCTest, under
/// `nodescope check` and with the in-test assertion.
@Suite("Leaks per test and per source line", .serialized, .offTheCooperativePool)
struct TestAttributionTests {
    static let package = repositoryRoot.appendingPathComponent("Tests/Fixtures/LeakyPackage").path
    static let scratch = fixtureScratch

    static func swiftTest(filter: String) -> [String] {
        ["swift", "test", "--package-path", package, "--scratch-path", scratch, "--filter", filter]
    }

    /// One `testcase` of a JUnit report: its class, its name, and its failure's message if it failed.
    struct JUnitCase: Equatable {
        var classname: String
        var name: String
        var failure: String?
    }

    final class JUnitCases: NSObject, XMLParserDelegate {
        var cases: [JUnitCase] = []

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            if elementName == "testcase" {
                cases.append(JUnitCase(classname: attributes["classname"] ?? "", name: attributes["name"] ?? ""))
            }
            if elementName == "failure", !cases.isEmpty { cases[cases.count - 1].failure = attributes["message"] ?? "" }
        }
    }

    static func junitCases(_ file: URL) throws -> [JUnitCase] {
        let parser = try #require(XMLParser(contentsOf: file))
        let collected = JUnitCases()
        parser.delegate = collected
        #expect(parser.parse(), "the JUnit report parses")
        return collected.cases
    }

    /// Runs the marked tests of one framework under check and checks every report.
    func checkReports(filter: String, suite: String, leakingTests: [String: String], allTests: Int) throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (junit, sarif, json) = (
            directory.appendingPathComponent("r.xml"), directory.appendingPathComponent("r.sarif"),
            directory.appendingPathComponent("r.json")
        )
        let run = try withFixtureScratch {
            try CheckRunner.check(
                ["--junit", junit.path, "--sarif", sarif.path, "--json", json.path, "--"] + Self.swiftTest(filter: filter),
                seconds: 280)
        }
        #expect(run.status == 1, "stdout:\n\(run.stdout)\nstderr:\n\(run.stderr)")

        // JUnit: exactly the leaking tests fail, each with its own leak; the clean ones pass.
        let cases = try Self.junitCases(junit)
        #expect(cases.count == allTests, "\(cases)")
        #expect(cases.allSatisfy { $0.classname == suite }, "\(cases)")
        let failing = cases.filter { $0.failure != nil }
        #expect(Set(failing.map(\.name)) == Set(leakingTests.keys), "\(cases)")
        for failed in failing {
            let node = try #require(leakingTests[failed.name])
            #expect(failed.failure?.contains("leaked: AppFlow/\(node) attached at Tests/Fixtures/LeakyPackage/Sources/") == true)
            for other in leakingTests.values where other != node {
                #expect(failed.failure?.contains(other) == false, "\(failed.name) fails with its own leak only")
            }
        }

        // SARIF: valid 2.1.0, each result at its attach site's file and line.
        let schema = repositoryRoot.appendingPathComponent("Tests/Support/Schemas/sarif-schema-2.1.0.json")
        if let problem = try validate(sarif, against: schema) { Issue.record("SARIF: \(problem)") }
        let log = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: sarif)) as? [String: Any])
        let results = try #require(((log["runs"] as? [[String: Any]])?.first)?["results"] as? [[String: Any]])
        #expect(results.count == leakingTests.count)
        for result in results {
            let physical = ((result["locations"] as? [[String: Any]])?.first)?["physicalLocation"] as? [String: Any]
            let uri = (physical?["artifactLocation"] as? [String: Any])?["uri"] as? String
            #expect(uri?.hasPrefix("Tests/Fixtures/LeakyPackage/Sources/LeakyApp/") == true, "\(result)")
            #expect(((physical?["region"] as? [String: Any])?["startLine"] as? Int ?? 0) > 0)
            let related = (result["relatedLocations"] as? [[String: Any]])?.last
            #expect(((related?["message"] as? [String: Any])?["text"] as? String)?.contains(suite) == true)
        }

        // JSON: every test, the leaking ones failing; valid against its schema.
        if let problem = try validate(json, against: repositoryRoot.appendingPathComponent("docs/check-report.schema.json")) {
            Issue.record("JSON: \(problem)")
        }
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        let tests = try #require(report["tests"] as? [[String: Any]])
        #expect(tests.count == allTests)
        #expect(Set(tests.filter { $0["fails"] as? Bool == true }.compactMap { $0["name"] as? String }) == Set(leakingTests.keys))

        // Text: the tests are named.
        for name in leakingTests.keys { #expect(run.stderr.contains("TEST FAILS  \(suite)/\(name)"), "\(run.stderr)") }
    }

    @Test(.enabled(if: jsonSchemaValidatorAvailable, "needs python3 with jsonschema: pip install jsonschema"), .timeLimit(.minutes(20)))
    func swiftTestingTestsFailWithTheirOwnLeaks() throws {
        try checkReports(
            filter: "AttributedTests", suite: "AttributedTests",
            leakingTests: ["leaksTheProfile()": "ProfileFlow", "leaksTheNotesThroughACycle()": "NotesFlow"], allTests: 5)
    }

    @Test(.enabled(if: jsonSchemaValidatorAvailable, "needs python3 with jsonschema: pip install jsonschema"), .timeLimit(.minutes(20)))
    func xcTestsFailWithTheirOwnLeaks() throws {
        try checkReports(
            filter: "AttributedXCTests", suite: "AttributedXCTests",
            leakingTests: ["testLeaksTheProfile": "ProfileFlow", "testLeaksTheNotesThroughACycle": "NotesFlow"], allTests: 5)
    }

    @Test(.timeLimit(.minutes(20)))
    func theInTestAssertionFailsExactlyTheLeakingTests() throws {
        let run = try withFixtureScratch {
            try CheckRunner.run(
                "/usr/bin/env", Self.swiftTest(filter: "AttributedTests|AttributedXCTests"),
                environment: ["LEAKY_FIXTURE_ASSERT": "1"], seconds: 280)
        }
        let output = run.stdout + run.stderr
        #expect(run.status != 0, "\(output)")
        // swift-testing
        #expect(output.contains("✘ Test leaksTheProfile() failed"), "\(output)")
        #expect(output.contains("✘ Test leaksTheNotesThroughACycle() failed"), "\(output)")
        #expect(output.contains("✘ Test run with 5 tests in 1 suite failed after"), "\(output)")
        #expect(output.contains("failed after") && output.contains("with 2 issues"), "\(output)")
        #expect(output.contains("retain cycle: NotesContext ─ .onSave ─▶ NotesContext"), "\(output)")
        #expect(output.contains("held by LeakyApp.ActivityCenter.shared ─▶ ActivityCenter ─ .listeners["), "\(output)")
        // XCTest
        #expect(output.contains("Test Case 'AttributedXCTests.testLeaksTheProfile' failed"), "\(output)")
        #expect(output.contains("Test Case 'AttributedXCTests.testLeaksTheNotesThroughACycle' failed"), "\(output)")
        #expect(output.contains("Executed 5 tests, with 2 failures"), "\(output)")
        for clean in ["runsBesideALeak()", "openingAndClosingTheSettings()", "launchingShowsTheHomeScreen()"] {
            #expect(output.contains("✔ Test \(clean) passed"), "\(output)")
        }
    }
}
