import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

extension SamplesTests {
    /// The samples of the other seed architectures, run against a real collector: each reports its
    /// tree through the generic tracking API, and injects one real leak when asked.
    @Suite("RIBs, VIPER, BFG and modules")
    struct GenericSamples {
        /// What one sample must show, at rest and with its leak.
        struct Expectation: Sendable, CustomTestStringConvertible {
            let sample: String
            /// The tree at rest, as `outline` lines, without a leak.
            let tree: [String]
            /// The line of the leaked node, inserted at `leakLine` of the tree.
            let leakedNode: String
            let leakLine: Int
            let leakPath: [String]
            let leakKind: String
            let leakRoles: [String]
            /// What holds the object with `chainRole`: the retain cycle, hop by hop (`*` is the suspect).
            let chainRole: String
            let chain: String
            /// Where the leaked node was attached: a file of the app under `Samples/`, never one
            /// of the framework glue's folder `glue` (whose wrappers forward their callers' site),
            /// at a line that holds `siteCall`.
            let siteFile: String
            let siteCall: String
            let glue: String

            var testDescription: String { sample }
        }

        static let expectations: [Expectation] = [
            Expectation(
                sample: "sample-ribs",
                tree: [
                    "0 Router RootRouter attached [router,interactor,view]",
                    "1 Router LoggedInRouter attached [router,interactor]",
                    "2 Router RequestRouter attached [router,interactor,view]",
                ],
                leakedNode: "2 Router RequestRouter detached [interactor,view]", leakLine: 2,
                leakPath: ["RootRouter", "LoggedInRouter", "RequestRouter"], leakKind: "Router",
                leakRoles: ["interactor", "view"], chainRole: "interactor",
                chain: "holder: LoggedInInteractor .profileStream -> ReplayStream<RiderProfile> .observers[0] * -> closure context capture",
                siteFile: "sample-ribs/LoggedInRIB.swift", siteCall: "attachChild(router)", glue: "RIBs"),
            Expectation(
                sample: "sample-viper",
                tree: [
                    "0 Coordinator AppCoordinator attached [coordinator]",
                    "1 Coordinator HomeCoordinator attached [coordinator]",
                    "2 ViperModule HomeModule attached [presenter,interactor,router,view]",
                    "2 Coordinator ProfileCoordinator attached [coordinator]",
                    "3 ViperModule ProfileDisplayModule attached [presenter,interactor,router,view]",
                ],
                leakedNode: "3 ViperModule ProfileEditModule detached [presenter,interactor,router,view]", leakLine: 5,
                leakPath: ["AppCoordinator", "HomeCoordinator", "ProfileCoordinator", "ProfileEditModule"],
                leakKind: "ViperModule", leakRoles: ["interactor", "presenter", "router", "view"],
                chainRole: "view", chain: "cycle: ProfileEditViewController .presenter -> ProfileEditPresenter .strongView *",
                siteFile: "sample-viper/Coordinators/ProfileCoordinator.swift", siteCall: "push(module)", glue: "VIPER"),
            Expectation(
                sample: "sample-bfg",
                tree: [
                    "0 Feature AppGraph attached [graph,view]",
                    "1 Feature MainWordListGraph attached [graph,view,model,router]",
                    "2 Feature SearchGraph attached [graph,view,model]",
                    "2 Feature SettingsScreen attached [view]",
                ],
                leakedNode: "2 Feature WordDetailsGraph detached [view,viewModel]", leakLine: 3,
                leakPath: ["AppGraph", "MainWordListGraph", "WordDetailsGraph"], leakKind: "Feature",
                leakRoles: ["view", "viewModel"], chainRole: "view",
                chain: "cycle: WordDetailsViewController .viewModel -> WordDetailsViewModel .onChange *",
                siteFile: "sample-bfg/Features/MainWordListRouter.swift", siteCall: "FeatureTree.attach(graph", glue: "BFG"),
            Expectation(
                sample: "sample-modules",
                tree: [
                    "0 Module HomeModule attached [module,view]",
                    "1 Module ProductArrayModule attached [module,view]",
                    "2 Module ProductModule attached [module,view]",
                ],
                leakedNode: "2 Module ProductModule detached [module]", leakLine: 2,
                leakPath: ["HomeModule", "ProductArrayModule", "ProductModule"], leakKind: "Module",
                leakRoles: ["module"], chainRole: "module",
                chain: "cycle: ProductModule .events -> EventStream .handlers[0] * -> closure context capture -> closure context capture",
                siteFile: "sample-modules/Listeners/RoutingEventsListener.swift", siteCall: "router.route(to: .product(",
                glue: "Framework"),
        ]

        @Test(arguments: expectations.map(\.sample))
        func runsAloneQuietlyAndLeavesNothingBehind(_ sample: String) throws {
            let loud = try runAlone(sample, [])
            #expect(loud.status == 0)
            #expect(loud.stdout.hasPrefix("== launched\n"))
            #expect(loud.stdout.hasSuffix("== closed: 0 nodes left\n"))
            #expect(loud.stderr.isEmpty)
            let quiet = try runAlone(sample, ["--quiet", "--hold", "0"])
            #expect(quiet.status == 0)
            #expect(quiet.stdout.isEmpty && quiet.stderr.isEmpty)
            let wrong = try runAlone(sample, ["--leak", "everything"])
            #expect(wrong.status == 2)
            #expect(wrong.stdout.isEmpty)
            #expect(wrong.stderr.hasPrefix("\(sample): unknown leak kind 'everything'; the kinds are: retain-cycle\n"))
        }

        @Test(arguments: expectations)
        func reportsItsTreeAndNoLeak(_ expected: Expectation) throws {
            let harness = try SampleHarness()
            defer { harness.stop() }
            let host = try harness.startHeld(expected.sample)
            defer { host.stop() }

            let tree = try harness.tree(of: host) { outline($0) == expected.tree }
            #expect(tree.processName == expected.sample)
            #expect(outline(tree) == expected.tree)

            harness.waitPastGrace()
            #expect(try harness.leaks(of: host).isEmpty)
            #expect(outline(try harness.tree(of: host)) == expected.tree, "every detached node was released")
            harness.terminate(host)
        }

        @Test(arguments: expectations)
        func reportsItsInjectedLeak(_ expected: Expectation) throws {
            let harness = try SampleHarness()
            defer { harness.stop() }
            let host = try harness.startHeld(expected.sample, ["--leak", "retain-cycle"])
            defer { host.stop() }

            var withGhost = expected.tree
            withGhost.insert(expected.leakedNode, at: expected.leakLine)
            let tree = try harness.tree(of: host) { outline($0) == withGhost }
            #expect(outline(tree) == withGhost)

            harness.waitPastGrace()
            let leaks = try harness.leaks(of: host, until: everyLeakExplained)
            let leak = try #require(leaks.first)
            #expect(leaks.count == 1)
            #expect(leak.verdict == .leaked)
            #expect(leak.processName == expected.sample)
            #expect(leak.kind == expected.leakKind)
            #expect(leak.path == expected.leakPath)
            #expect(aliveRoles(leak) == expected.leakRoles)
            #expect(chain(leak, role: expected.chainRole) == expected.chain)
            expectAppSite(try #require(leak.attachSite), of: expected)
            harness.terminate(host)
        }

        /// `nodescope check --sarif` on a sample's leak: the result's location is the app's line
        /// that attached the leaked RIB, relative to the source root.
        @Test func checksSarifLocatesTheLeakAtTheAppLineThatAttachedIt() throws {
            let expected = try #require(Self.expectations.first { $0.sample == "sample-ribs" })
            let directory = makeScratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let sarif = directory.appendingPathComponent("leaks.sarif")
            let sample = ChildProcess.binDirectory.appendingPathComponent(expected.sample).path
            let check = try ChildProcess(
                "nodescope",
                [
                    "check", "--quiet", "--grace", "\(Int(SampleHarness.grace * 1000))ms", "--sarif", sarif.path,
                    "--source-root", sourceRoot.path, "--", sample, "--leak", "retain-cycle", "--quiet",
                ])
            #expect(check.waitForExit(seconds: 60) == 1, "check passed a leaky run:\n\(check.stderr)")

            let document = try JSONSerialization.jsonObject(with: Data(contentsOf: sarif)) as? [String: Any]
            let runs = document?["runs"] as? [[String: Any]] ?? []
            let results = runs.flatMap { $0["results"] as? [[String: Any]] ?? [] }
            #expect(results.count == 1)
            let physical = results.flatMap { $0["locations"] as? [[String: Any]] ?? [] }
                .compactMap { $0["physicalLocation"] as? [String: Any] }
            let uris = physical.compactMap { ($0["artifactLocation"] as? [String: Any])?["uri"] as? String }
            #expect(uris == ["Samples/\(expected.siteFile)"])
            let line = try #require(physical.first.flatMap { ($0["region"] as? [String: Any])?["startLine"] as? Int })
            let file = sourceRoot.appendingPathComponent("Samples/\(expected.siteFile)").path
            expectAppSite(SourceSite(file: file, line: UInt32(line)), of: expected)
        }
    }
}

/// The repository: three levels above this file.
private let sourceRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Expects `site` to be the app's line that attached the leaked node: the expected file under
/// `Samples/`, outside the framework glue, at a line that makes the expected call.
private func expectAppSite(_ site: SourceSite, of expected: SamplesTests.GenericSamples.Expectation) {
    #expect(site.file.hasSuffix("/Samples/\(expected.siteFile)"), "attached at \(site.file):\(site.line)")
    #expect(!site.file.contains("/\(expected.sample)/\(expected.glue)/"), "the site is the glue's: \(site)")
    let source = (try? String(contentsOfFile: site.file, encoding: .utf8)) ?? ""
    let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
    let line = Int(site.line)
    #expect(
        line >= 1 && lines.count >= line && lines[line - 1].contains(expected.siteCall),
        "\(site) does not make the call \(expected.siteCall)")
}
