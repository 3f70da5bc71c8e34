import NodescopeCollector
import NodescopeWire
import SeededRandom
import Testing

/// A host's own registry, as the agent keeps it: the truth that random streams are made from.
struct RandomHost {
    struct Node {
        var parent: UInt64
        var kind: UInt32
        var name: UInt32
        var attachedAt: UInt64
        var state: WireNodeState?
        var objects: [(role: UInt32, alive: Bool)] = []
        var detachedAt: UInt64?
        var children: [UInt64] = []
    }

    static let kinds = ["Flow", "Screen", "Module"]  // ids 1...3
    static let names = ["Login", "Home", "Item"]  // ids 4...6
    static let roles = ["flow", "context", "worker", "view"]  // ids 7...10

    var nodes: [UInt64: Node] = [:]
    var nextID: UInt64 = 1
    var sequence: UInt64 = 0
    /// Events made while the link drops them.
    var lost: UInt64 = 0

    static var definitions: [WireMessage] {
        (kinds + names + roles).enumerated().map {
            .defineString(DefineStringFrame(stringID: UInt32($0.offset + 1), value: $0.element))
        }
    }

    private mutating func nextSequence() -> UInt64 {
        sequence += 1
        return sequence
    }

    var attached: [UInt64] { nodes.keys.filter { nodes[$0]!.detachedAt == nil }.sorted() }

    /// One random lifecycle step at host time `now`: the frames it produces.
    mutating func step(_ random: inout SplitMix64, now: UInt64) -> [WireMessage] {
        let attached = self.attached
        switch random.below(100) {
        case 0..<30 where nodes.count < 60, 0..<5:
            let id = nextID
            nextID += 1
            let parent = attached.isEmpty || random.chance(10) ? 0 : attached[random.below(attached.count)]
            var node = Node(
                parent: parent, kind: UInt32(1 + random.below(3)),
                name: random.chance(30) ? 0 : UInt32(4 + random.below(3)),
                attachedAt: now)
            var frames: [WireMessage] = [
                .nodeAttached(
                    NodeAttachedFrame(
                        sequence: nextSequence(), timeNanos: now, nodeID: id, parentID: parent, kindStringID: node.kind,
                        nameStringID: node.name))
            ]
            for index in 0..<random.below(4) {
                let role = UInt32(7 + random.below(4))
                node.objects.append((role, true))
                frames.append(
                    .objectAdded(
                        ObjectAddedFrame(
                            sequence: nextSequence(), timeNanos: now, nodeID: id, objectIndex: UInt16(index),
                            roleStringID: role,
                            typeNameStringID: node.kind)))
            }
            if random.chance(80) {
                node.state = .started
                frames.append(
                    .stateChanged(
                        StateChangedFrame(sequence: nextSequence(), timeNanos: now, nodeID: id, state: .started)))
            }
            nodes[id] = node
            if parent != 0 { nodes[parent]!.children.append(id) }
            return frames
        case 30..<45:
            let all = nodes.keys.sorted()
            guard !all.isEmpty else { return [] }
            let id = all[random.below(all.count)]
            let state = WireNodeState(rawValue: UInt8(1 + random.below(4)))!
            nodes[id]!.state = state
            return [
                .stateChanged(StateChangedFrame(sequence: nextSequence(), timeNanos: now, nodeID: id, state: state))
            ]
        case 45..<50:
            guard !attached.isEmpty else { return [] }
            let id = attached[random.below(attached.count)]
            let index = nodes[id]!.objects.count
            let role = UInt32(7 + random.below(4))
            nodes[id]!.objects.append((role, true))
            return [
                .objectAdded(
                    ObjectAddedFrame(
                        sequence: nextSequence(), timeNanos: now, nodeID: id, objectIndex: UInt16(index),
                        roleStringID: role,
                        typeNameStringID: nodes[id]!.kind))
            ]
        case 50..<65:
            guard !attached.isEmpty else { return [] }
            return detach(attached[random.below(attached.count)], now: now)
        default:
            let alive = nodes.keys.sorted().flatMap { id in
                nodes[id]!.objects.indices.filter { nodes[id]!.objects[$0].alive }.map { (id, $0) }
            }
            guard !alive.isEmpty else { return [] }
            let (id, index) = alive[random.below(alive.count)]
            nodes[id]!.objects[index].alive = false
            forgetIfReleased(id)
            return [
                .objectReleased(
                    ObjectReleasedFrame(
                        sequence: nextSequence(), timeNanos: now, nodeID: id, objectIndex: UInt16(index)))
            ]
        }
    }

    /// Detaches a node and, deepest first, its attached descendants (as the agent's registry does).
    private mutating func detach(_ id: UInt64, now: UInt64) -> [WireMessage] {
        guard let node = nodes[id], node.detachedAt == nil else { return [] }
        var frames: [WireMessage] = []
        for child in node.children.reversed() { frames += detach(child, now: now) }
        nodes[id]!.detachedAt = now
        frames.append(.nodeDetached(NodeDetachedFrame(sequence: nextSequence(), timeNanos: now, nodeID: id)))
        forgetIfReleased(id)
        return frames
    }

    private mutating func forgetIfReleased(_ id: UInt64) {
        guard let node = nodes[id], node.detachedAt != nil, !node.objects.contains(where: \.alive) else { return }
        nodes[id] = nil
        if let parent = nodes[node.parent] { nodes[node.parent]!.children = parent.children.filter { $0 != id } }
    }

    /// `dropped` and a snapshot of the registry, as the agent sends after a loss.
    func resync() -> [WireMessage] {
        let ids = nodes.keys.sorted()
        var frames: [WireMessage] = [
            .dropped(count: lost), .snapshotBegin(SnapshotBeginFrame(sequence: sequence, nodeCount: UInt32(ids.count))),
        ]
        for id in ids {
            let node = nodes[id]!
            frames.append(
                .nodeAttached(
                    NodeAttachedFrame(
                        sequence: sequence, timeNanos: node.attachedAt, nodeID: id, parentID: node.parent,
                        kindStringID: node.kind,
                        nameStringID: node.name)))
            for (index, object) in node.objects.enumerated() {
                frames.append(
                    .objectAdded(
                        ObjectAddedFrame(
                            sequence: sequence, timeNanos: node.attachedAt, nodeID: id, objectIndex: UInt16(index),
                            roleStringID: object.role, typeNameStringID: node.kind)))
            }
            for (index, object) in node.objects.enumerated() where !object.alive {
                frames.append(
                    .objectReleased(
                        ObjectReleasedFrame(
                            sequence: sequence, timeNanos: node.detachedAt ?? node.attachedAt, nodeID: id,
                            objectIndex: UInt16(index))))
            }
            if let state = node.state {
                frames.append(
                    .stateChanged(
                        StateChangedFrame(sequence: sequence, timeNanos: node.attachedAt, nodeID: id, state: state)))
            }
            if let detachedAt = node.detachedAt {
                frames.append(.nodeDetached(NodeDetachedFrame(sequence: sequence, timeNanos: detachedAt, nodeID: id)))
            }
        }
        frames.append(.snapshotEnd(sequence: sequence))
        return frames
    }
}

@Suite("Random host streams against a reference model")
struct RandomModelTests {
    static let grace: UInt64 = 1_000

    /// Runs one seeded stream, comparing the collector with the model after every step.
    func run(seed: UInt64, steps: Int) throws {
        var random = SplitMix64(seed: seed)
        let holdExit = random.chance(50)
        var collector = Collector(settings: .init(graceNanos: Self.grace, holdExit: holdExit))
        var model = ReferenceModel(grace: Self.grace)
        var host = RandomHost()
        var now: UInt64 = 1_000_000
        let session = collector.openSession(
            Hello(role: .host, pid: UInt32(seed % 100_000), monotonicNanos: now, wallNanos: 0, processName: "random"),
            now: now)

        func feed(_ frames: [WireMessage]) throws {
            for frame in frames {
                _ = try collector.ingest(frame, session: session, now: now)
                model.apply(frame, now: now)
            }
        }

        func compare(_ label: String) -> Bool {
            let actual = collector.tree(session)!.nodes.map(ReferenceModel.Shown.init)
            let expected = model.expectedTree()
            let actualLeaks = collector.leaks(session).map(ReferenceModel.Record.init)
            let expectedLeaks = model.records.enumerated()
                .sorted { ($0.element.flaggedAt, $0.offset) < ($1.element.flaggedAt, $1.offset) }.map(\.element)
            #expect(actual == expected, "seed \(seed), \(label): tree differs")
            #expect(actualLeaks == expectedLeaks, "seed \(seed), \(label): leaks differ")
            let openLeaks = model.records.filter { $0.verdict != .lateRelease }.count
            let counts = collector.summary(session)?.counts
            #expect(
                counts.map { $0.leaked + $0.retainedByGlobal + $0.unverified } == openLeaks,
                "seed \(seed), \(label): leak count differs")
            #expect(
                counts?.releasedLate == model.records.count - openLeaks, "seed \(seed), \(label): late release count differs")
            return actual == expected && actualLeaks == expectedLeaks
        }

        try feed(
            RandomHost.definitions + [
                .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), .snapshotEnd(sequence: 0),
            ])
        var dropping = 0
        for step in 0..<steps {
            now += UInt64(random.below(Int(Self.grace) / 3))
            if dropping == 0, random.chance(2) { dropping = 1 + random.below(12) }
            // The host vouches for its time with a heartbeat (the watermark), as the agent does,
            // except while it is losing events: it says `dropped` and resyncs before vouching again.
            if dropping == 0 {
                try feed([.heartbeat(monotonicNanos: now)])
                model.flagDue(now: now)
            }
            let frames = host.step(&random, now: now)
            if dropping > 0 {
                host.lost += UInt64(frames.filter { if case .defineString = $0 { false } else { true } }.count)
                dropping -= 1
                if dropping == 0 {
                    try feed(host.resync() + [.heartbeat(monotonicNanos: now)])
                    host.lost = 0
                }
            } else {
                try feed(frames)
            }
            guard compare("step \(step)") else { return }
        }
        if dropping > 0 { try feed(host.resync()) }
        now += UInt64(random.below(Int(Self.grace)))
        try feed([.heartbeat(monotonicNanos: now)])
        model.flagDue(now: now)
        let normally = random.chance(50)
        _ = collector.endSession(session, normally: normally, now: now)
        // This host vouches for its time with heartbeats, so its hold does not stand for graces
        // its last heartbeat does not cover: those nodes are unverified, held or not.
        model.end(normally: normally, holdExit: false, now: now)
        _ = compare("end")
    }

    @Test(arguments: 1...16 as ClosedRange<UInt64>)
    func randomStreamMatchesTheModel(seed: UInt64) throws {
        try run(seed: seed &* 0x5851_F42D_4C95_7F2D, steps: 1_200)
    }
}
