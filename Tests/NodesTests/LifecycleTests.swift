import Nodes
import NodesTesting
import Testing

@MainActor
@Suite("Node lifecycle: attach and detach order, three levels deep")
struct LifecycleTests {
    @Test func attachStartsFlowThenActivatesContextThenStartsWorkers() {
        let scope = TrackingScope()
        let log = HookLog()
        let root = scope.run { TestFlow("Root", log: log) }
        scope.run {
            root.start()
            let parent = root.show(TestFlow("Parent", log: log))
            parent.show(TestFlow("Child", log: log))
        }
        #expect(
            log.entries == [
                "Root context active", "Root worker start", "Root flow start",
                "Parent context active", "Parent worker start", "Parent flow start",
                "Child context active", "Child worker start", "Child flow start",
            ])
        #expect(
            scope.sink.lines == [
                "attached Root under root",
                "Root watches flow TestFlow", "Root watches context TestContext",
                "Root watches worker TestWorker", "Root watches view HeadlessViewController",
                "Root started", "Root active",
                "attached Parent under Root",
                "Parent watches flow TestFlow", "Parent watches context TestContext",
                "Parent watches worker TestWorker", "Parent watches view HeadlessViewController",
                "Parent started", "Parent active",
                "attached Child under Parent",
                "Child watches flow TestFlow", "Child watches context TestContext",
                "Child watches worker TestWorker", "Child watches view HeadlessViewController",
                "Child started", "Child active",
            ])
        scope.run { root.end() }  // a started flow is ended before it goes, as the framework asserts
    }

    @Test func detachEndsSubFlowsLastAttachedFirstThenStopsWorkersThenDeactivates() {
        let scope = TrackingScope()
        let log = HookLog()
        let root = scope.run { TestFlow("Root", log: log) }
        scope.run {
            root.start()
            let parent = root.show(TestFlow("Parent", log: log))
            parent.show(TestFlow("ChildA", log: log))
            parent.show(TestFlow("ChildB", log: log))
            log.clear()
            scope.sink.removeAll()
            root.hide(parent)
        }
        #expect(
            log.entries == [
                "ChildB worker stop", "ChildB context resign",
                "ChildA worker stop", "ChildA context resign",
                "Parent worker stop", "Parent context resign",
            ])
        // A clean detach releases all four objects of each of the three nodes.
        let releases = scope.sink.events.filter {
            if case .released = $0.change { return true } else { return false }
        }
        #expect(releases.count == 12)
        #expect(scope.tracker.snapshot().nodes.map(\.name) == ["Root"])
        scope.run { root.end() }
    }

    @Test func detachEventsComeInTheReverseOrderOfAttach() {
        let scope = TrackingScope()
        let log = HookLog()
        var names: [NodeID: String] = [:]
        let root = scope.run {
            let root = TestFlow("Root", log: log)
            root.start()
            let parent = root.show(TestFlow("Parent", log: log))
            parent.show(TestFlow("ChildA", log: log))
            parent.show(TestFlow("ChildB", log: log))
            for event in scope.sink.events {
                if case .attached(_, _, let name) = event.change { names[event.node] = name }
            }
            scope.sink.removeAll()
            root.hide(parent)
            return root
        }
        defer { scope.run { root.end() } }
        let lifecycle = scope.sink.events.compactMap { event -> String? in
            switch event.change {
            case .stateChanged(let state): "\(names[event.node]!) \(state)"
            case .detached: "\(names[event.node]!) detached"
            default: nil
            }
        }
        #expect(
            lifecycle == [
                "ChildB inactive", "ChildB ended", "ChildB detached",
                "ChildA inactive", "ChildA ended", "ChildA detached",
                "Parent inactive", "Parent ended", "Parent detached",
            ])
    }

    @Test func rootEndDetachesTheRoot() {
        let scope = TrackingScope()
        let log = HookLog()
        let window = HeadlessWindow()
        scope.run {
            window.launch(TestFlow("Root", log: log))
            #expect(window.isVisible)
            window.close()
        }
        #expect(scope.sink.lines.contains("detached Root"))
        #expect(scope.sink.lines.last == "Root released view HeadlessViewController")
        #expect(scope.tracker.snapshot().nodes.isEmpty)
    }

    @Test func subFlowLookUpByType() {
        let scope = TrackingScope()
        let log = HookLog()
        scope.run {
            let root = TestFlow("Root", log: log)
            root.start()
            root.attach(starting: FlowMock(title: "Mock"))
            root.show(TestFlow("A", log: log))
            root.show(TestFlow("B", log: log))
            #expect(root.subFlows.count == 3)
            #expect(root.firstSubFlow(ofType: FlowMock.self)?.startCallCount == 1)
            #expect(root.subFlows(ofType: TestFlow.self).map(\.label) == ["A", "B"])
            root.detach(endingSubFlowsOfType: TestFlow.self) { $0.label == "A" }
            #expect(root.subFlows(ofType: TestFlow.self).map(\.label) == ["B"])
            var visited: [String] = []
            root.withSubFlows(ofType: TestFlow.self) { visited.append($0.label) }
            root.withFirstSubFlow(ofType: FlowMock.self) { visited.append($0.view.title) }
            #expect(visited == ["B", "Mock"])
            root.end()
            #expect(root.subFlows.isEmpty)
        }
    }

    @Test func cancellablesAreCancelledOnDeactivation() {
        let scope = TrackingScope()
        let log = HookLog()
        let state = ObservableState(0)
        var seen: [Int] = []
        scope.run {
            let root = TestFlow("Root", log: log)
            root.start()
            state.observe { seen.append($0) }.store(in: &root.context.cancellables)
            state.value = 1
            root.end()
            state.value = 2
        }
        #expect(seen == [0, 1])
        #expect(state.observerCount == 0)
    }

    @Test func workerCancellablesAreCancelledWhenItStops() {
        let log = HookLog()
        let worker = TestWorker("W", log: log)
        let state = ObservableState("a")
        var seen: [String] = []
        worker.start()
        state.observe { seen.append($0) }.store(in: &worker.cancellables)
        worker.stop()
        state.value = "b"
        #expect(seen == ["a"])
        #expect(!worker.isWorking)
    }
}
