import NodesDebug
import NodesTesting
import Testing

@Suite("NodeTracker: the generic tracking API")
struct NodeTrackerTests {
    final class Router {}
    final class Interactor {}

    final class ReportingObject: TrackedObject {
        var trackingHandle: TrackingHandle?
        deinit { trackingHandle?.reportRelease() }
    }

    @Test func notRecordingCostsNothingAndKnowsNothing() {
        let tracker = NodeTracker()
        let router = Router()
        let id = tracker.attach(router, role: .router, parent: nil, kind: .router)
        tracker.detach(id)
        #expect(tracker.snapshot().nodes.isEmpty)
        #expect(tracker.node(for: router) == nil)
    }

    @Test func attachWatchDetachAndWeakRelease() {
        let tracker = NodeTracker()
        let sink = RecordingSink()
        tracker.addSink(sink)
        var root: Router? = Router()
        var child: Router? = Router()
        var interactor: Interactor? = Interactor()
        let rootID = tracker.attach(root!, role: .router, parent: nil, kind: .router, name: "RootRouter")
        let childID = tracker.attach(child!, role: .router, under: root!, kind: .router, name: "CardRouter")
        tracker.watch(interactor!, role: .interactor, in: childID)
        tracker.setState(.active, of: childID)
        #expect(tracker.node(for: child!) == childID)

        tracker.detach(child!)
        let snapshot = tracker.snapshot()
        #expect(snapshot.nodes.map(\.name) == ["RootRouter", "CardRouter"])
        #expect(snapshot.node(childID)?.isDetached == true)
        #expect(snapshot.node(childID)?.parent == rootID)

        child = nil
        interactor = nil
        tracker.pollReleases()
        #expect(tracker.snapshot().nodes.map(\.name) == ["RootRouter"])
        #expect(
            sink.lines == [
                "attached RootRouter under root",
                "RootRouter watches router Router",
                "attached CardRouter under RootRouter",
                "CardRouter watches router Router",
                "CardRouter watches interactor Interactor",
                "CardRouter active",
                "detached CardRouter",
                "CardRouter released router Router",
                "CardRouter released interactor Interactor",
            ])
        #expect(sink.events.map(\.sequence) == Array(1...9))
        _ = root
        root = nil
    }

    @Test func trackedObjectsReportFromDeinit() {
        let tracker = NodeTracker()
        let sink = RecordingSink()
        tracker.addSink(sink)
        var object: ReportingObject? = ReportingObject()
        let id = tracker.attach(object!, role: .module, parent: nil, kind: .module, name: "Settings")
        #expect(object?.trackingHandle?.node == id)
        tracker.detach(id)
        object = nil
        #expect(sink.lines.last == "Settings released module ReportingObject")
        #expect(tracker.snapshot().nodes.isEmpty)
    }

    /// A handle keeps a test's tracker until its object reports its release (the object may
    /// outlive every other reference to the tracker), and a handle that a registration with
    /// another tracker replaces lets its own tracker go.
    @Test func aHandleKeepsItsTrackerUntilItsObjectIsReleased() {
        weak var first: NodeTracker?
        weak var second: NodeTracker?
        var object: ReportingObject? = ReportingObject()
        do {
            let tracker = NodeTracker()
            tracker.addSink(RecordingSink())
            first = tracker
            tracker.attach(object!, role: .module, parent: nil, kind: .module, name: "Settings")
        }
        #expect(first != nil)
        do {
            let tracker = NodeTracker()
            tracker.addSink(RecordingSink())
            second = tracker
            tracker.attach(object!, role: .module, parent: nil, kind: .module, name: "Settings")
            #expect(object?.trackingHandle?.tracker === tracker)
        }
        #expect(first == nil)
        #expect(second != nil)
        object = nil
        #expect(second == nil)
    }

    @Test func snapshotIsConsistentWithTheEventSequence() {
        let tracker = NodeTracker()
        let sink = RecordingSink()
        tracker.addSink(sink)
        let router = Router()
        let id = tracker.attach(router, role: .router, parent: nil, kind: .router)
        let snapshot = tracker.snapshot()
        #expect(snapshot.sequence == sink.events.last?.sequence)
        tracker.setState(.active, of: id)
        #expect(sink.events.last!.sequence == snapshot.sequence + 1)
    }

    @Test func detachedButAliveNodesAppearInSnapshots() {
        let tracker = NodeTracker()
        tracker.startRecording()
        let leaked = Router()
        let id = tracker.attach(leaked, role: .router, parent: nil, kind: .router, name: "Leaky")
        tracker.detach(id)
        #expect(tracker.detachedAwaitingRelease().map(\.node) == [id])
        #expect(tracker.snapshot().renderedText() == "Router Leaky [detached] {router}")
    }

    /// What an exit hold waits for: only detached nodes with an object alive. A released parent
    /// kept for its pending child's path (and, once the child leaks, for the ghost's path)
    /// awaits nothing; when the child goes, nothing is left to wait for.
    @Test func aReleasedParentKeptForItsChildsPathAwaitsNoRelease() {
        let tracker = NodeTracker()
        tracker.startRecording()
        var parent: Router? = Router()
        var parentContext: ReportingObject? = ReportingObject()
        var child: Router? = Router()
        let parentID = tracker.attach(parent!, role: .router, parent: nil, kind: .router, name: "Parent")
        tracker.watch(parentContext!, role: .interactor, in: parentID)
        let childID = tracker.attach(child!, role: .router, parent: parentID, kind: .router, name: "Child")
        tracker.detach(parentID)
        parent = nil
        parentContext = nil
        #expect(tracker.snapshot().nodes.map(\.id) == [parentID, childID], "the parent names the child's path")
        #expect(tracker.detachedAwaitingRelease().map(\.node) == [childID])
        child = nil
        #expect(tracker.detachedAwaitingRelease().isEmpty)
        #expect(tracker.snapshot().nodes.isEmpty)
    }

    @Test func idsAreNeverReusedEvenWhenIdentitiesAre() {
        let tracker = NodeTracker()
        tracker.startRecording()
        var seen = Set<NodeID>()
        var identities = Set<ObjectIdentifier>()
        for _ in 0..<1_000 {
            let router = Router()
            identities.insert(ObjectIdentifier(router))
            seen.insert(tracker.attach(router, role: .router, parent: nil, kind: .router))
        }
        #expect(seen.count == 1_000)
        #expect(identities.count < 1_000, "the allocator reuses addresses, which is why ids exist")
    }
}
