import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// `nodescope check` as CI runs it: real `nodescope`, real hosts (sample-nodes, test-host, a
/// shell, `swift test` on a fixture package), real reports.
@Suite("nodescope check end to end", .serialized, .offTheCooperativePool)
struct CheckEndToEndTests {
    private let testHost = CheckRunner.binary("test-host")
    private let sample = CheckRunner.binary("sample-nodes")

    /// The JSON report as a dictionary.
    private func report(_ file: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: file)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func leaks(_ report: [String: Any]) -> [[String: Any]] {
        report["leaks"] as? [[String: Any]] ?? []
    }

    /// The fingerprint of test-host exit-after-detach's leak: Root/Leak with its context and worker
    /// alive, each held through the global array `leakedContexts` (its suspect hop, the element's
    /// index left out).
    private let leakFingerprint = String(
        format: "%016llx",
        LeakFingerprint.fnv1a64(
            "Root/Leak|context,worker|context=test_host.leakedContexts:[],worker=test_host.leakedContexts:[]"
                .utf8))

    // MARK: 1. A sample with and without an injected leak

    @Test func aSampleWithAnInjectedLeakFailsAndWritesEveryReport() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (json, junit, sarif, svg) = (
            directory.appendingPathComponent("r.json"), directory.appendingPathComponent("r.xml"),
            directory.appendingPathComponent("r.sarif"), directory.appendingPathComponent("svg")
        )
        let run = try CheckRunner.check([
            "--json", json.path, "--junit", junit.path, "--sarif", sarif.path, "--svg-dir", svg.path,
            "--", sample, "--leak", "retain-cycle", "--quiet",
        ])
        #expect(run.status == 1, "stderr:\n\(run.stderr)")
        #expect(run.stderr.contains("LEAK  "))
        #expect(run.stderr.contains("— failing"))

        let result = try report(json)
        #expect(result["result"] as? String == "fail")
        #expect(result["failure"] as? String == "leaks")
        #expect(result["exitCode"] as? Int == 1)
        let leaked = leaks(result).filter { $0["verdict"] as? String == "leaked" }
        #expect(!leaked.isEmpty)
        #expect(leaked.allSatisfy { $0["known"] as? Bool == false && $0["fails"] as? Bool == true })
        #expect(
            leaked.contains { leak in
                (leak["aliveObjects"] as? [[String: Any]] ?? []).contains { $0["role"] as? String == "context" }
            }, "a retain cycle through the context leaves the context alive")

        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.contains("<failure"))
        let sarifText = try String(contentsOf: sarif, encoding: .utf8)
        #expect(sarifText.contains("\"ruleId\": \"node-leak\""))
        for leak in leaked {
            let fingerprint = try #require(leak["fingerprint"] as? String)
            let file = svg.appendingPathComponent("leak-\(fingerprint).svg")
            let drawing = try String(contentsOf: file, encoding: .utf8)
            #expect(drawing.contains("<svg"))
            #expect(drawing.contains(try #require((leak["path"] as? [String])?.last)))
        }
    }

    @Test func theSameSampleWithoutTheLeakPasses() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("r.json")
        let run = try CheckRunner.check(["--json", json.path, "--", sample, "--quiet"])
        #expect(run.status == 0, "stderr:\n\(run.stderr)")
        #expect(run.stderr.contains("nodescope check: no leaks — passing"))
        let result = try report(json)
        #expect(result["result"] as? String == "pass")
        #expect(leaks(result).isEmpty)
        let processes = result["processes"] as? [[String: Any]] ?? []
        #expect(processes.count == 1)
        #expect(processes.first?["endedNormally"] as? Bool == true)
    }

    // MARK: 2. Baselines

    @Test func aWrittenBaselineMakesTheLeakKnownAndAnExtraEntryIsStale() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let baseline = directory.appendingPathComponent("baseline.json")
        let written = try CheckRunner.check(["--quiet", "--write-baseline", baseline.path, "--", testHost, "exit-after-detach"])
        #expect(written.status == 0, "--write-baseline passes: \(written.stderr)")
        let document = try report(baseline)
        let entries = document["entries"] as? [[String: Any]] ?? []
        #expect(document["version"] as? Int == 1)
        #expect(entries.count == 1)
        #expect(entries.first?["fingerprint"] as? String == leakFingerprint)
        #expect(entries.first?["path"] as? String == "Root/Leak")
        #expect(entries.first?["reason"] as? String == "TODO: explain why this leak is accepted")

        // Used as written, the placeholder is accepted with a warning that names the entry.
        let placeholder = try CheckRunner.check(["--baseline", baseline.path, "--", testHost, "exit-after-detach"])
        #expect(placeholder.status == 0, "\(placeholder.stderr)")
        #expect(placeholder.stderr.contains("warning: \(baseline.path):4: fingerprint \(leakFingerprint)"), "\(placeholder.stderr)")
        #expect(placeholder.stderr.contains("has no reason yet"))

        // Give the entry a reason and add one for a leak that does not happen.
        try """
        {
          "version": 1,
          "entries": [
            { "fingerprint": "\(leakFingerprint)", "path": "Root/Leak", "reason": "the test host keeps it on purpose" },
            { "fingerprint": "0123456789abcdef", "reason": "fixed in 2.0" }
          ]
        }
        """.write(to: baseline, atomically: true, encoding: .utf8)
        let json = directory.appendingPathComponent("r.json")
        let run = try CheckRunner.check(["--baseline", baseline.path, "--json", json.path, "--", testHost, "exit-after-detach"])
        #expect(run.status == 0, "stderr:\n\(run.stderr)")
        #expect(!run.stderr.contains("has no reason yet"))
        #expect(run.stderr.contains("KNOWN LEAK  Root › Leak"))
        #expect(run.stderr.contains("STALE BASELINE ENTRY  fingerprint 0123456789abcdef"))
        #expect(run.stderr.contains("no new leaks (1 known, 1 stale baseline entry) — passing"))
        let result = try report(json)
        let leak = try #require(leaks(result).first)
        #expect(leak["known"] as? Bool == true)
        #expect(leak["baselineReason"] as? String == "the test host keeps it on purpose")
        #expect(leak["baselineLine"] as? Int == 4)
        let stale = result["staleBaselineEntries"] as? [[String: Any]] ?? []
        #expect(stale.map { $0["fingerprint"] as? String } == ["0123456789abcdef"])
        #expect(result["result"] as? String == "pass")
    }

    @Test(arguments: ["**/Leak", "Root/*", "Root/Le?k"])
    func aPathGlobMakesTheLeakKnown(_ glob: String) throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let baseline = directory.appendingPathComponent("baseline.json")
        try """
        {"version": 1, "entries": [
          {"path": "\(glob)", "reason": "accepted by path"},
          {"path": "**/LegacyFlow", "reason": "gone"}
        ]}
        """.write(to: baseline, atomically: true, encoding: .utf8)
        let json = directory.appendingPathComponent("r.json")
        let run = try CheckRunner.check(["--quiet", "--baseline", baseline.path, "--json", json.path, "--", testHost, "exit-after-detach"])
        #expect(run.status == 0, "stderr:\n\(run.stderr)")
        let result = try report(json)
        #expect(leaks(result).map { $0["known"] as? Bool } == [true])
        #expect((result["staleBaselineEntries"] as? [[String: Any]])?.map { $0["path"] as? String } == ["**/LegacyFlow"])
    }

    @Test func aMalformedBaselineIsAUsageErrorThatNamesTheLine() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let baseline = directory.appendingPathComponent("baseline.json")
        try "{\n  \"version\": 1,\n  \"entries\": [\n    {\"path\": \"**/Leak\"}\n  ]\n}\n".write(
            to: baseline, atomically: true, encoding: .utf8)
        let run = try CheckRunner.check(["--baseline", baseline.path, "--", "/bin/sh", "-c", "echo RAN"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("bad baseline \(baseline.path):4:5: entries[0] has no \"reason\""), "\(run.stderr)")
        #expect(!run.stdout.contains("RAN"), "the command does not run with a bad baseline")
    }

    // MARK: 3. The command's own failure

    @Test func aFailingCommandsStatusPassesThrough() throws {
        let run = try CheckRunner.check(["--", "/bin/sh", "-c", "exit 3"])
        #expect(run.status == 3)
        #expect(run.stderr.contains("the command failed with exit status 3; exiting 3"))
    }

    @Test func aCommandKilledByASignalIsReportedAsSuch() throws {
        let run = try CheckRunner.check(["--", "/bin/sh", "-c", "kill -TERM $$"])
        #expect(run.status == 143)
        #expect(run.stderr.contains("the command was killed by SIGTERM (signal 15); exiting 143"), "\(run.stderr)")
        let quiet = try CheckRunner.check(["--quiet", "--", "/bin/sh", "-c", "kill -TERM $$"])
        #expect(quiet.status == 143)
        #expect(quiet.stderr.contains("killed by SIGTERM (signal 15)"), "--quiet still says why: \(quiet.stderr)")
    }

    @Test func sigtermToCheckIsForwardedToTheCommand() throws {
        let check = try ChildProcess("nodescope", ["check", "--quiet", "--", testHost, "serve", "30"])
        defer { check.stop() }
        #expect(check.waitForLine(prefix: "DETACHED", seconds: 20) != nil)
        Thread.sleep(forTimeInterval: 0.2)
        check.signal(SIGTERM)
        // test-host stops cleanly on SIGTERM, and its leaked "Leaky" node fails the gate.
        #expect(check.waitForExit(seconds: 20) == 1)
        #expect(check.stdout.contains("STOPPING"))
    }

    @Test func usageErrorsAreExitTwo() throws {
        #expect(try CheckRunner.check([]).status == 2)
        #expect(try CheckRunner.check(["--", "/no/such/command"]).stderr.contains("cannot run /no/such/command: no such file"))
        #expect(try CheckRunner.check(["--json", "/no/such/dir/r.json", "--", "true"]).status == 2)
        let missing = try CheckRunner.check(["--baseline", "/no/such/baseline.json", "--", "true"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no such file"))
    }

    // MARK: 4. A leak made just before a normal exit

    @Test func aLeakJustBeforeANormalExitIsCaught() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (json, junit) = (directory.appendingPathComponent("r.json"), directory.appendingPathComponent("r.xml"))
        let run = try CheckRunner.check(["--json", json.path, "--junit", junit.path, "--", testHost, "exit-after-detach"])
        #expect(run.status == 1, "stderr:\n\(run.stderr)")
        let result = try report(json)
        let found = leaks(result)
        #expect(found.map { $0["pathText"] as? String } == ["Root/Leak"], "Late is released within the grace")
        #expect(found.first?["verdict"] as? String == "leaked")
        #expect(found.first?["fingerprint"] as? String == leakFingerprint)
        #expect((result["processes"] as? [[String: Any]])?.first?["endedNormally"] as? Bool == true)

        // 5a. The JUnit report parses with a real XML parser and has the failure.
        let parser = try #require(XMLParser(contentsOf: junit))
        let elements = JUnitElements()
        parser.delegate = elements
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        #expect(elements.names.contains("testsuite"))
        #expect(
            elements.failures == [
                "leaked: attached at Tests/Support/TestHost/main.swift:36, alive context HostContext, worker HostWorker; "
                    + "context: held by test_host.leakedContexts[0]; "
                    + "worker: held by test_host.leakedContexts[0]; fingerprint \(leakFingerprint)"
            ])
        #expect(elements.testcases == ["test-host Root/Leak"])
    }

    // MARK: 5b. Reports against their schemas

    @Test(.enabled(if: jsonSchemaValidatorAvailable, "needs python3 with jsonschema: pip install jsonschema"))
    func theReportsMatchTheirSchemas() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let baseline = directory.appendingPathComponent("baseline.json")
        try """
        {"version": 1, "entries": [{"path": "**/Leak", "reason": "known <&> \\"quoted\\""}, {"path": "Gone", "reason": "stale"}]}
        """.write(to: baseline, atomically: true, encoding: .utf8)
        // The OASIS schema, vendored with the tests.
        let sarifSchema = repositoryRoot.appendingPathComponent("Tests/Support/Schemas/sarif-schema-2.1.0.json")
        let reportSchema = repositoryRoot.appendingPathComponent("docs/check-report.schema.json")
        for (name, extra) in [("new", [String]()), ("known", ["--baseline", baseline.path])] {
            let json = directory.appendingPathComponent("\(name).json")
            let sarif = directory.appendingPathComponent("\(name).sarif")
            let run = try CheckRunner.check(
                ["--quiet", "--json", json.path, "--sarif", sarif.path] + extra + ["--", testHost, "exit-after-detach"])
            #expect(run.status == (name == "new" ? 1 : 0), "\(run.stderr)")
            #expect(try validate(json, against: reportSchema) == nil)
            #expect(try validate(sarif, against: sarifSchema) == nil)
            let text = try String(contentsOf: sarif, encoding: .utf8)
            #expect(text.contains("\"nodescopeFingerprint/v1\": \"\(leakFingerprint)\""))
            #expect(text.contains(name == "new" ? "\"level\": \"error\"" : "\"level\": \"note\""))
            #expect(text.contains("\"fullyQualifiedName\": \"Root/Leak\""))
        }
    }

    // MARK: 6. swift test on a fixture package

    @Test(.timeLimit(.minutes(20)))
    func swiftTestOnTheFixturePackageCatchesItsOneLeakyTest() throws {
        let package = repositoryRoot.appendingPathComponent("Tests/Fixtures/LeakyPackage").path
        // Persistent across runs (and within a CI run), so only the first build is slow.
        let scratch = fixtureScratch
        let command = ["--", "swift", "test", "--package-path", package, "--scratch-path", scratch, "--filter", "LeakyAppTests"]
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("leaky.json")
        let leaky = try withFixtureScratch { try CheckRunner.check(["--json", json.path] + command, seconds: 280) }
        #expect(leaky.status == 1, "stdout:\n\(leaky.stdout)\nstderr:\n\(leaky.stderr)")
        #expect(leaky.stdout.contains("Test run with 4 tests"), "every test of the fixture ran and passed")
        let result = try report(json)
        let found = leaks(result).filter { $0["verdict"] as? String == "leaked" }
        #expect(found.map { $0["pathText"] as? String } == ["AppFlow/ProfileFlow"], "\(leaky.stderr)")
        #expect(found.first?["processName"] as? String == "LeakyPackagePackageTests.xctest")

        let clean = try withFixtureScratch {
            try CheckRunner.check(["--json", json.path] + command, environment: ["LEAKY_FIXTURE_CLEAN": "1"], seconds: 280)
        }
        #expect(clean.status == 0, "stdout:\n\(clean.stdout)\nstderr:\n\(clean.stderr)")
        #expect(leaks(try report(json)).isEmpty)
    }
}

/// Collects what the JUnit report holds.
private final class JUnitElements: NSObject, XMLParserDelegate {
    var names: [String] = []
    var failures: [String] = []
    var testcases: [String] = []

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        names.append(elementName)
        if elementName == "failure" { failures.append(attributes["message"] ?? "") }
        if elementName == "testcase" { testcases.append("\(attributes["classname"] ?? "") \(attributes["name"] ?? "")") }
    }
}

/// Whether python3 with jsonschema is here to validate the reports.
let jsonSchemaValidatorAvailable: Bool = {
    (try? CheckRunner.run("/usr/bin/env", ["python3", "-c", "import jsonschema"]).status) == 0
}()
