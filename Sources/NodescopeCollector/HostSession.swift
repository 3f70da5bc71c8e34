import NodescopeWire

/// Everything the collector knows of one host connection: its interned strings, its tree, the
/// sequence and snapshot rules, the leak state machine and its leak records.
///
/// Frames are checked before anything is changed, so a frame that breaks a rule leaves the
/// session as it was.
struct HostSession {
    /// The session's id.
    let id: SessionID
    /// The host's process id.
    let pid: UInt32
    /// The host's process name.
    let processName: String
    /// When the host connected, collector clock.
    let connectedAt: UInt64
    /// The collector's settings (grace, exit hold, limits).
    let settings: CollectorSettings
    /// How host times map to the collector's clock (the identity on one machine).
    let clock: HostClockMapping

    /// When the session ended, collector clock.
    var endedAt: UInt64?
    /// Whether it ended with a normal goodbye.
    var endedNormally: Bool?
    /// The goodbye received, if any: nothing may follow it.
    var goodbye: GoodbyeReason?

    var strings = StringTable()
    var tree = NodeTree()
    /// The snapshot being received, if one is open.
    var snapshot: SnapshotBuild?
    /// Set by `dropped`: until the next snapshot begins, events are out of place.
    var awaitingSnapshot = false
    /// The sequence of the last delta (or of the last snapshot).
    var lastSequence: UInt64?
    var deadlines = DeadlineHeap()
    var removed = RemovedNodeLog()
    /// One record per flagged node, in flag order.
    var leakRecords: [LeakRecord] = []
    /// The retainer paths of detached nodes (protocol version 2).
    var retainers = RetainerStore()
    /// Attach sites and tests (protocol version 2), by their ids on the connection.
    var origins = OriginTable()
    /// Nodes flagged leaked or unverified and not released since.
    var openLeaks = 0
    /// Attached nodes.
    var liveNodes = 0
    /// When the host process started (collector clock), when the server could tell.
    var processStartedAt: UInt64?
    var eventsIngested: UInt64 = 0
    var droppedReported: UInt64 = 0
    /// The host's watermark, on the collector's clock: the latest time up to which the host's
    /// stream is known to be complete. Graces are judged against it, never against the
    /// collector's own clock, so a verdict does not depend on how far behind the collector is.
    var watermark: UInt64?
    /// Whether the host has sent a heartbeat: from then on only heartbeats move the watermark
    /// (a host that notices some releases by polling vouches for its stream through them).
    var heartbeatsSeen = false
    /// Whether any frame followed the hello. A session without one is a phantom (a host that
    /// gave up waiting for the answer to its hello) and is forgotten when it ends.
    var receivedFrames = false

    init(id: SessionID, hello: Hello, now: UInt64, clocks: ClockRelation, settings: CollectorSettings) {
        self.id = id
        self.pid = hello.pid
        self.processName = hello.processName
        self.connectedAt = now
        self.settings = settings
        self.clock = HostClockMapping(helloTime: hello.monotonicNanos, now: now, relation: clocks)
    }

    /// Whether the session has ended.
    var hasEnded: Bool { endedAt != nil }

    /// A host time mapped to the collector's clock, clamped to the range of `UInt64`.
    func collectorTime(_ hostTime: UInt64) -> UInt64 {
        clock.collectorTime(hostTime)
    }

    /// Moves the watermark to `time` (collector clock) if that is later, then flags what is due.
    mutating func advanceWatermark(to time: UInt64, into changes: inout [TreeChange]) {
        if watermark.map({ time > $0 }) ?? true { watermark = time }
        processDue(into: &changes)
    }

    /// The watermark that an event at `time` (host clock) implies: for a host that does not
    /// send heartbeats, its delta times; nothing while the tree is stale (after `dropped`).
    mutating func noteEventTime(_ time: UInt64, into changes: inout [TreeChange]) {
        guard !heartbeatsSeen, !awaitingSnapshot else { return }
        advanceWatermark(to: collectorTime(time), into: &changes)
    }

    /// The end of a grace that starts at `detachedAt`.
    func deadline(after detachedAt: UInt64) -> UInt64 {
        let (sum, overflow) = detachedAt.addingReportingOverflow(settings.graceNanos)
        return overflow ? .max : sum
    }

    // MARK: - Ingest

    /// Applies one frame of the host stream; appends what changed to `changes`.
    mutating func ingest(_ message: WireMessage, now: UInt64, into changes: inout [TreeChange]) throws(SessionError) {
        guard endedAt == nil else {
            throw SessionError(.unexpectedMessage, "\(message.frameType) frame after the end of session \(id)")
        }
        if let goodbye {
            throw SessionError(.unexpectedMessage, "\(message.frameType) frame after goodbye (\(goodbye))")
        }
        defer { receivedFrames = true }
        switch message {
        case .defineString(let frame):
            try define(frame)
        case .snapshotBegin(let frame):
            try beginSnapshot(frame)
        case .snapshotEnd(let sequence):
            try endSnapshot(sequence: sequence, now: now, into: &changes)
        case .nodeAttached(let frame):
            if snapshot != nil { try replayAttach(frame) } else { try attach(frame, into: &changes) }
        case .objectAdded(let frame):
            if snapshot != nil { try replayObjectAdded(frame) } else { try addObject(frame, into: &changes) }
        case .stateChanged(let frame):
            if snapshot != nil {
                try replayStateChanged(frame)
            } else {
                try changeState(frame, into: &changes)
            }
        case .nodeDetached(let frame):
            if snapshot != nil { try replayDetached(frame) } else { try detach(frame, into: &changes) }
        case .objectReleased(let frame):
            if snapshot != nil { try replayReleased(frame) } else { try release(frame, into: &changes) }
        case .dropped(let count):
            try requireOutsideSnapshot("dropped")
            droppedReported &+= count
            awaitingSnapshot = true
        case .goodbye(let reason):
            try requireOutsideSnapshot("goodbye")
            if awaitingSnapshot {
                throw SessionError(.unexpectedMessage, "goodbye after dropped, before the snapshot that must follow it")
            }
            goodbye = reason
        case .heartbeat(let time):
            try requireOutsideSnapshot("heartbeat")
            heartbeatsSeen = true
            // After `dropped` the tree is stale until the snapshot: nothing is judged on it.
            if !awaitingSnapshot { advanceWatermark(to: collectorTime(time), into: &changes) }
        case .retainers(let frame):
            try requireOutsideSnapshot("retainers")
            try noteRetainers(frame, into: &changes)
        case .defineSite(let frame):
            try defineSite(frame)
        case .defineTest(let frame):
            try defineTest(frame)
        case .nodeOrigin(let frame):
            try noteOrigin(frame)
        case .hello:
            throw SessionError(.unexpectedMessage, "a second hello on a host stream")
        case .helloAccepted, .helloRefused, .request, .response, .event, .explain, .explained:
            throw SessionError(.unexpectedMessage, "\(message.frameType) frame on a host stream")
        }
    }

    private func requireOutsideSnapshot(_ frame: String) throws(SessionError) {
        if let snapshot {
            throw SessionError(
                .snapshotNesting, "\(frame) inside the snapshot at sequence \(snapshot.sequence), before its end")
        }
    }

    private mutating func define(_ frame: DefineStringFrame) throws(SessionError) {
        guard frame.stringID != 0 else {
            throw SessionError(.duplicateString, "defineString uses the reserved string id 0")
        }
        guard !strings.contains(frame.stringID) else {
            throw SessionError(.duplicateString, "defineString redefines string id \(frame.stringID)")
        }
        guard strings.count < settings.maxStringsPerSession,
            strings.byteCount + frame.value.utf8.count <= settings.maxStringBytesPerSession
        else {
            throw SessionError(
                .tooManyStrings,
                "the host defined more than \(settings.maxStringsPerSession) strings or "
                    + "\(settings.maxStringBytesPerSession) bytes of strings")
        }
        strings.define(frame.stringID, frame.value)
    }

    /// Checks that a frame's string id is defined (or 0, when `optional`).
    func checkString(_ stringID: UInt32, optional: Bool, _ field: String, of frame: String) throws(SessionError) {
        if stringID == 0 {
            guard optional else { throw SessionError(.unknownString, "\(frame) \(field) uses string id 0") }
            return
        }
        guard strings.contains(stringID) else {
            throw SessionError(.unknownString, "\(frame) \(field) uses string id \(stringID) before its defineString")
        }
    }

    /// Checks a delta's place and sequence (the sequence is recorded once the frame is applied).
    private func checkDelta(_ sequence: UInt64, _ frame: String) throws(SessionError) {
        if awaitingSnapshot {
            throw SessionError(.unexpectedMessage, "\(frame) after dropped, before the snapshot that must follow it")
        }
        if let lastSequence, sequence <= lastSequence {
            throw SessionError(
                .sequenceRegression, "\(frame) has sequence \(sequence), not after the previous \(lastSequence)")
        }
    }

    /// The slot an event (other than an attach) is about, or nil when it is about a node this
    /// session removed as clean (tolerated: the event changes nothing).
    private func eventSlot(_ nodeID: UInt64, _ frame: String) throws(SessionError) -> UInt32? {
        if let slot = tree.slot(of: nodeID) {
            switch tree.slots[Int(slot)].phase {
            case .anchor:
                return nil
            case .placeholder:
                if removed.contains(nodeID) { return nil }
            default:
                return slot
            }
        } else if removed.contains(nodeID) {
            return nil
        }
        throw SessionError(.unknownNode, "\(frame) names node \(nodeID), which was never attached")
    }

    /// Records a delta as applied.
    private mutating func accept(_ sequence: UInt64) {
        lastSequence = sequence
        eventsIngested &+= 1
    }

    private mutating func attach(
        _ frame: NodeAttachedFrame, into changes: inout [TreeChange]
    ) throws(SessionError) {
        try checkDelta(frame.sequence, "nodeAttached")
        let plan = try planAttach(frame, in: tree, removed: removed)
        noteEventTime(frame.timeNanos, into: &changes)
        let result = Self.applyAttach(frame, plan: plan, at: collectorTime(frame.timeNanos), in: &tree)
        liveNodes += 1
        accept(frame.sequence)
        if let placeholder = result.placeholder { changes.append(.attached(nodeInfo(placeholder, depth: nil))) }
        changes.append(.attached(nodeInfo(result.slot, depth: nil)))
    }

    private mutating func addObject(
        _ frame: ObjectAddedFrame, into changes: inout [TreeChange]
    ) throws(SessionError) {
        try checkDelta(frame.sequence, "objectAdded")
        guard let slot = tree.slot(of: frame.nodeID), !tree.slots[Int(slot)].isPlaceholder else {
            throw SessionError(.unknownNode, "objectAdded names node \(frame.nodeID), which is not in the tree")
        }
        try checkObject(frame, slot: slot, in: tree)
        noteEventTime(frame.timeNanos, into: &changes)
        let object = ObjectSlot(frame)
        _ = tree.addObject(object, to: slot)
        accept(frame.sequence)
        changes.append(.objectAdded(id: frame.nodeID, object: objectInfo(object)))
    }

    /// Checks an object addition against `tree`.
    func checkObject(_ frame: ObjectAddedFrame, slot: UInt32, in tree: NodeTree) throws(SessionError) {
        try checkString(frame.typeNameStringID, optional: false, "typeName", of: "objectAdded")
        try checkString(frame.roleStringID, optional: true, "role", of: "objectAdded")
        guard tree.slots[Int(slot)].objectInsertionPoint(frame.objectIndex) != nil else {
            throw SessionError(
                .duplicateObject, "objectAdded reuses object index \(frame.objectIndex) of node \(frame.nodeID)")
        }
        guard tree.objectCount < settings.maxObjectsPerSession else {
            throw SessionError(
                .tooManyObjects, "the host's nodes hold more than \(settings.maxObjectsPerSession) objects")
        }
    }

    private mutating func changeState(
        _ frame: StateChangedFrame, into changes: inout [TreeChange]
    ) throws(SessionError) {
        try checkDelta(frame.sequence, "stateChanged")
        guard let slot = try eventSlot(frame.nodeID, "stateChanged") else { return accept(frame.sequence) }
        noteEventTime(frame.timeNanos, into: &changes)
        let before = tree.slots[Int(slot)].status
        tree.slots[Int(slot)].state = frame.state.rawValue
        let after = tree.slots[Int(slot)].status
        accept(frame.sequence)
        if after != before { changes.append(.statusChanged(id: frame.nodeID, status: after)) }
    }

    private mutating func detach(
        _ frame: NodeDetachedFrame, into changes: inout [TreeChange]
    ) throws(SessionError) {
        try checkDelta(frame.sequence, "nodeDetached")
        guard let slot = try eventSlot(frame.nodeID, "nodeDetached") else { return accept(frame.sequence) }
        guard tree.slots[Int(slot)].phase == .attached else {
            throw SessionError(.alreadyDetached, "nodeDetached for node \(frame.nodeID), which is already detached")
        }
        noteEventTime(frame.timeNanos, into: &changes)
        let detachedAt = collectorTime(frame.timeNanos)
        tree.slots[Int(slot)].phase = .detached
        tree.slots[Int(slot)].detachedAt = detachedAt
        liveNodes -= 1
        accept(frame.sequence)
        changes.append(.statusChanged(id: frame.nodeID, status: .detached))
        if tree.slots[Int(slot)].aliveCount == 0 {
            releaseCleanly(slot, into: &changes)
        } else {
            deadlines.push(.init(deadline: deadline(after: detachedAt), id: frame.nodeID, slot: slot))
            processDue(into: &changes)
        }
    }

    private mutating func release(
        _ frame: ObjectReleasedFrame, into changes: inout [TreeChange]
    ) throws(SessionError) {
        try checkDelta(frame.sequence, "objectReleased")
        guard let slot = try eventSlot(frame.nodeID, "objectReleased") else { return accept(frame.sequence) }
        try checkRelease(frame, slot: slot, in: tree)
        noteEventTime(frame.timeNanos, into: &changes)
        // A release stamped after the node's deadline proves an object was alive then (release
        // times are never later than the release itself): the node leaked, whatever the
        // watermark says yet, and this release may make it a late one.
        let releasedAt = collectorTime(frame.timeNanos)
        if tree.slots[Int(slot)].phase == .detached {
            let due = deadline(after: tree.slots[Int(slot)].detachedAt)
            if releasedAt > due { flag(slot, verdict: .leaked, at: due, into: &changes) }
        }
        _ = tree.releaseObject(frame.objectIndex, of: slot)
        accept(frame.sequence)
        changes.append(.objectReleased(id: frame.nodeID, index: frame.objectIndex))
        guard tree.slots[Int(slot)].aliveCount == 0 else { return }
        switch tree.slots[Int(slot)].phase {
        case .detached:
            releaseCleanly(slot, into: &changes)
            processDue(into: &changes)
        case .leaked:
            markLateRelease(slot, at: releasedAt, into: &changes)
        case .attached, .lateRelease, .unverified, .anchor, .placeholder:
            break
        }
    }

    /// Checks that an object release names an alive object of the node in `slot`.
    func checkRelease(_ frame: ObjectReleasedFrame, slot: UInt32, in tree: NodeTree) throws(SessionError) {
        let node = tree.slots[Int(slot)]
        guard let position = node.objectPosition(frame.objectIndex) else {
            throw SessionError(
                .unknownObject, "objectReleased names object \(frame.objectIndex) of node \(frame.nodeID), never added")
        }
        guard node.objects[position].isAlive else {
            throw SessionError(
                .unknownObject,
                "objectReleased names object \(frame.objectIndex) of node \(frame.nodeID) a second time")
        }
    }
}
