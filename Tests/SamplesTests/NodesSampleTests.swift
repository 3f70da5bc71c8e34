import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

extension SamplesTests {
    /// sample-nodes, the app on the Nodes runtime, run against a real collector: its tree, each of
    /// its four injected leaks, and a tree scaled up with `--nodes`.
    @Suite("sample-nodes")
    struct NodesSample {
        /// The tree where the sample rests: logged in again, with its three tabs.
        static let restingTree = [
            "0 Flow AppFlow attached [flow,context,view]",
            "1 Flow LoggedInFlow attached [flow,context,worker,view]",
            "2 Flow FeedFlow attached [flow,context,worker,view]",
            "2 Flow ProfileFlow attached [flow,context,view]",
            "2 Flow SettingsFlow attached [flow,context,worker,view]",
        ]

        /// Each leak kind: the path of the node it leaks, the objects that stay alive, and what
        /// holds one of them (`chain`: the hops from an attached node's object or a global to it,
        /// the suspect marked `*`).
        struct LeakCase: Sendable, CustomTestStringConvertible {
            let kind: String
            let path: [String]
            let roles: [String]
            let role: String
            let chain: String
            var testDescription: String { kind }
        }

        static let component = "sample_nodes.component  -> AppComponent .sharedInstances"
        static let leakCases = [
            LeakCase(
                kind: "retain-cycle", path: ["AppFlow", "LoggedInFlow", "ProfileFlow"], roles: ["context"], role: "context",
                chain: "holder: LoggedInContextImp .session -> Session .listeners[0] * -> closure context capture"),
            LeakCase(
                kind: "worker", path: ["AppFlow", "LoggedInFlow", "SettingsFlow"], roles: ["context", "view", "worker"],
                role: "worker",
                chain: "holder: SettingsSyncWorker .ticker -> Ticker .timers[0] * -> Timer .block -> closure context capture"),
            // The observation's closure sits in the feed state's observers: the cancellable that
            // would remove it is in `Session.cancellables`, where nothing cancels it.
            LeakCase(
                kind: "subscription", path: ["AppFlow", "LoggedInFlow", "FeedFlow", "DetailFlow"], roles: ["context"],
                role: "context",
                chain:
                    "holder: FeedContextImp .state -> ObservableState<FeedState> .observers[0] * -> closure context capture"),
            LeakCase(
                kind: "view", path: ["AppFlow", "LoggedInFlow", "FeedFlow", "DetailFlow", "ShareFlow"], roles: ["view"],
                role: "view", chain: "holder: \(component)[\"analytics\"] -> Analytics .pendingScreens[0] *"),
        ]

        @Test func reportsItsTreeAndNoLeak() throws {
            let harness = try SampleHarness()
            defer { harness.stop() }
            let host = try harness.startHeld("sample-nodes")
            defer { host.stop() }
            #expect(host.stdout.contains("== logged in, reading a post, sharing it"))

            let tree = try harness.tree(of: host) { outline($0) == Self.restingTree }
            #expect(tree.processName == "sample-nodes")
            #expect(outline(tree) == Self.restingTree)

            harness.waitPastGrace()
            #expect(try harness.leaks(of: host).isEmpty)
            #expect(outline(try harness.tree(of: host)) == Self.restingTree, "every detached node was released")
            harness.terminate(host)
        }

        @Test(arguments: leakCases)
        func reportsEachInjectedLeak(_ expected: LeakCase) throws {
            let harness = try SampleHarness()
            defer { harness.stop() }
            let host = try harness.startHeld("sample-nodes", ["--leak", expected.kind])
            defer { host.stop() }

            harness.waitPastGrace()
            let leaks = try harness.leaks(of: host, until: everyLeakExplained)
            let leak = try #require(leaks.first)
            #expect(leaks.count == 1)
            #expect(leak.verdict == .leaked)
            #expect(leak.kind == "Flow")
            #expect(leak.path == expected.path)
            #expect(aliveRoles(leak) == expected.roles)
            // The host said what holds it, hop by hop.
            #expect(chain(leak, role: expected.role) == expected.chain)

            // The ghost hangs under its former parent (or a placeholder for it) in the tree.
            let tree = try harness.tree(of: host)
            let ghost = try #require(tree.nodes.first { $0.id == leak.nodeID })
            #expect(ghost.status == .leaked)
            #expect(ghost.depth == expected.path.count - 1)
            #expect(outline(tree).filter { $0.contains(" attached ") } == Self.restingTree)
            harness.terminate(host)
        }

        @Test func scalesTheTreeWithNodes() throws {
            let harness = try SampleHarness()
            defer { harness.stop() }
            let host = try harness.startHeld("sample-nodes", ["--nodes", "500"])
            defer { host.stop() }

            let tree = try harness.tree(of: host) { $0.nodes.count >= 500 }
            let items = tree.nodes.filter { $0.name == "FeedItemFlow" }
            #expect(items.count == 500)
            #expect(items.allSatisfy { $0.depth == 4 && $0.status == .active })
            #expect(tree.nodes.filter { $0.name == "FeedSectionFlow" }.count == 10)
            #expect(tree.nodes.count == Self.restingTree.count + 10 + 500)
            harness.terminate(host)
        }

        @Test func refusesAnUnknownOptionWithStatus2() throws {
            let run = try runAlone("sample-nodes", ["--frobnicate"])
            #expect(run.status == 2)
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.hasPrefix("sample-nodes: unknown option '--frobnicate'\n"))
            #expect(run.stderr.contains("usage: sample-nodes [options]"))
            let notANumber = try runAlone("sample-nodes", ["--nodes", "many"])
            #expect(notANumber.status == 2)
            #expect(notANumber.stderr.hasPrefix("sample-nodes: --nodes needs a whole number from 1 to 10000000, not 'many'\n"))
        }

        @Test func runsItsScriptAndExitsWithNothingLeft() throws {
            let run = try runAlone("sample-nodes", [])
            #expect(run.status == 0)
            #expect(run.stderr.isEmpty)
            let output = run.stdout
            for step in ["== launched", "== logged in, reading a post, sharing it", "== logged out", "== logged in again"] {
                #expect(output.contains(step + "\n"), "\(step) in\n\(output)")
            }
            #expect(output.contains("      Flow DetailFlow [active] {flow,context,view}"))
            #expect(output.hasSuffix("== closed: 0 nodes left\n"))
        }
    }
}
