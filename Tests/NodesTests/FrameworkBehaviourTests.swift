import Nodes
import NodesTesting
import Testing

/// A flow named as the framework's generator names them.
private final class ProfileFlowImp: AbstractFlow<TestContext, HeadlessViewController> {}

/// Behaviour the Nodes framework specifies and its users rely on: worker order, started state,
/// the lookups, the tree, leak detection of single objects, and the assertions of debug builds.
@MainActor
@Suite("The Nodes framework's behaviour")
struct FrameworkBehaviourTests {
    @Test func workersStartAndStopInTheirOrder() {
        let log = HookLog()
        let context = TestContext("C", log: log, workers: [TestWorker("1", log: log), TestWorker("2", log: log)])
        context.activate()
        context.deactivate()
        #expect(
            log.entries == [
                "C context active", "1 worker start", "2 worker start", "1 worker stop", "2 worker stop",
                "C context resign",
            ])
    }

    @Test func aFlowMadeWithAnActiveContextIsStarted() {
        let log = HookLog()
        let context = TestContext("C", log: log, workers: [])
        context.activate()
        final class PlainFlow: AbstractFlow<TestContext, HeadlessViewController> {}
        let flow = PlainFlow(context: context, viewController: HeadlessViewController(title: "Plain"))
        #expect(flow.isStarted)
        #expect(flow._context === context)
        flow.end()
        #expect(!flow.isStarted)
        #expect(!context.isActive)
    }

    @Test func contextsFindTheirWorkersByType() {
        let log = HookLog()
        let workers = [TestWorker("1", log: log), TestWorker("2", log: log)]
        let context = TestContext("C", log: log, workers: workers + [WorkerMock()])
        #expect(context.workers(ofType: TestWorker.self).map(\.label) == ["1", "2"])
        var visited: [String] = []
        context.withFirstWorker(ofType: TestWorker.self) { visited.append($0.label) }
        context.withWorkers(ofType: TestWorker.self) { visited.append($0.label) }
        #expect(visited == ["1", "1", "2"])
        #expect(context.firstWorker(ofType: WorkerMock.self) != nil)
    }

    @Test func theTreeNamesFlowsWithoutFlowImp() {
        let scope = TrackingScope()
        let log = HookLog()
        scope.run {
            let root = TestFlow("Root", log: log)
            root.start()
            root.attach(
                starting: ProfileFlowImp(
                    context: TestContext("P", log: log, workers: []), viewController: HeadlessViewController(title: "P")))
            #expect(root.tree.name == "TestFlow")
            #expect(root.tree.children.map(\.name) == ["Profile"])
            root.end()
        }
    }

    @Test func detectReportsAnObjectStillAliveAfterItsDelay() {
        let scope = TrackingScope()
        final class Kept {}
        let kept = Kept()
        scope.run {
            LeakDetector.detect(kept, delay: 1)
            LeakDetector.detect(Kept(), delay: 1)
        }
        scope.elapseGrace()
        #expect(scope.leaks.reported.map(\.typeName) == ["Kept"])
        withExtendedLifetime(kept) {}
    }

    @Test func aFlowRetainingParentLeavesItsDetachedSubFlowsUnwatched() {
        let scope = TrackingScope()
        final class CachingFlow: AbstractFlow<ContextMock, HeadlessViewController>, FlowRetaining {}
        var cache: [FlowMock] = []
        scope.run {
            let root = CachingFlow(context: ContextMock(), viewController: HeadlessViewController(title: "Cache"))
            root.start()
            let child = FlowMock()
            cache.append(child)
            root.attach(starting: child)
            root.detach(ending: child)
            root.end()
        }
        scope.elapseGrace()
        #expect(scope.leaks.reported.isEmpty)
        #expect(cache.count == 1)
    }

    @Test func attachingAFlowTwiceIsAnAssertion() async {
        await #expect(processExitsWith: .failure) {
            let flow = TestFlow("Root", log: HookLog())
            flow.start()
            let child = FlowMock()
            flow.attach(starting: child)
            flow.attach(starting: child)
        }
    }

    @Test func aContextThatIsNotAContextIsAnAssertion() async {
        await #expect(processExitsWith: .failure) {
            _ = AbstractFlow<Int, HeadlessViewController>(context: 1, viewController: HeadlessViewController(title: "X"))
        }
    }

    @Test func aRepeatedPluginKeyIsAnAssertion() async {
        await #expect(processExitsWith: .failure) {
            final class Repeated: PluginList<String, Int, String, Void> {
                init() { super.init(componentFactory: { 0 }) }
                override func plugins(component: Int) -> KeyValuePairs<String, AnyPlugin> {
                    ["A": AnyPlugin("A1"), "A": AnyPlugin("A2")]
                }
            }
            _ = Repeated().createAll()
        }
    }

    @Test func aFlowReleasedWhileStartedIsAnAssertion() async {
        await #expect(processExitsWith: .failure) {
            final class Dropped: AbstractFlow<TestContext, HeadlessViewController> {}
            let log = HookLog()
            var flow: Dropped? = Dropped(
                context: TestContext("C", log: log, workers: []), viewController: HeadlessViewController(title: "D"))
            flow?.start()
            flow = nil
        }
    }

    @Test func aContextReleasedWhileActiveIsAnAssertion() async {
        await #expect(processExitsWith: .failure) {
            var context: TestContext? = TestContext("C", log: HookLog(), workers: [])
            context?.activate()
            context = nil
        }
    }

    @Test func aWorkerReleasedWhileWorkingIsAnAssertion() async {
        await #expect(processExitsWith: .failure) {
            var worker: TestWorker? = TestWorker("W", log: HookLog())
            worker?.start()
            worker = nil
        }
    }

    @Test func nodesEndedBeforeTheyGoAreNoViolation() {
        let log = HookLog()
        var flow: TestFlow? = TestFlow("Clean", log: log)
        flow?.start()
        flow?.end()
        flow = nil
        var worker: TestWorker? = TestWorker("W", log: log)
        worker?.start()
        worker?.stop()
        worker = nil
        #expect(flow == nil && worker == nil)
    }
}
