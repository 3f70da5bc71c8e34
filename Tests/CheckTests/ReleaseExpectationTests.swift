import Foundation
import NodesTesting
import Testing

private final class PlainContext: AbstractContext<CancellationToken> {}
private final class PlainWorker: AbstractWorker<CancellationToken> {}
private final class PlainFlow: AbstractFlow<PlainContext, HeadlessViewController> {
    let name: String
    init(_ name: String) {
        self.name = name
        super.init(context: PlainContext(workers: [PlainWorker()]), viewController: HeadlessViewController(title: name))
    }
    override var nodeName: String { name }
}

/// Something long-lived that keeps what it is given: how a test makes a leak.
private final class Keeper: @unchecked Sendable {
    // Unchecked because it keeps non-Sendable objects (a flow's context, a view), which is the
    // point of it, and a Mutex would only take them `sending`; `objects` is only touched under `lock`.
    private let lock = NSLock()
    private var objects: [AnyObject] = []

    func keep(_ object: AnyObject) {
        lock.withLock { objects.append(object) }
    }

    func releaseAll() {
        lock.withLock { objects.removeAll() }
    }
}

/// NodesTesting's release expectations, in process: weak references polled in real time.
@Suite struct ReleaseExpectationTests {
    /// A started root flow in a private tracking scope.
    @MainActor private func root(in scope: TrackingScope) -> PlainFlow {
        scope.run {
            let root = PlainFlow("Root")
            root._start()
            return root
        }
    }

    @MainActor @Test func aDetachedNodeIsReleased() async {
        let scope = TrackingScope()
        let root = root(in: scope)
        defer { scope.run { root._end() } }  // ended before it goes, as the framework asserts
        let verdict = await expectReleased(named: "Child") {
            scope.run {
                let child = PlainFlow("Child")
                root.attach(starting: child)
                root.detach(ending: child)
                return [child, child.context]
            }
        }
        #expect(verdict.isReleased, "\(verdict)")
        #expect(verdict.watchedCount == 2)
        #expect(verdict.description.hasPrefix("Child: released (2 objects, within "))
    }

    @MainActor @Test func aNodeWhoseContextIsKeptIsNotAndTheVerdictSaysWhatLives() async {
        let scope = TrackingScope()
        let root = root(in: scope)
        defer { scope.run { root._end() } }  // ended before it goes, as the framework asserts
        let keeper = Keeper()
        let verdict = await expectReleased(named: "Child", within: .milliseconds(100)) {
            scope.run {
                let child = PlainFlow("Child")
                root.attach(starting: child)
                keeper.keep(child.context)
                root.detach(ending: child)
                return [child, child.context] + child.context.workers
            }
        }
        #expect(!verdict.isReleased)
        #expect(verdict.alive.map(\.description) == ["context PlainContext", "worker PlainWorker"], "roles from the tracker")
        #expect(verdict.alive.map(\.node) == ["Child", "Child"])
        #expect(verdict.description == "Child: still alive after 100 ms: context PlainContext, worker PlainWorker")
        _ = keeper
    }

    @MainActor @Test func expectNodeReleasedWatchesTheFlowItsContextWorkersAndView() async {
        let scope = TrackingScope()
        let root = root(in: scope)
        defer { scope.run { root._end() } }  // ended before it goes, as the framework asserts
        let child = scope.run { PlainFlow("Child") }
        scope.run {
            root.attach(starting: child)
            root.detach(ending: child)
        }
        let verdict = await expectNodeReleased(consume child)
        #expect(verdict.isReleased, "\(verdict)")
        #expect(verdict.watchedCount == 4)
        #expect(verdict.name == "Child")
    }

    @MainActor @Test func expectNodeReleasedNamesTheObjectsOfAnUntrackedLeakingNode() async {
        // No tracking scope: the roles come from where the objects were found.
        let keeper = Keeper()
        let flow = PlainFlow("Untracked")
        keeper.keep(flow.viewController)
        let verdict = await expectNodeReleased(consume flow, within: .milliseconds(50), named: "the untracked node")
        #expect(verdict.alive.map(\.description) == ["view HeadlessViewController"])
        #expect(verdict.description == "the untracked node: still alive after 50 ms: view HeadlessViewController of node Untracked")
    }

    @Test func anExpectationWaitsForALateRelease() async {
        let keeper = Keeper()
        let expectation = ReleaseExpectation(
            named: "worker",
            watching: [
                {
                    let worker = PlainWorker()
                    keeper.keep(worker)
                    return worker
                }()
            ])
        #expect(expectation.currentVerdict().isReleased == false)
        // A thread of its own, not a task: under a busy test run the concurrency pool can be
        // taken for seconds by tests that block.
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.03)
            keeper.releaseAll()
        }
        let verdict = await expectation.verdict(within: .seconds(10))
        #expect(verdict.isReleased, "\(verdict)")
        #expect(verdict.waited >= .milliseconds(20))
    }
}
