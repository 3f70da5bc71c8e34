import Foundation
import ProcessTestSupport
import Testing

/// The retainer analysis end to end: the fixture `leak-ways` (Tests/Fixtures/LeakyPackage) leaks
/// a node in six ways, and `nodescope check` names each holder, hop by hop, with its kind.
@Suite("Why each node of leak-ways leaked", .serialized, .offTheCooperativePool)
struct LeakWaysTests {
    /// One hop as the JSON report has it: `holder ─ reference ─▶`.
    struct Hop: Equatable, CustomStringConvertible {
        var kind: String
        var holder: String
        var reference: String
        var description: String { "\(kind) \(holder) \(reference)" }
    }

    /// The verdict and hops of each leaked node's context (of its flow, for the global way), by
    /// the node's path.
    static let expected: [String: (verdict: String, hops: [Hop], suspect: Int?)] = [
        "WaysFlow/WayFlow<CycleContext>": (
            "cycle",
            [
                Hop(kind: "detachedNodeObject", holder: "CycleContext", reference: ".partner"),
                Hop(kind: "object", holder: "Partner", reference: ".context"),
            ], 1
        ),
        "WaysFlow/WayFlow<ClosureContext>": (
            "holder", [Hop(kind: "attachedNodeObject", holder: "WaysContext", reference: ".callbacks[0]")], 0
        ),
        "WaysFlow/WayFlow<DictionaryContext>": (
            "holder", [Hop(kind: "attachedNodeObject", holder: "WaysContext", reference: ".cache[\"profile\"]")], 0
        ),
        "WaysFlow/WayFlow<SingletonContext>": (
            "holder",
            [
                Hop(kind: "global", holder: "leak_ways.ActivityCenter.shared", reference: ""),
                Hop(kind: "object", holder: "ActivityCenter", reference: ".current"),
            ], 1
        ),
        "WaysFlow/WayFlow<StackContext>": (
            "stack", [Hop(kind: "stack", holder: "thread stack", reference: "local in thread \"leak-ways\"")], 0
        ),
        "WaysFlow/WayFlow<GlobalContext>": (
            "global", [Hop(kind: "global", holder: "leak_ways.leftover", reference: "")], 0
        ),
    ]

    @Test(.timeLimit(.minutes(20)))
    func checkNamesTheHolderOfEachWay() throws {
        let package = repositoryRoot.appendingPathComponent("Tests/Fixtures/LeakyPackage").path
        // The same scratch path as the fixture's `swift test`: only the first build is slow.
        let scratch = fixtureScratch
        let build = try withFixtureScratch {
            try CheckRunner.run(
                "/usr/bin/env",
                ["swift", "build", "--package-path", package, "--scratch-path", scratch, "--product", "leak-ways"],
                seconds: 280)
        }
        #expect(build.status == 0, "\(build.stdout)\n\(build.stderr)")

        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("ways.json")
        // A debug build's analysis beside the parallel tests needs more than the default bound (50 ms an
        // object): this test is about the names, not the bound, which RetainerHostileHeapTests tests.
        let run = try CheckRunner.check(
            ["--quiet", "--json", json.path, "--", scratch + "/debug/leak-ways"], environment: ["NODESCOPE_RETAINER_MS": "20000"])
        // Five leaks fail the gate; the node kept by a global is reported apart and not counted.
        #expect(run.status == 1, "\(run.stdout)\n\(run.stderr)")

        let ways = try String(
            contentsOf: URL(fileURLWithPath: package).appendingPathComponent("Sources/LeakWays/Ways.swift"), encoding: .utf8)
        let closureLine = ways.split(separator: "\n", omittingEmptySubsequences: false)
            .firstIndex { $0.contains("root?.callbacks.append { self.count += 1 }") }.map { $0 + 1 }
        let data = try Data(contentsOf: json)
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let leaks = report["leaks"] as? [[String: Any]] ?? []
        #expect(Set(leaks.compactMap { $0["pathText"] as? String }) == Set(Self.expected.keys))
        for leak in leaks {
            let path = leak["pathText"] as? String ?? "?"
            guard let expected = Self.expected[path] else { continue }
            let retainers = leak["retainers"] as? [[String: Any]] ?? []
            // The global way's flow is what the global holds; every other way leaks its context.
            let role = path.hasSuffix("<GlobalContext>") ? "flow" : "context"
            let found = try #require(retainers.first { $0["role"] as? String == role }, "\(path): no path for its \(role)")
            #expect(found["verdict"] as? String == expected.verdict, "\(path)")
            let hops = (found["hops"] as? [[String: Any]] ?? []).map {
                Hop(
                    kind: $0["holderKind"] as? String ?? "", holder: $0["holder"] as? String ?? "",
                    reference: $0["reference"] as? String ?? "")
            }
            #expect(hops == expected.hops, "\(path)")
            #expect(found["suspectHop"] as? Int == expected.suspect, "\(path)")
            #expect((leak["retainedByGlobal"] as? Bool) == (expected.verdict == "global"), "\(path)")
            // The package's own closure: named by its symbol and the line that makes it.
            if path.hasSuffix("<ClosureContext>") {
                let closure = found["suspectClosure"] as? [String: Any]
                #expect(closure?["symbol"] as? String == "closure #1 in ClosureContext.didBecomeActive()", "\(found)")
                #expect((closure?["file"] as? String)?.hasSuffix("Sources/LeakWays/Ways.swift") == true, "\(found)")
                #expect(closure?["line"] as? Int == closureLine, "\(found)")
            }
        }
    }
}
