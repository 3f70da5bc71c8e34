import Foundation
import ProcessTestSupport
import Testing

/// Where to fix: a leak held through a stored closure names the closure by its symbol and its
/// source line, checked against the source itself, in the JSON report, the SARIF report (a
/// related location, valid against the OASIS schema) and the text report.
@Suite("Closures named by their source", .serialized, .offTheCooperativePool)
struct ClosureSitesTests {
    /// A leak whose suspect reference keeps a closure: the program, the closure's name, its
    /// file, and the text of its line (found in the file, so the expected line is never written
    /// down here).
    struct Case: CustomStringConvertible {
        var program: String
        var arguments: [String]
        var symbol: String
        var file: String
        var lineText: String
        var description: String { "\(program) \(arguments.joined(separator: " "))" }
    }

    static let cases: [Case] = [
        Case(
            program: "sample-nodes", arguments: ["--quiet", "--leak", "retain-cycle"],
            symbol: "closure #1 in ProfileContextImp.didBecomeActive()", file: "Samples/sample-nodes/ProfileNode.swift",
            lineText: "session.onChange { user in self.displayName"),
        Case(
            program: "sample-nodes", arguments: ["--quiet", "--leak", "worker"],
            symbol: "closure #1 in SettingsSyncWorker.didStart()", file: "Samples/sample-nodes/SettingsNode.swift",
            lineText: "timer = ticker.scheduledTimer { [self] in"),
        Case(
            program: "sample-nodes", arguments: ["--quiet", "--leak", "subscription"],
            symbol: "closure #1 in DetailContextImp.didBecomeActive()", file: "Samples/sample-nodes/DetailNode.swift",
            lineText: "let observation = feedState.observe { [self] state in"),
        Case(
            program: "sample-modules", arguments: ["--leak", "retain-cycle"],
            symbol: "closure #1 in AnalyticsEventsListener.listenEvents(from:)",
            file: "Samples/sample-modules/Listeners/AnalyticsEventsListener.swift",
            lineText: "module.events.subscribe { [self] event in"),
    ]

    /// The 1-based line of `file` (relative to the repository) that contains `text`.
    static func line(of text: String, in file: String) throws -> Int {
        let source = try String(contentsOf: repositoryRoot.appendingPathComponent(file), encoding: .utf8)
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.contains(text) }, "\(file) has no line with \(text)") + 1
    }

    @Test(arguments: cases)
    func theSuspectsClosureIsNamedWithItsLine(_ leak: Case) throws {
        let expectedLine = try Self.line(of: leak.lineText, in: leak.file)
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("report.json")
        let sarif = directory.appendingPathComponent("report.sarif")
        let pictures = directory.appendingPathComponent("svg")
        let run = try CheckRunner.check(
            [
                "--json", json.path, "--sarif", sarif.path, "--svg-dir", pictures.path, "--source-root", repositoryRoot.path,
                "--", CheckRunner.binary(leak.program),
            ] + leak.arguments,
            environment: ["NODESCOPE_RETAINER_MS": "20000"], seconds: 120)
        #expect(run.status == 1, "\(run.stderr)")

        // JSON: the suspect's closure, with the line of the source.
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        let closures = (report["leaks"] as? [[String: Any]] ?? []).flatMap { ($0["retainers"] as? [[String: Any]]) ?? [] }
            .compactMap { $0["suspectClosure"] as? [String: Any] }
        let closure = try #require(closures.first { $0["symbol"] as? String == leak.symbol }, "\(leak): \(closures)")
        #expect(closure["relativePath"] as? String == leak.file, "\(closure)")
        #expect(closure["line"] as? Int == expectedLine, "\(closure)")

        // Text: the capture or the context is the closure by name, and the line to change.
        let shortFile = (leak.file as NSString).lastPathComponent
        #expect(run.stderr.contains("\(leak.symbol) (\(shortFile):\(expectedLine))"), "\(run.stderr)")
        #expect(run.stderr.contains("change:      \(leak.file):\(expectedLine)  (\(leak.symbol))"), "\(run.stderr)")

        // SVG: the leak's picture says where the closure is made, on the suspect's line.
        let drawings = try FileManager.default.contentsOfDirectory(at: pictures, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "svg" }.map { try String(contentsOf: $0, encoding: .utf8) }
        #expect(
            drawings.contains { $0.contains("made at \(shortFile):\(expectedLine)") },
            "\(leak): no picture says made at \(shortFile):\(expectedLine)")

        // SARIF: the line to change as a related location, annotated on the file.
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: sarif)) as? [String: Any])
        let results = ((document["runs"] as? [[String: Any]])?.first?["results"] as? [[String: Any]]) ?? []
        let related = results.flatMap { ($0["relatedLocations"] as? [[String: Any]]) ?? [] }
        let toChange = related.filter { (($0["message"] as? [String: Any])?["text"] as? String ?? "").contains("the line to change") }
        let physical = try #require(toChange.first?["physicalLocation"] as? [String: Any], "\(related)")
        #expect((physical["artifactLocation"] as? [String: Any])?["uri"] as? String == leak.file)
        #expect((physical["region"] as? [String: Any])?["startLine"] as? Int == expectedLine)
        if let complaint = try? validate(
            sarif, against: repositoryRoot.appendingPathComponent("Tests/Support/Schemas/sarif-schema-2.1.0.json"))
        {
            Issue.record("the SARIF report is not valid: \(complaint)")
        }
        if let complaint = try? validate(json, against: repositoryRoot.appendingPathComponent("docs/check-report.schema.json")) {
            Issue.record("the JSON report is not valid: \(complaint)")
        }
    }
}
