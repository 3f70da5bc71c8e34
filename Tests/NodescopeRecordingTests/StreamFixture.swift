import NodescopeCollector
import NodescopeRecording
import NodescopeWire
import SeededRandom

/// A host stream made up from a seed: an empty snapshot, then attaches (with objects and
/// states), detaches and releases, some nodes never released (leaks), and heartbeats; each
/// frame with an arrival time.
struct StreamFixture {
    static let start: UInt64 = 1_000_000_000_000
    static let hello = Hello(
        protocolVersion: 2, role: .host, pid: 4242, monotonicNanos: start - 1_000, wallNanos: 1_700_000_000_000_000_000,
        processName: "fixture-app")

    var frames: [(message: WireMessage, arrival: UInt64)] = []

    static var header: RecordingHeader {
        RecordingHeader(
            protocolVersion: 2, pid: hello.pid, processName: hello.processName, helloMonotonicNanos: hello.monotonicNanos,
            helloWallNanos: hello.wallNanos, startMonotonicNanos: start, startWallNanos: 1_700_000_000_000_000_000,
            clockRelation: 1, graceNanos: 1_000_000_000, holdExit: false, startsMidSession: false)
    }

    init(seed: UInt64, events: Int) {
        var random = SplitMix64(seed: seed)
        var time = Self.start
        var sequence: UInt64 = 0
        var nextString: UInt32 = 1
        var strings: [String: UInt32] = [:]
        var attached: [UInt64] = []
        var detachedAlive: [(id: UInt64, objects: [UInt16])] = []
        var objects: [UInt64: UInt16] = [:]
        var parentOf: [UInt64: UInt64] = [:]
        var attachedChildren: [UInt64: Int] = [:]
        var nextNode: UInt64 = 1
        func add(_ message: WireMessage) {
            time += UInt64(1 + random.below(2_000_000))
            frames.append((message, time))
        }
        func string(_ value: String) -> UInt32 {
            if let id = strings[value] { return id }
            let id = nextString
            nextString += 1
            strings[value] = id
            add(.defineString(DefineStringFrame(stringID: id, value: value)))
            return id
        }
        add(.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)))
        add(.snapshotEnd(sequence: 0))
        var produced = 0
        while produced < events {
            sequence += 1
            let choice = random.below(10)
            if choice < 4 || attached.isEmpty {
                let id = nextNode
                nextNode += 1
                let parent = attached.isEmpty || random.chance(20) ? 0 : attached[random.below(attached.count)]
                let kind = string("Flow\(random.below(12))")
                add(
                    .nodeAttached(
                        NodeAttachedFrame(
                            sequence: sequence, timeNanos: time, nodeID: id, parentID: parent, kindStringID: kind, nameStringID: 0)))
                let role = string(["flow", "context", "worker"][random.below(3)])
                let type = string("Type\(random.below(20))")
                sequence += 1
                add(
                    .objectAdded(
                        ObjectAddedFrame(
                            sequence: sequence, timeNanos: time, nodeID: id, objectIndex: 0, roleStringID: role, typeNameStringID: type)))
                objects[id] = 1
                attached.append(id)
                parentOf[id] = parent
                if parent != 0 { attachedChildren[parent, default: 0] += 1 }
            } else if choice < 6 {
                let id = attached[random.below(attached.count)]
                add(
                    .stateChanged(
                        StateChangedFrame(sequence: sequence, timeNanos: time, nodeID: id, state: random.chance(50) ? .active : .inactive)))
            } else if choice < 8 {
                // Detach a leaf (children first, as the runtime does).
                guard let id = attached.last(where: { (attachedChildren[$0] ?? 0) == 0 }) else { continue }
                attached.removeAll { $0 == id }
                if let parent = parentOf[id], parent != 0 { attachedChildren[parent, default: 1] -= 1 }
                add(.nodeDetached(NodeDetachedFrame(sequence: sequence, timeNanos: time, nodeID: id)))
                detachedAlive.append((id, Array(0..<(objects[id] ?? 0))))
            } else if !detachedAlive.isEmpty {
                let pick = random.below(detachedAlive.count)
                // Some detached nodes are never released: leaks.
                if detachedAlive[pick].id % 7 == 3 { continue }
                let node = detachedAlive.remove(at: pick)
                for index in node.objects {
                    add(.objectReleased(ObjectReleasedFrame(sequence: sequence, timeNanos: time, nodeID: node.id, objectIndex: index)))
                    sequence += 1
                }
            } else {
                add(.heartbeat(monotonicNanos: time))
            }
            produced += 1
            if random.chance(5) { add(.heartbeat(monotonicNanos: time)) }
        }
        add(.heartbeat(monotonicNanos: time + 3_000_000_000))
        add(.goodbye(.normalExit))
    }

    /// The recording of the whole stream, finished.
    func recording() -> [UInt8] {
        var writer = RecordingWriter(header: Self.header)
        for frame in frames { writer.append(frame.message, arrivalNanos: frame.arrival) }
        writer.finish(.normal, arrivalNanos: (frames.last?.arrival ?? Self.start) + 1)
        return writer.takeBytes()
    }

    /// The collector fed the first `count` frames directly, as the daemon fed it.
    func live(upTo count: Int) throws -> (Collector, SessionID) {
        var collector = Collector(settings: CollectorSettings(graceNanos: 1_000_000_000))
        let session = collector.openSession(Self.hello, now: Self.start, clocks: .same)
        for frame in frames.prefix(count) {
            _ = try collector.ingest(frame.message, session: session, now: frame.arrival)
            if case .goodbye = frame.message { _ = collector.endSession(session, normally: true, now: frame.arrival) }
        }
        return (collector, session)
    }
}
