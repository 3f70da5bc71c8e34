import NodesDebug
import Testing

@Suite("NodeTracker: changes recorded in the log, applied before every read")
struct EventLogTests {
    final class Part: TrackedObjectBase {}
    /// Handed back from the threads that made them (their handles are set once, at the attach).
    final class SharedPart: TrackedObjectBase, @unchecked Sendable {}

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
                    for round in 0..<25_000 { tracker.setState(round.isMultiple(of: 2) ? .active : .inactive, of: id) }
                }
            }
        }
        let snapshot = tracker.snapshot()
        for id in ids { #expect(snapshot.node(id)?.state == .inactive) }
        // Four attaches (each with its object 0) and every state change.
        #expect(tracker.currentSequence == UInt64(2 * 4 + 4 * 25_000))
    }

    /// Runtime attaches (an entry and its details over three slots, then the objects) from
    /// several threads through a log that fills up over and over: every node arrives whole,
    /// with its name, kind, parent and objects, whichever thread applied it.
    @Test func attachesKeepTheirDetailsThroughAFullLog() async {
        let tracker = NodeTracker()
        tracker.startRecording()
        let root = SharedPart()
        let rootID = tracker.attach(root, role: .flow, parts: [], parent: nil, kind: .flow, name: "Root", site: nil)
        let perThread = 6_000
        let kept = await withTaskGroup(of: [(NodeID, [SharedPart])].self) { group in
            for thread in 0..<4 {
                group.addTask {
                    var kept: [(NodeID, [SharedPart])] = []
                    for index in 0..<perThread {
                        let objects = [SharedPart(), SharedPart(), SharedPart()]
                        let id = tracker.attach(
                            objects[0], role: .flow,
                            parts: [
                                NodeTracker.Part(object: objects[1], role: .context),
                                NodeTracker.Part(object: objects[2], role: .view),
                            ],
                            parent: rootID, kind: .flow, name: "Flow\(thread)-\(index)", site: nil)
                        tracker.setState(.active, of: id)
                        if index.isMultiple(of: 100) { kept.append((id, objects)) } else { tracker.detach(id) }
                    }
                    return kept
                }
            }
            var all: [(NodeID, [SharedPart])] = []
            for await part in group { all += part }
            return all
        }
        let snapshot = tracker.snapshot()
        #expect(snapshot.nodes.count == 1 + kept.count)
        for (id, _) in kept {
            let node = snapshot.node(id)
            #expect(node?.parent == rootID)
            #expect(node?.kind == .flow)
            #expect(node?.name.hasPrefix("Flow") == true)
            #expect(node?.objects.map(\.role) == [.flow, .context, .view])
            #expect(node?.state == .active)
        }
        withExtendedLifetime((root, kept)) {}
    }

    /// Attaches of every size the log carries (1 to 17 objects: 2 to 21 units), from several
    /// threads, through a small log that goes round many times: attaches reserved at the end
    /// of the ring run on into its spill area, and the units they leave in the ring hold
    /// arbitrary bytes where stamps go. Every node arrives whole, and every release counts.
    @Test func attachesOfEverySizeSurviveTheRingsEnd() async {
        let tracker = NodeTracker()
        tracker.startRecording()
        let roles: [ObjectRole] = [.context, .worker, .view, .interactor, .router, .presenter, "extra"]
        let perThread = 3_000
        let kept = await withTaskGroup(of: [(NodeID, Int, [SharedPart])].self) { group in
            for thread in 0..<3 {
                group.addTask {
                    var kept: [(NodeID, Int, [SharedPart])] = []
                    for index in 0..<perThread {
                        let count = 1 + (index &* 7 &+ thread) % 17
                        let objects = (0..<count).map { _ in SharedPart() }
                        let parts = objects.dropFirst().enumerated().map { offset, object in
                            NodeTracker.Part(object: object, role: roles[offset % roles.count])
                        }
                        let id = tracker.attach(
                            objects[0], role: .flow, parts: Array(parts), parent: nil, kind: .flow,
                            name: "Node\(thread)-\(index)", site: nil)
                        if index.isMultiple(of: 50) {
                            kept.append((id, count, objects))
                        } else {
                            tracker.detach(id)
                        }
                    }
                    return kept
                }
            }
            var all: [(NodeID, Int, [SharedPart])] = []
            for await part in group { all += part }
            return all
        }
        let snapshot = tracker.snapshot()
        // Every detached node released all its objects as its thread let go of them.
        #expect(snapshot.nodes.count == kept.count)
        for (id, count, _) in kept {
            let node = snapshot.node(id)
            #expect(node?.name.hasPrefix("Node") == true)
            #expect(node?.objects.count == count)
            #expect(node?.objects.first?.role == .flow)
            #expect(node?.objects.dropFirst().map(\.role) == (0..<(count - 1)).map { roles[$0 % roles.count] })
            #expect(node?.objects.allSatisfy(\.isAlive) == true)
        }
        withExtendedLifetime(kept) {}
    }

    /// A log of 64 units shared by four threads is full nearly all the time, so changes keep
    /// taking the locked path while other threads' changes wait in the log, some reserved and not
    /// yet published. A change applied on the locked path must come after every change reserved
    /// before it: a release applied ahead of its own node's attach or detach would be lost, and
    /// the node would stay in the tree for ever.
    @Test func theLockedPathComesAfterEveryChangeReservedBeforeIt() async {
        let tracker = NodeTracker(logCapacity: 64)
        tracker.startRecording()
        let perThread = 20_000
        let kept = await withTaskGroup(of: [(NodeID, [SharedPart])].self) { group in
            for thread in 0..<4 {
                group.addTask {
                    var kept: [(NodeID, [SharedPart])] = []
                    for index in 0..<perThread {
                        let objects = [SharedPart(), SharedPart()]
                        let id = tracker.attach(
                            objects[0], role: .flow, parts: [NodeTracker.Part(object: objects[1], role: .context)],
                            parent: nil, kind: .flow, name: "Flow\(thread)-\(index)", site: nil)
                        tracker.setState(.active, of: id)
                        if index.isMultiple(of: 1_000) { kept.append((id, objects)) } else { tracker.detach(id) }
                    }
                    return kept
                }
            }
            var all: [(NodeID, [SharedPart])] = []
            for await part in group { all += part }
            return all
        }
        let snapshot = tracker.snapshot()
        let extra = Set(snapshot.nodes.map(\.id)).subtracting(kept.map(\.0))
        #expect(extra.isEmpty, "left in the tree: \(extra.sorted { $0.rawValue < $1.rawValue })")
        for (id, _) in kept { #expect(snapshot.node(id)?.state == .active) }
        withExtendedLifetime(kept) {}
    }

    /// A consumer that wants events or not, and counts what reaches it.
    final class Consumer: LogConsumer, @unchecked Sendable {
        var wantsEvents: Bool
        private(set) var received = 0
        init(wantsEvents: Bool) { self.wantsEvents = wantsEvents }
        func receive(_ event: DebugInformation) { received += 1 }
        func takeQueued(into batch: inout [DebugInformation]) -> UInt64 { 0 }
        func wakeUp() {}
    }

    /// The writer of a stalled connection applies the log without making events: the tree is
    /// what the changes made it, every change is numbered, and the events it let go are
    /// counted (the agent reports them as dropped, and the stream resumes from a snapshot).
    @Test func aStalledConsumerAppliesTheLogAndCountsTheEventsItLetsGo() throws {
        let tracker = NodeTracker()
        let consumer = Consumer(wantsEvents: true)
        tracker.addSink(consumer)
        var flow: SharedPart? = SharedPart()
        var context: SharedPart? = SharedPart()
        let id = tracker.attach(
            flow!, role: .flow, parts: [NodeTracker.Part(object: context!, role: .context)], parent: nil, kind: .flow,
            name: "ProfileFlow", site: nil)
        tracker.setState(.active, of: id)
        let kept = SharedPart()
        let keptID = tracker.attach(kept, role: .flow, parts: [], parent: nil, kind: .flow, name: "KeptFlow", site: nil)
        tracker.detach(id)
        (flow, context) = (nil, nil)
        // attach, two objects, active, attach, its object, detach, two releases.
        #expect(tracker.unappliedUnits > 0)
        let (discarded, backlog) = tracker.applyRecordedDiscarding(for: consumer, maximum: .max)
        #expect(discarded == 9)
        #expect(!backlog)
        #expect(consumer.received == 0)
        #expect(tracker.unappliedUnits == 0)
        let snapshot = tracker.snapshot()
        #expect(snapshot.nodes.map(\.id) == [keptID])
        #expect(tracker.currentSequence == 9)
        withExtendedLifetime(kept) {}
    }

    /// An attach whose objects repeat (a part given twice, the principal among its parts) or
    /// are registered already takes the locked path, which decides who watches what: the log's
    /// attach gives each object its handle first and takes them back when it meets one that has
    /// one. Each case gives the same objects as a tracker that always takes the locked path (a
    /// synchronous sink), and every object still reports its release.
    @Test func repeatedOrRegisteredObjectsGiveWhatTheLockedPathGives() {
        final class Ignoring: DebugSink, @unchecked Sendable {
            func receive(_ event: DebugInformation) {}
        }
        func objects(in tracker: NodeTracker, _ cases: (NodeTracker) -> [NodeID]) -> [[ObjectSnapshot]] {
            let ids = cases(tracker)
            let snapshot = tracker.snapshot()
            return ids.map { snapshot.node($0)?.objects ?? [] }
        }
        let cases: (NodeTracker) -> [NodeID] = { tracker in
            let (flow, context, worker) = (SharedPart(), SharedPart(), SharedPart())
            let twice = tracker.attach(
                flow, role: .flow,
                parts: [
                    .init(object: context, role: .context), .init(object: worker, role: .worker),
                    .init(object: context, role: .view),
                ],
                parent: nil, kind: .flow, name: "Twice", site: nil)
            let (flow2, context2) = (SharedPart(), SharedPart())
            let principalAgain = tracker.attach(
                flow2, role: .flow, parts: [.init(object: context2, role: .context), .init(object: flow2, role: .view)],
                parent: nil, kind: .flow, name: "PrincipalAgain", site: nil)
            // The worker of the first node, registered already.
            let flow3 = SharedPart()
            let registered = tracker.attach(
                flow3, role: .flow, parts: [.init(object: worker, role: .worker)], parent: nil, kind: .flow,
                name: "Registered", site: nil)
            withExtendedLifetime((flow, context, worker, flow2, context2, flow3)) {}
            return [twice, principalAgain, registered]
        }
        let logged = NodeTracker()
        logged.startRecording()
        let locked = NodeTracker()
        locked.startRecording()
        locked.addSink(Ignoring())
        let viaLog = objects(in: logged, cases)
        let viaLock = objects(in: locked, cases)
        #expect(viaLog.map(\.count) == [4, 2, 2])
        #expect(viaLog == viaLock)
        // The objects are gone now, and both trackers say so alike.
        let (afterLog, afterLock) = (logged.snapshot().nodes, locked.snapshot().nodes)
        #expect(afterLog.map(\.objects) == afterLock.map(\.objects))
        #expect(afterLog.flatMap(\.objects).contains { !$0.isAlive })
    }
}
