import NodescopeWire

/// Everything the collector knows of one host connection: its phase (``SessionPhase``: the
/// snapshot being received, the goodbye, the end), its interned strings, its tree, the sequence
/// and snapshot rules, the leak state machine and its leak records. Every phase transition is
/// made in this file; every verdict rule is in ``VerdictRules``.
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

    /// Where the session stands in its life (``SessionPhase``), with what belongs to that stage.
    private(set) var phase = SessionPhase.greeted

    var strings = StringTable()
    var tree = NodeTree()
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
    /// The host's watermark (``HostWatermark``): graces are judged against it.
    private(set) var watermark = HostWatermark()

    init(id: SessionID, hello: Hello, now: UInt64, clocks: ClockRelation, settings: CollectorSettings) {
        self.id = id
        self.pid = hello.pid
        self.processName = hello.processName
        self.connectedAt = now
        self.settings = settings
        self.clock = HostClockMapping(helloTime: hello.monotonicNanos, now: now, relation: clocks)
    }

    /// Whether the session has ended.
    var hasEnded: Bool { phase.hasEnded }

    /// When the session ended, collector clock; nil while the host is connected.
    var endedAt: UInt64? { phase.ending?.at }

    /// Whether any frame followed the hello. A session without one is a phantom (a host that
    /// gave up waiting for the answer to its hello) and is forgotten when it ends.
    var receivedFrames: Bool { phase.receivedFrames }

    /// A host time mapped to the collector's clock, clamped to the range of `UInt64`.
    func collectorTime(_ hostTime: UInt64) -> UInt64 {
        clock.collectorTime(hostTime)
    }

    /// Moves the watermark to `time` (collector clock) if that is later, then flags what is due.
    mutating func advanceWatermark(to time: UInt64, into changes: inout [TreeChange]) {
        watermark.advance(to: time)
        processDue(into: &changes)
    }

    /// The watermark that a delta at `time` (host clock) implies, by
    /// ``VerdictRules/eventTimeMovesWatermark(_:in:)``.
    mutating func noteEventTime(_ time: UInt64, into changes: inout [TreeChange]) {
        guard VerdictRules.eventTimeMovesWatermark(watermark, in: phase) else { return }
        advanceWatermark(to: collectorTime(time), into: &changes)
    }

    /// The end of a grace that starts at `detachedAt`.
    func deadline(after detachedAt: UInt64) -> UInt64 {
        VerdictRules.deadline(after: detachedAt, grace: settings.graceNanos)
    }

    // MARK: - Ingest

    /// Applies one frame of the host stream; appends what changed to `changes`. A frame out of
    /// place in the session's ``phase`` throws and changes nothing (but a session that received
    /// one is no phantom).
    mutating func ingest(_ message: WireMessage, now: UInt64, into changes: inout [TreeChange]) throws(SessionError) {
        switch phase {
        case .ended:
            throw SessionError(.unexpectedMessage, "\(message.frameType) frame after the end of session \(id)")
        case .saidGoodbye(let goodbye):
            throw SessionError(.unexpectedMessage, "\(message.frameType) frame after goodbye (\(goodbye))")
        case .greeted:
            phase = .live
            try ingestOutsideSnapshot(message, into: &changes)
        case .live, .awaitingSnapshot:
            try ingestOutsideSnapshot(message, into: &changes)
        case .receivingSnapshot(var build):
            // The build leaves the phase while it grows, so that its tree has one owner and is
            // not copied; `receiveInSnapshot` says what follows (the build back, or `live`).
            phase = .live
            do {
                phase = try receiveInSnapshot(message, building: &build, now: now, into: &changes)
            } catch {
                phase = .receivingSnapshot(build)
                throw error
            }
        }
    }

    /// Ends the session at `now` (collector clock); `normally` when the stream ended after a
    /// goodbye and without a violation. What is pending is judged (``judgeAtEnd(_:into:)``), and a
    /// snapshot being received is dropped with its phase. Ending an ended session changes nothing.
    mutating func end(normally: Bool, now: UInt64) -> [TreeChange] {
        guard !phase.hasEnded else { return [] }
        let ending = SessionPhase.Ending(at: now, normally: normally, goodbye: phase.goodbye, receivedFrames: phase.receivedFrames)
        phase = .ended(ending)
        var changes: [TreeChange] = []
        judgeAtEnd(ending, into: &changes)
        changes.append(.sessionEnded(normally: normally))
        return changes
    }

    /// Applies a frame outside a snapshot (in the phases `live` and `awaitingSnapshot`).
    private mutating func ingestOutsideSnapshot(
        _ message: WireMessage, into changes: inout [TreeChange]
    ) throws(SessionError) {
        switch message {
        case .snapshotBegin(let frame):
            phase = .receivingSnapshot(try beginSnapshot(frame))
        case .snapshotEnd(let sequence):
            throw SessionError(.snapshotNesting, "snapshotEnd at sequence \(sequence) without snapshotBegin")
        case .nodeAttached(let frame):
            try attach(frame, into: &changes)
        case .objectAdded(let frame):
            try addObject(frame, into: &changes)
        case .stateChanged(let frame):
            try changeState(frame, into: &changes)
        case .nodeDetached(let frame):
            try detach(frame, into: &changes)
        case .objectReleased(let frame):
            try release(frame, into: &changes)
        case .dropped(let count):
            droppedReported &+= count
            phase = .awaitingSnapshot
        case .goodbye(let reason):
            if phase.isStale {
                throw SessionError(.unexpectedMessage, "goodbye after dropped, before the snapshot that must follow it")
            }
            phase = .saidGoodbye(reason)
        case .heartbeat(let time):
            watermark.noteHeartbeat()
            if VerdictRules.heartbeatMovesWatermark(in: phase) { advanceWatermark(to: collectorTime(time), into: &changes) }
        case .retainers(let frame):
            try noteRetainers(frame, into: &changes)
        case .nodeOrigin(let frame):
            try noteOrigin(frame)
        default:
            try ingestAnywhere(message)
        }
    }

    /// Applies a frame inside the snapshot `build`; returns the phase that follows.
    private mutating func receiveInSnapshot(
        _ message: WireMessage, building build: inout SnapshotBuild, now: UInt64, into changes: inout [TreeChange]
    ) throws(SessionError) -> SessionPhase {
        switch message {
        case .snapshotBegin(let frame):
            throw SessionError(
                .snapshotNesting,
                "snapshotBegin at sequence \(frame.sequence) inside the snapshot at sequence \(build.sequence)")
        case .snapshotEnd(let sequence):
            try endSnapshot(&build, sequence: sequence, now: now, into: &changes)
            return .live
        case .nodeAttached(let frame):
            try replayAttach(frame, into: &build)
        case .objectAdded(let frame):
            try replayObjectAdded(frame, into: &build)
        case .stateChanged(let frame):
            try replayStateChanged(frame, into: &build)
        case .nodeDetached(let frame):
            try replayDetached(frame, into: &build)
        case .objectReleased(let frame):
            try replayReleased(frame, into: &build)
        case .nodeOrigin(let frame):
            try noteOrigin(frame, into: &build)
        case .dropped, .goodbye, .heartbeat, .retainers:
            throw SessionError(
                .snapshotNesting,
                "\(message.frameType) inside the snapshot at sequence \(build.sequence), before its end")
        default:
            try ingestAnywhere(message)
        }
        return .receivingSnapshot(build)
    }

    /// Applies a frame that may come in any phase that accepts frames (strings, sites, tests),
    /// or refuses one that has no place on a host stream.
    private mutating func ingestAnywhere(_ message: WireMessage) throws(SessionError) {
        switch message {
        case .defineString(let frame):
            try define(frame)
        case .defineSite(let frame):
            try defineSite(frame)
        case .defineTest(let frame):
            try defineTest(frame)
        case .hello:
            throw SessionError(.unexpectedMessage, "a second hello on a host stream")
        default:
            // Frames of the other streams (the frames of the host stream's phases never come here).
            throw SessionError(.unexpectedMessage, "\(message.frameType) frame on a host stream")
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
        if phase.isStale {
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
            if VerdictRules.releaseProvesLeak(releasedAt: releasedAt, deadline: due) {
                flag(slot, verdict: .leaked, at: due, into: &changes)
            }
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
