import NodescopeWire
import Testing

@testable import NodescopeCollector

/// A session's life as one ``SessionPhase``: the legal sequence, and frames that a hostile host
/// sends out of place, each refused without a trap and without changing the phase.
@Suite("Session phase: the legal sequence and frames out of place")
struct SessionPhaseTests {
    static let second = Harness.second

    /// A fresh session, its hello read at host time 1 s.
    static func session() -> HostSession {
        HostSession(
            id: SessionID(rawValue: 1),
            hello: Hello(role: .host, pid: 7, monotonicNanos: second, wallNanos: 0, processName: "p"),
            now: second, clocks: .same, settings: CollectorSettings())
    }

    /// The phase's name and, for a snapshot being received, its sequence and nodes so far.
    static func describe(_ phase: SessionPhase) -> String {
        switch phase {
        case .greeted: "greeted"
        case .live: "live"
        case .awaitingSnapshot: "awaitingSnapshot"
        case .receivingSnapshot(let build): "receivingSnapshot(\(build.sequence), \(build.attachedNodes)/\(build.expectedNodes))"
        case .saidGoodbye(let reason): "saidGoodbye(\(reason))"
        case .ended(let ending): "ended(normally: \(ending.normally), goodbye: \(ending.goodbye.map { "\($0)" } ?? "none"))"
        }
    }

    /// Feeds `message`; returns the error's code, nil when it was accepted.
    @discardableResult
    static func feed(_ message: WireMessage, to session: inout HostSession, at now: UInt64 = second) -> SessionError.Code? {
        var changes: [TreeChange] = []
        do {
            try session.ingest(message, now: now, into: &changes)
            return nil
        } catch {
            return error.code
        }
    }

    static let kind = WireMessage.defineString(DefineStringFrame(stringID: 1, value: "Flow"))

    static func attach(_ id: UInt64, sequence: UInt64) -> WireMessage {
        .nodeAttached(
            NodeAttachedFrame(sequence: sequence, timeNanos: second, nodeID: id, parentID: 0, kindStringID: 1, nameStringID: 0))
    }

    @Test func aHostGoesThroughEveryPhaseInTheLegalOrder() {
        var session = Self.session()
        var seen = [Self.describe(session.phase)]
        let frames: [WireMessage] = [
            Self.kind,
            .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 1)),
            Self.attach(1, sequence: 0),
            .snapshotEnd(sequence: 0),
            Self.attach(2, sequence: 1),
            .dropped(count: 3),
            .heartbeat(monotonicNanos: 9 * Self.second),
            .snapshotBegin(SnapshotBeginFrame(sequence: 5, nodeCount: 0)),
            .snapshotEnd(sequence: 5),
            .heartbeat(monotonicNanos: 2 * Self.second),
            .goodbye(.normalExit),
        ]
        for frame in frames {
            #expect(Self.feed(frame, to: &session) == nil, "\(frame.frameType) refused")
            seen.append(Self.describe(session.phase))
        }
        #expect(
            seen == [
                "greeted", "live", "receivingSnapshot(0, 0/1)", "receivingSnapshot(0, 1/1)", "live", "live",
                "awaitingSnapshot", "awaitingSnapshot", "receivingSnapshot(5, 0/0)", "live", "live", "saidGoodbye(normalExit)",
            ])
        // The heartbeat on the stale tree moved nothing; the one after the snapshot did.
        #expect(session.watermark.time == 2 * Self.second)
        #expect(session.watermark.heartbeatsSeen)
        let changes = session.end(normally: true, now: 3 * Self.second)
        #expect(changes.last == .sessionEnded(normally: true))
        #expect(Self.describe(session.phase) == "ended(normally: true, goodbye: normalExit)")
        #expect(session.endedAt == 3 * Self.second)
        #expect(session.sessionEnd == .normalExit)
        #expect(session.receivedFrames)
    }

    @Test func everyFrameAfterGoodbyeIsRefusedAndTheGoodbyeStands() {
        var session = Self.session()
        Self.feed(Self.kind, to: &session)
        Self.feed(.goodbye(.flushIncomplete), to: &session)
        for frame in [Self.attach(1, sequence: 1), .goodbye(.normalExit), .heartbeat(monotonicNanos: 5), Self.kind] {
            #expect(Self.feed(frame, to: &session) == .unexpectedMessage)
            #expect(Self.describe(session.phase) == "saidGoodbye(flushIncomplete)")
        }
        _ = session.end(normally: true, now: 2 * Self.second)
        #expect(session.sessionEnd == .exitFlushCut)
        // After the end, the end stands.
        #expect(Self.feed(.goodbye(.normalExit), to: &session) == .unexpectedMessage)
        #expect(session.end(normally: false, now: 3 * Self.second).isEmpty)
        #expect(session.endedAt == 2 * Self.second)
    }

    @Test func aSecondSnapshotBeginInsideOneIsRefusedAndTheFirstGoesOn() {
        var session = Self.session()
        Self.feed(Self.kind, to: &session)
        Self.feed(.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 2)), to: &session)
        Self.feed(Self.attach(1, sequence: 0), to: &session)
        #expect(Self.feed(.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 9)), to: &session) == .snapshotNesting)
        #expect(Self.describe(session.phase) == "receivingSnapshot(0, 1/2)")
        // A refused frame inside the snapshot leaves what was built.
        #expect(Self.feed(Self.attach(1, sequence: 0), to: &session) == .duplicateNode)
        #expect(Self.describe(session.phase) == "receivingSnapshot(0, 1/2)")
        #expect(Self.feed(Self.attach(2, sequence: 0), to: &session) == nil)
        #expect(Self.feed(.snapshotEnd(sequence: 0), to: &session) == nil)
        #expect(session.tree.count == 2)
        #expect(Self.describe(session.phase) == "live")
    }

    @Test func framesThatHaveNoPlaceInASnapshotAreRefusedThere() {
        for frame: WireMessage in [
            .goodbye(.normalExit), .dropped(count: 1), .heartbeat(monotonicNanos: 1),
            .retainers(RetainersFrame(RetainerPath(objectIndex: 0, verdict: .global), nodeID: 1)),
        ] {
            var session = Self.session()
            Self.feed(.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), to: &session)
            #expect(Self.feed(frame, to: &session) == .snapshotNesting, "\(frame.frameType)")
            #expect(Self.describe(session.phase) == "receivingSnapshot(0, 0/0)")
        }
    }

    @Test func goodbyeBeforeTheSnapshotThatDroppedCallsForIsRefused() {
        var session = Self.session()
        Self.feed(Self.kind, to: &session)
        Self.feed(Self.attach(1, sequence: 1), to: &session)
        Self.feed(.dropped(count: 2), to: &session)
        #expect(Self.feed(.goodbye(.normalExit), to: &session) == .unexpectedMessage)
        #expect(Self.feed(Self.attach(2, sequence: 4), to: &session) == .unexpectedMessage)
        #expect(Self.describe(session.phase) == "awaitingSnapshot")
        // The stream may still end abnormally: the stale tree's detached nodes stay as they were.
        #expect(session.end(normally: false, now: 2 * Self.second).last == .sessionEnded(normally: false))
        #expect(session.sessionEnd == .abnormal)
    }

    @Test func snapshotEndWithoutABeginIsRefused() {
        var session = Self.session()
        #expect(Self.feed(.snapshotEnd(sequence: 0), to: &session) == .snapshotNesting)
        // A refused first frame still makes the session more than a phantom.
        #expect(Self.describe(session.phase) == "live")
        #expect(session.receivedFrames)
    }

    @Test func anEndInsideASnapshotDropsItAndKeepsTheTreeBefore() {
        var session = Self.session()
        Self.feed(Self.kind, to: &session)
        Self.feed(Self.attach(1, sequence: 1), to: &session)
        Self.feed(.snapshotBegin(SnapshotBeginFrame(sequence: 1, nodeCount: 1)), to: &session)
        Self.feed(Self.attach(7, sequence: 1), to: &session)
        _ = session.end(normally: false, now: 2 * Self.second)
        #expect(Self.describe(session.phase) == "ended(normally: false, goodbye: none)")
        #expect(session.tree.slot(of: 1) != nil)
        #expect(session.tree.slot(of: 7) == nil)
    }

    @Test func aSessionThatEndsRightAfterItsHelloIsAPhantom() {
        var collector = Collector()
        let session = collector.openSession(
            Hello(role: .host, pid: 3, monotonicNanos: 10, wallNanos: 0, processName: "gave-up"), now: 10)
        #expect(collector.sessionValue(session)?.receivedFrames == false)
        _ = collector.endSession(session, normally: false, now: 20)
        #expect(collector.summary(session) == nil)
    }
}

/// The verdict rules, one table each, on plain values.
@Suite("Verdict rules: graces, resync and the end of a stream")
struct VerdictRulesTests {
    static func ending(normally: Bool, goodbye: GoodbyeReason?) -> SessionPhase.Ending {
        SessionPhase.Ending(at: 100, normally: normally, goodbye: goodbye, receivedFrames: true)
    }

    static func watermark(heartbeats: Bool, at time: UInt64? = nil) -> HostWatermark {
        var watermark = HostWatermark()
        if heartbeats { watermark.noteHeartbeat() }
        if let time { watermark.advance(to: time) }
        return watermark
    }

    @Test func nothingIsDueBeforeTheHostVouchesForATime() {
        #expect(!VerdictRules.hasRunOut(0, by: HostWatermark()))
        #expect(VerdictRules.hasRunOut(5, by: Self.watermark(heartbeats: false, at: 5)))
        #expect(!VerdictRules.hasRunOut(6, by: Self.watermark(heartbeats: false, at: 5)))
        #expect(VerdictRules.deadline(after: .max - 1, grace: 10) == .max)
        #expect(VerdictRules.releaseProvesLeak(releasedAt: 11, deadline: 10))
        #expect(!VerdictRules.releaseProvesLeak(releasedAt: 10, deadline: 10))
    }

    @Test func deltaTimesVouchOnlyUntilTheFirstHeartbeatAndNeverOnAStaleTree() {
        #expect(VerdictRules.eventTimeMovesWatermark(Self.watermark(heartbeats: false), in: .live))
        #expect(!VerdictRules.eventTimeMovesWatermark(Self.watermark(heartbeats: true), in: .live))
        #expect(!VerdictRules.eventTimeMovesWatermark(Self.watermark(heartbeats: false), in: .awaitingSnapshot))
        #expect(VerdictRules.heartbeatMovesWatermark(in: .live))
        #expect(!VerdictRules.heartbeatMovesWatermark(in: .awaitingSnapshot))
    }

    @Test func aResyncKeepsFlagsWhileAnObjectIsAlive() {
        #expect(VerdictRules.resynced(wasFlagged: true, hasAliveObject: true) == .leaked)
        #expect(VerdictRules.resynced(wasFlagged: true, hasAliveObject: false) == .lateRelease)
        #expect(VerdictRules.resynced(wasFlagged: false, hasAliveObject: true) == .awaitingRelease)
        #expect(VerdictRules.resynced(wasFlagged: false, hasAliveObject: false) == .released)
    }

    /// docs/PROTOCOL.md, "Verdicts at the end": a node whose grace had not run out by the watermark.
    @Test(arguments: [
        // normally, goodbye, holdExit, heartbeats, settled by paths → verdict
        (true, GoodbyeReason?.some(.normalExit), true, false, false, LeakRecord.Verdict.leaked),
        (true, nil, true, false, false, .leaked),
        (true, .normalExit, true, true, false, .unverified),
        (true, .normalExit, false, false, false, .unverified),
        (true, .normalExit, false, false, true, .leaked),
        (true, .normalExit, true, true, true, .leaked),
        (true, .flushIncomplete, true, false, true, .unverified),
        (true, .agentDisabled, true, false, true, .unverified),
        (true, nil, false, false, true, .unverified),
        (false, .normalExit, true, false, true, .unverified),
        (false, nil, true, false, true, .unverified),
    ])
    func theEndOfAStreamDecidesWhatIsPending(
        normally: Bool, goodbye: GoodbyeReason?, holdExit: Bool, heartbeats: Bool, provable: Bool,
        expected: LeakRecord.Verdict
    ) {
        var asked = false
        let verdict = VerdictRules.verdictAtEnd(
            Self.ending(normally: normally, goodbye: goodbye), holdExit: holdExit,
            watermark: Self.watermark(heartbeats: heartbeats)
        ) {
            asked = true
            return provable ? .leaked : nil
        }
        #expect(verdict == expected)
        // The host's paths are read only at a normal end with goodbye `normalExit`.
        if asked { #expect(normally && goodbye == .normalExit) }
    }

    @Test func aNodeJudgedAtTheEndIsFlaggedAtTheWatermarkNeverBeforeItsDetach() {
        #expect(VerdictRules.flaggedAtEnd(detachedAt: 7, watermark: HostWatermark()) == 7)
        #expect(VerdictRules.flaggedAtEnd(detachedAt: 7, watermark: Self.watermark(heartbeats: true, at: 9)) == 9)
        #expect(VerdictRules.flaggedAtEnd(detachedAt: 7, watermark: Self.watermark(heartbeats: true, at: 3)) == 7)
    }

    @Test func onlyStaticHoldersOfEveryAliveObjectSettleANode() {
        let global = RetainerPath(objectIndex: 0, verdict: .global)
        let stack = RetainerPath(objectIndex: 1, verdict: .stack)
        #expect(VerdictRules.settledVerdict(alive: [0], paths: [global]) == .leaked)
        #expect(VerdictRules.settledVerdict(alive: [0, 1], paths: [global, stack]) == nil)
        #expect(VerdictRules.settledVerdict(alive: [0, 1], paths: [global]) == nil)
        #expect(VerdictRules.settledVerdict(alive: [], paths: [global]) == nil)
        #expect(VerdictRules.settledVerdict(alive: [0], paths: []) == nil)
    }
}
