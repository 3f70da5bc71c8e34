import NodesDebug
import Testing

@Suite("NodeTracker: changes recorded in the log, applied before every read")
struct EventLogTests {
    final class Part: TrackedObjectBase {}

    /// No synchronous sink: the one-call attach, the state changes, the detach and the releases
    /// only go into the log; a read right after them sees them all, in order.
    @Test func aReadRightAfterADetachSeesItAndTheReleases() {
        let tracker = NodeTracker()
        tracker.startRecording()
        var flow: Part? = Part()
        var context: Part? = Part()
        let id = tracker.attach(
            flow!, role: .flow, parts: [NodeTracker.Part(object: context!, role: .context)], parent: nil, kind: .flow,
            name: "ProfileFlow", site: nil)
        tracker.setState(.active, of: id)
        #expect(tracker.snapshot().node(id)?.state == .active)
        #expect(tracker.snapshot().node(id)?.objects.map(\.role) == [.flow, .context])
        tracker.detach(id)
        #expect(tracker.detachedAwaitingRelease().map(\.node) == [id])
        context = nil
        #expect(tracker.snapshot().node(id)?.objects.map(\.isAlive) == [true, false])
        flow = nil
        #expect(tracker.detachedAwaitingRelease().isEmpty)
        #expect(tracker.snapshot().nodes.isEmpty)
        // attach, two objects, active, detached, two releases.
        #expect(tracker.currentSequence == 7)
    }

    /// More changes than the log holds, from several threads: the producers that find it full
    /// apply it themselves, and nothing is lost or reordered per node.
    @Test func aFullLogIsAppliedByItsProducers() async {
        let tracker = NodeTracker()
        tracker.startRecording()
        let anchor = Part()
        let ids = (0..<4).map { _ in tracker.attach(anchor, role: .flow, parent: nil, kind: .flow, findableByObject: false) }
        await withTaskGroup(of: Void.self) { group in
            for id in ids {
                group.addTask {
                    for round in 0..<5_000 { tracker.setState(round.isMultiple(of: 2) ? .active : .inactive, of: id) }
                }
            }
        }
        let snapshot = tracker.snapshot()
        for id in ids { #expect(snapshot.node(id)?.state == .inactive) }
        // Four attaches (each with its object 0) and every state change.
        #expect(tracker.currentSequence == UInt64(2 * 4 + 4 * 5_000))
    }
}
