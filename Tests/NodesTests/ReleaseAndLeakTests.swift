import Nodes
import NodesTesting
import Testing

@MainActor
@Suite("Releases and leaks")
struct ReleaseAndLeakTests {
    /// Names each node's objects by id, from the attach events.
    private func releasedObjects(_ sink: RecordingSink, of name: String) -> [String] {
        let id = sink.events.first {
            if case .attached(_, _, let attachedName) = $0.change { attachedName == name } else { false }
        }?.node
        return sink.events.compactMap { event in
            guard event.node == id, case .released(_, let role, _) = event.change else { return nil }
            return role.rawValue
        }
    }

    @Test func cleanDetachReleasesEveryObjectOfTheNode() {
        let scope = TrackingScope()
        let log = HookLog()
        scope.run {
            let root = TestFlow("Root", log: log)
            root.start()
            root.show(TestFlow("Feed", log: log, workerCount: 2))
            root.hide(root.subFlows(ofType: TestFlow.self)[0])
            root.end()
        }
        #expect(Set(releasedObjects(scope.sink, of: "Feed")) == ["flow", "context", "worker", "view"])
        #expect(releasedObjects(scope.sink, of: "Feed").count == 5)
        scope.elapseGrace()
        #expect(scope.leaks.reported.isEmpty)
        #expect(scope.tracker.detachedAwaitingRelease().isEmpty)
    }

    @Test func retainCycleThroughALongLivedServiceIsCaught() {
        let scope = TrackingScope()
        let log = HookLog()
        let service = EventService()
        scope.run {
            let root = TestFlow("Root", log: log)
            root.start()
            let profile = root.show(TestFlow("Profile", log: log))
            let context = profile.context
            // The bug: the service outlives the node and its closure captures the context.
            service.listeners.append { _ = context.isActive }
            root.hide(profile)
            root.end()
        }
        // The missing release events: the context, and the worker that it keeps, stay alive.
        #expect(Set(releasedObjects(scope.sink, of: "Profile")) == ["flow", "view"])
        let ghost = scope.tracker.snapshot().nodes.first { $0.name == "Profile" }
        #expect(ghost?.isDetached == true)
        #expect(ghost?.objects.filter(\.isAlive).map(\.role) == [.context, .worker])

        #expect(scope.leaks.reported.isEmpty, "nothing is reported before the grace runs out")
        scope.elapseGrace()
        #expect(
            scope.leaks.reported.map(\.description) == [
                "Profile: TestContext still alive 1000 ms after detach",
                "Profile: TestWorker still alive 1000 ms after detach",
            ])

        service.listeners.removeAll()
        #expect(releasedObjects(scope.sink, of: "Profile").suffix(2) == ["context", "worker"])
        #expect(scope.tracker.detachedAwaitingRelease().isEmpty)
    }

    @Test func customViewsAreWatchedThroughWeakReferences() {
        final class PlainView: ViewControllable {
            func present(_ viewController: ViewControllable, withModalStyle modalStyle: ModalStyle, animated: Bool) {}
            func dismiss(_ viewController: ViewControllable, animated: Bool) {}
            func contain(_ viewController: ViewControllable) {}
            func uncontain(_ viewController: ViewControllable) {}
        }
        final class PlainFlow: AbstractFlow<ContextMock, PlainView> {}
        let scope = TrackingScope()
        let log = HookLog()
        scope.run {
            let root = TestFlow("Root", log: log)
            root.start()
            let child = PlainFlow(context: ContextMock(), viewController: PlainView())
            root.attach(starting: child)
            #expect(child.context.isActive)
            root.detach(ending: child)
            #expect(!child.context.isActive)
            root.end()
        }
        scope.tracker.pollReleases()
        #expect(Set(releasedObjects(scope.sink, of: "PlainFlow")) == ["flow", "context", "view"])
    }

    @Test func idsAreNeverReusedAcross100kAttachDetachCycles() {
        final class IDSink: DebugSink, @unchecked Sendable {
            // Only touched under the tracker's lock, which serializes every receive.
            var ids = Set<NodeID>()
            var attaches = 0
            func receive(_ event: DebugInformation) {
                if case .attached = event.change {
                    ids.insert(event.node)
                    attaches += 1
                }
            }
        }
        let tracker = NodeTracker()
        let sink = IDSink()
        tracker.addSink(sink)
        let detector = LeakDetector(scheduler: ManualScheduler(), handler: { _ in })
        detector.isEnabled = false
        let log = HookLog()
        let root = NodeTracker.$current.withValue(tracker) {
            LeakDetector.$current.withValue(detector) {
                let root = TestFlow("Root", log: log, workerCount: 0)
                root.start()
                for _ in 0..<100_000 {
                    let child = TestFlow("Child", log: log, workerCount: 0)
                    root.attach(starting: child)
                    root.detach(ending: child)
                }
                log.clear()
                return root
            }
        }
        #expect(sink.attaches == 100_001)
        #expect(sink.ids.count == 100_001)
        #expect(tracker.snapshot().nodes.count == 1)
        NodeTracker.$current.withValue(tracker) { LeakDetector.$current.withValue(detector) { root.end() } }
    }
}
