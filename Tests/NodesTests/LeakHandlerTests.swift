import Nodes
import NodesTesting
import Testing

/// Choosing what a leak does: a detector's settable handler, and the shared detector's for a
/// whole app.
@MainActor
@Suite("Leak handlers")
struct LeakHandlerTests {
    /// A long-lived object whose closures keep whatever they capture: the usual way a node leaks.
    private final class Registry: @unchecked Sendable {
        // Only touched by the test's own thread.
        var retained: [AnyObject] = []
    }

    /// Attaches a child under a started root and detaches it, with the child's context kept by
    /// `registry`, so that the detector watching it finds the context alive after the grace.
    private func leakOneNode(named name: String, into registry: Registry) {
        let log = HookLog()
        let root = TestFlow("Root", log: log)
        root.start()
        let child = root.show(TestFlow(name, log: log, workerCount: 0))
        registry.retained.append(child.context)
        root.hide(child)
        root.end()
    }

    @Test func aHandlerSetWhileAGraceRunsReceivesTheLeak() {
        let scheduler = ManualScheduler()
        let first = LeakCollector()
        let second = LeakCollector()
        let detector = LeakDetector(scheduler: scheduler, handler: first.handler)
        let registry = Registry()
        NodeTracker.$current.withValue(NodeTracker()) {
            LeakDetector.$current.withValue(detector) { leakOneNode(named: "Pending", into: registry) }
        }
        detector.handler = second.handler
        scheduler.advance(byNanoseconds: detector.graceNanoseconds)
        #expect(first.reported.isEmpty)
        #expect(second.reported.map(\.description) == ["Pending: TestContext still alive 1000 ms after detach"])
    }

    @Test func theHandlerCanBeReplacedFromManyTasksWhileChecksRun() async {
        let scheduler = ManualScheduler()
        let collectors = (0..<4).map { _ in LeakCollector() }
        let detector = LeakDetector(scheduler: scheduler, handler: collectors[0].handler)
        let registry = Registry()
        LeakDetector.$current.withValue(detector) {
            NodeTracker.$current.withValue(NodeTracker()) {
                for index in 0..<200 { leakOneNode(named: "Leaky\(index)", into: registry) }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for collector in collectors {
                group.addTask { for _ in 0..<1_000 { detector.handler = collector.handler } }
            }
            group.addTask { scheduler.advance(byNanoseconds: detector.graceNanoseconds) }
        }
        // Every leak went to exactly one of the handlers, whichever was set at that moment.
        #expect(collectors.map(\.reported.count).reduce(0, +) == 200)
    }

    @Test func theSharedDetectorsHandlerChoosesForEveryFlowOfTheApp() async throws {
        let shared = LeakDetector.shared
        try #require(shared.isEnabled, "the shared detector is on in debug builds, where tests run")
        #expect(LeakDetector.current === shared, "flows use the shared detector when no task binds one")
        let collector = LeakCollector()
        let previous = shared.handler
        defer { shared.handler = previous }
        let name = "SharedHandlerProbe"
        // Other tests may leak through the shared detector meanwhile: keep only this node's leaks.
        shared.handler = { leak in
            if leak.node == name { collector.handler(leak) } else { previous(leak) }
        }
        let registry = Registry()
        NodeTracker.$current.withValue(NodeTracker()) { leakOneNode(named: name, into: registry) }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while collector.reported.isEmpty, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(collector.reported.map(\.typeName) == ["TestContext"])
        #expect(collector.reported.first?.graceNanoseconds == 1_000_000_000)
    }
}
