import Foundation
import ProcessTestSupport
import Testing

/// A node written as the Nodes framework's code generator renders it (its Stencil templates, the
/// "Custom" UI framework), with its generated tests, in a package of its own that depends on
/// this one with only the Combine trait (Tests/Fixtures/GeneratedNodePackage): `nodescope check`
/// gates its `swift test`, leaking and clean.
@Suite("a generated-shape node under nodescope check", .serialized, .offTheCooperativePool)
struct GeneratedNodeTests {
    private let package = repositoryRoot.appendingPathComponent("Tests/Fixtures/GeneratedNodePackage")
    /// Persistent across runs (and within a CI run), so only the first build is slow.
    private let scratch = "/tmp/nodescope-generated-fixture-build"

    private var command: [String] {
        ["--", "swift", "test", "--package-path", package.path, "--scratch-path", scratch]
    }

    /// The JSON report as a dictionary.
    private func report(_ file: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: file)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The line of the root flow's `attach(starting:)` of the Account node.
    private func accountAttachLine() throws -> Int {
        let source = try String(
            contentsOf: package.appendingPathComponent("Sources/GeneratedApp/Root/RootFlow.swift"), encoding: .utf8)
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let index = try #require(lines.firstIndex { $0.contains("attach(starting: flow)") })
        return index + 1
    }

    @Test(.timeLimit(.minutes(10)))
    func theLeakyAccountNodeFailsTheGateUnderItsTest() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("generated.json")
        let run = try CheckRunner.check(
            ["--json", json.path] + command, environment: ["GENERATED_FIXTURE_LEAK": "1"], seconds: 560)
        #expect(run.status == 1, "stdout:\n\(run.stdout)\nstderr:\n\(run.stderr)")
        #expect(run.stdout.contains("Executed 15 tests, with 0 failures"), "every generated test ran and passed")

        let leaks = try #require(try report(json)["leaks"] as? [[String: Any]])
        let found = leaks.filter { $0["verdict"] as? String == "leaked" }
        try #require(found.count == 1, "\(run.stderr)")
        let leak = found[0]
        #expect(leak["pathText"] as? String == "RootFlow/AccountFlow")
        #expect(leak["processName"] as? String == "GeneratedNodePackagePackageTests.xctest")
        let alive = (leak["aliveObjects"] as? [[String: Any]] ?? []).compactMap { $0["typeName"] as? String }
        #expect(alive.contains("AccountContextImp"))
        let site = try #require(leak["attachSite"] as? [String: Any])
        #expect(
            site["relativePath"] as? String == "Tests/Fixtures/GeneratedNodePackage/Sources/GeneratedApp/Root/RootFlow.swift")
        #expect(site["line"] as? Int == (try accountAttachLine()))
        let test = try #require(leak["test"] as? [String: Any])
        #expect(test["suite"] as? String == "GeneratedAppLifecycleTests")
        #expect(test["name"] as? String == "testOpeningAndClosingTheAccount")

        // The text report says the same, with the cycle through the Combine sink.
        #expect(run.stderr.contains("TEST FAILS  GeneratedAppLifecycleTests/testOpeningAndClosingTheAccount"))
        #expect(run.stderr.contains("attached at: Tests/Fixtures/GeneratedNodePackage/Sources/GeneratedApp/Root/RootFlow.swift:"))
        #expect(run.stderr.contains("retain cycle: AccountContextImp"))
    }

    @Test(.timeLimit(.minutes(10)))
    func withoutTheLeakTheGatePassesWithTheGeneratedTests() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("generated.json")
        let run = try CheckRunner.check(["--json", json.path] + command, seconds: 560)
        #expect(run.status == 0, "stdout:\n\(run.stdout)\nstderr:\n\(run.stderr)")
        #expect(run.stdout.contains("Executed 15 tests, with 0 failures"), "every generated test ran and passed")
        for name in [
            "AccountBuilderTests.testCreate", "AccountContextTests.testActivation", "AccountFlowTests.testNotNil",
            "AccountPluginTests.testOverride", "AccountSessionWorkerTests.testWorking",
            "AccountViewControllerTests.testNotNil", "SettingsPluginListTests.testCreateWithKey",
        ] {
            #expect(run.stdout.contains("Test Case '\(name)' passed"), "\(name)")
        }
        #expect((try report(json)["leaks"] as? [[String: Any]])?.isEmpty == true)
    }

    @Test(.timeLimit(.minutes(10)))
    func theFixtureResolvesOnlyTheRuntimeAndTheTestPackages() throws {
        let resolved = package.appendingPathComponent("Package.resolved")
        if !FileManager.default.fileExists(atPath: resolved.path) {
            let run = try CheckRunner.run(
                "/usr/bin/env", ["swift", "package", "resolve", "--package-path", package.path, "--scratch-path", scratch],
                seconds: 300)
            #expect(run.status == 0, "stdout:\n\(run.stdout)\nstderr:\n\(run.stderr)")
        }
        let identities = try resolvedIdentities(of: package)
        // OpenCombine for NodesCombine; Nimble and its two packages for the generated tests.
        #expect(identities == ["opencombine", "nimble", "cwlcatchexception", "cwlpreconditiontesting"])
        for heavy in LightDependencyTests.toolsPackages.union(["swift-crypto"]) {
            #expect(!identities.contains(heavy), "\(heavy) is resolved for an app that uses only the runtime")
        }
    }
}
