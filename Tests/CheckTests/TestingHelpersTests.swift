import Foundation
import NodesTesting
import Testing

private final class ScopedContext: AbstractContext<CancellationToken> {}
private final class ScopedFlow: AbstractFlow<ScopedContext, HeadlessViewController> {
    let name: String
    init(_ name: String) {
        self.name = name
        super.init(context: ScopedContext(workers: []), viewController: HeadlessViewController(title: name))
    }
    override var nodeName: String { name }
}

/// Keeps what it is given: how these tests make a leak.
private final class Holder: @unchecked Sendable {
    // Unchecked: it keeps non-Sendable objects on purpose; `objects` is only touched under `lock`.
    private let lock = NSLock()
    private var objects: [AnyObject] = []
    func keep(_ object: AnyObject) { lock.withLock { objects.append(object) } }
}

/// Every documented helper of NodesTesting, on a leak and on a clean case, wherever the flows
/// were built: no helper may pass a leak silently.
@MainActor @Suite struct TestingHelpersTests {
    // MARK: TrackingScope

    @Test func aScopeCatchesALeakOfFlowsBuiltOutsideIt() throws {
        let scope = TrackingScope()
        let holder = Holder()
        let window = HeadlessWindow()
        let app = ScopedFlow("App")  // built outside the scope
        scope.run { window.launch(app) }
        do {
            let child = ScopedFlow("Child")
            app.attach(starting: child)  // outside too: the child reports where its parent does
            holder.keep(child.context)
        }
        app.detach(endingSubFlowsOfType: ScopedFlow.self)
        let leaks = try scope.leaksAfterGrace()
        #expect(leaks.map(\.node) == ["Child"], "\(leaks)")
        #expect(leaks.map(\.typeName) == ["ScopedContext"])
        window.close()
    }

    @Test func aScopeFindsNoLeakWhenEverythingGoes() throws {
        let scope = TrackingScope()
        let window = HeadlessWindow()
        let app = ScopedFlow("App")
        scope.run { window.launch(app) }
        app.attach(starting: ScopedFlow("Child"))
        app.detach(endingSubFlowsOfType: ScopedFlow.self)
        #expect(try scope.leaksAfterGrace().isEmpty)
        window.close()
    }

    @Test func aScopeThatSawNoNodeRefusesToJudge() {
        let scope = TrackingScope()
        let window = HeadlessWindow()
        window.launch(ScopedFlow("App"))  // started outside the scope: it reports elsewhere
        #expect(throws: TrackingScopeError.nothingTracked) { try scope.leaksAfterGrace() }
        #expect(TrackingScopeError.nothingTracked.description.contains("scope.run"))
        window.close()
    }

    @Test func anAsyncScopeBindsAcrossSuspensions() async throws {
        let scope = TrackingScope()
        let window = HeadlessWindow()
        await scope.run {
            try? await Task.sleep(for: .milliseconds(1))
            window.launch(ScopedFlow("App"))
        }
        #expect(scope.attachedNodeCount == 1)
        window.close()
        #expect(try scope.leaksAfterGrace().isEmpty)
    }

    // MARK: Release expectations

    @Test func expectReleasedOfObjectsOnALeakAndOnAClean() async {
        let holder = Holder()
        var kept: ScopedContext? = ScopedContext(workers: [])
        holder.keep(kept!)
        let leaked = await expectReleased([kept.take()!], within: .milliseconds(30), named: "kept")
        #expect(!leaked.isReleased)
        #expect(leaked.description == "kept: still alive after 30 ms: ScopedContext")
        var free: ScopedContext? = ScopedContext(workers: [])
        let released = await expectReleased([free.take()!], within: .milliseconds(30), named: "free")
        #expect(released.isReleased, "\(released)")
    }

    @Test func aReleaseExpectationOfANodeOnALeakAndOnAClean() async {
        let scope = TrackingScope()
        let window = HeadlessWindow()
        let app = ScopedFlow("App")
        scope.run { window.launch(app) }
        let holder = Holder()
        let leaking = ScopedFlow("Leaking")
        app.attach(starting: leaking)
        let leakingExpectation = ReleaseExpectation(node: leaking)
        holder.keep(leaking.viewController)
        app.detach(ending: leaking)
        let clean = ScopedFlow("Clean")
        app.attach(starting: clean)
        let cleanExpectation = ReleaseExpectation(node: clean)
        app.detach(ending: clean)
        _ = consume leaking
        _ = consume clean
        let leaked = await leakingExpectation.verdict(within: .milliseconds(50))
        #expect(leaked.alive.map(\.description) == ["view HeadlessViewController"], "\(leaked)")
        let released = await cleanExpectation.verdict(within: .milliseconds(200))
        #expect(released.isReleased, "\(released)")
        window.close()
    }

    // MARK: The trait

    @Test(.trackingNodes) func theTraitMarksTheTestsNodesAndTheCheckFindsItsLeak() async {
        let test = TestIdentity.current
        #expect(test?.name == "theTraitMarksTheTestsNodesAndTheCheckFindsItsLeak()")
        #expect(test?.suite == "TestingHelpersTests")
        #expect(test?.site?.fileName == "TestingHelpersTests.swift")
        let scope = TrackingScope()
        let holder = Holder()
        do {
            let window = HeadlessWindow()
            let app = ScopedFlow("App")
            scope.run { window.launch(app) }
            let child = ScopedFlow("Child")
            app.attach(starting: child)
            holder.keep(child.context)
            app.detach(ending: child)
            window.close()
        }
        guard let test else { return }
        let leaks = await NodeLeakCheck.leaks(of: test, in: scope.tracker, grace: .milliseconds(20), explaining: false)
        #expect(leaks.map(\.name) == ["Child"])
        #expect(leaks.first?.attachSite?.fileName == "TestingHelpersTests.swift")
        #expect(leaks.first?.description.hasPrefix("Child (attached at TestingHelpersTests.swift:") == true)
        let other = TestIdentity(suite: "Other", name: "sibling()", site: nil)
        #expect(
            await NodeLeakCheck.leaks(of: other, in: scope.tracker, grace: .milliseconds(20)).isEmpty, "a sibling's nodes are not its own")
    }
}
