import NodesTracking
import NodescopeWire

/// The decisions of the agent's writer thread, as a pure state machine: when to look for the
/// collector's socket, connect, say hello and wait for the answer, stream (snapshot, events,
/// heartbeats), hold a normal exit for pending graces, flush within a bound and say goodbye.
///
/// It performs no I/O and reads no clock. The writer thread (``AgentWriter``) feeds it inputs,
/// each with the host's monotonic time in nanoseconds, and performs the ``Action`` it returns;
/// an action that reports nothing back is followed by ``tick(now:logBacklog:)``. So every rule below is
/// tested with a manual clock, in milliseconds, without a socket.
///
/// ```
/// disconnected ─▶ connecting ─▶ handshaking ─▶ streaming ─exit─▶ holding ─▶ draining
///   ▲     ▲            │              │             │                │          │
///   │     └─ failed ───┘              └─ closing ◀──┴─ lost, stop ───┴─ goodbye ┘
///   └──────────── reconnect ─────────────┘  └─ exit or stop ─▶ done
/// ```
///
/// - Disconnected, it examines the socket path every ``socketCheckInterval`` (so a collector
///   that appears is joined within a second), retries a socket file that failed only when the
///   file changes or after ``staleSocketRetry``, and a collector that refused after
///   ``refusalRetry``. A refusal, an untrusted socket and a path too long are logged once.
/// - Handshaking, it waits up to ``helloAnswerWait`` for the answer, in slices, so that a stop
///   or an exit is seen between them.
/// - Streaming, each round polls the weak references and reads the time it vouches for before
///   it takes the queue, sends a snapshot first on every connection and after every drop, the
///   events, and a heartbeat every ``heartbeatInterval`` while a grace is pending.
/// - On a connection of protocol version 2, once a detached node has had an object alive for
///   longer than the grace, it asks for the holders of that object to be explained (once per
///   node): between rounds while streaming, and during an exit's hold, before the drain.
/// - At a normal exit it holds, when the collector asked, while a node detached within the
///   grace still has an object alive (one grace at most), then drains: rounds with a heartbeat
///   each until everything up to the exit's sequence is written, bounded by
///   ``AgentSettings/exitFlushBound(holdExit:)``; then explains the nodes still awaiting
///   release (the exit settlement) and writes on until nothing is unsent, and says goodbye
///   `normalExit`, or `flushIncomplete` when the bound cut it.
///
/// No input crashes it: an input that does not fit the phase is answered as a ``tick(now:logBacklog:)``.
struct AgentLink {
    // MARK: Timing

    /// How often a disconnected agent looks at the socket path (a `stat`).
    static let socketCheckInterval: UInt64 = 500_000_000
    /// How long a socket file that failed is left alone unless it changes.
    static let staleSocketRetry: UInt64 = 5_000_000_000
    /// How long after a refusal the collector is asked again.
    static let refusalRetry: UInt64 = 10_000_000_000
    /// How long after finding the socket path unusable (too long) it is looked at again.
    static let unusablePathRetry: UInt64 = 60_000_000_000
    /// How long a connection waits for the answer to its hello before it is given up.
    static let helloAnswerWait: UInt64 = 30_000_000_000
    /// How long one read of the answer waits, so that a stop or an exit is seen between reads.
    static let answerSliceMilliseconds: Int32 = 100
    /// How long the hello may take to be written.
    static let helloWriteMilliseconds: Int32 = 1_000
    /// How long one round's write waits for a socket that does not take everything at once.
    static let roundWriteMilliseconds: Int32 = 50
    /// How often heartbeats go out while a grace is pending (so a leak is flagged within about
    /// this much of its deadline).
    static let heartbeatInterval: UInt64 = 50_000_000
    /// How long a due heartbeat may wait while the writer works through a backlog of the
    /// log in rounds (a backlog beyond ``roundUnits``, see ``tick(now:logBacklog:)``): a leak's
    /// verdict can come this much later while
    /// the app records faster than the writer applies.
    static let heartbeatPostponement: UInt64 = 100_000_000
    /// The pause between rounds while events are still queued.
    static let busyInterval: UInt64 = 2_000_000
    /// The longest pause between rounds when nothing is pending: work wakes the writer (a
    /// change recorded, the collector's request or its end on the socket), not this timer.
    static let idleInterval: UInt64 = 30_000_000_000
    /// How often an exit hold looks at what is still awaiting release.
    static let holdCheckInterval: UInt64 = 2_000_000
    /// How long the goodbye of a normal exit may take to be written.
    static let exitGoodbyeMilliseconds: Int32 = 50
    /// How long the goodbye of a stopped agent may take to be written.
    static let stopGoodbyeMilliseconds: Int32 = 100
    /// The most explain requests kept waiting for an answer.
    static let maxQueuedRequests = 4

    // MARK: State

    /// Where the link stands.
    private(set) var phase = Phase.disconnected
    /// The stream of the latest accepted connection.
    private(set) var stream = Stream()
    /// The latest time by which an exit will be over (a hold, the flush, the goodbye), once an
    /// exit is requested; the exit hook waits that long (and a little more) for the writer.
    private(set) var exitDeadline: UInt64?

    private let settings: AgentSettings
    /// No attempt to connect before this time.
    private var notBefore: UInt64 = 0
    /// The socket file whose connection failed last, and when.
    private var failure: (file: SocketFile, at: UInt64)?
    /// Whether a refusal or an unusable socket was logged (once is enough).
    private var problemLogged = false
    /// Whether an attempt to connect has ended (whatever its outcome).
    private var triedOnce = false
    /// When a normal exit was requested.
    private var exitAt: UInt64?
    /// Whether the agent was stopped.
    private var stopRequested = false
    /// The protocol version the next hello names: the newest, until a collector refuses it as a
    /// version it does not speak; then version 1, which every collector speaks.
    private(set) var helloVersion = WireLimits.protocolVersion

    /// The most of the tracker's log a round applies (units: a release or a state change takes
    /// one, the runtime's attach eight): some 30 node cycles, tens of microseconds of work. A
    /// round holds the tracker's lock, and a thread that shares a core with the writer waits for
    /// the round, so the writer stops after this much and lets it run.
    ///
    /// While more than this waits in the log (the `logBacklog` of ``tick(now:logBacklog:)`` and
    /// ``wrote(_:logBacklog:now:)``), the writer is behind: a heartbeat due then waits
    /// (``heartbeatPostponement`` at most) for rounds of events to catch up, because its poll
    /// applies the whole log in one go, holding the tracker's lock and the writer's core for as
    /// long as that takes.
    static let roundUnits = 512

    /// Rules for the agent with `settings` (its socket path, its mode, its exit flush bound).
    init(settings: AgentSettings) {
        self.settings = settings
    }

    // MARK: Inputs

    /// Time passed (a sleep ended, or an action that reports nothing was performed): what next.
    /// `logBacklog` is how much of the tracker's log waits to be applied, in units (see
    /// ``roundUnits``); an input that does not know it passes none, and is not behind.
    mutating func tick(now: UInt64, logBacklog: Int = 0) -> Action {
        switch phase {
        case .disconnected:
            return lookForCollector(now: now)
        case .connecting:
            return .connect
        case .handshaking(_, let answerBy):
            return answerBy == nil
                ? .sendHello(waitMilliseconds: Self.helloWriteMilliseconds)
                : .awaitAnswer(waitMilliseconds: Self.answerSliceMilliseconds)
        case .streaming, .holding, .draining:
            return continueRound(now: now, logBacklog: logBacklog)
        case .closing(let next):
            guard next == .reconnect, !stopRequested, exitAt == nil else {
                phase = .done
                return .finish
            }
            phase = .disconnected
            return lookForCollector(now: now)
        case .done:
            return .finish
        }
    }

    /// The socket path was looked at: a socket file, or nothing (absent, not a socket).
    mutating func socketExamined(_ file: SocketFile?, now: UInt64) -> Action {
        guard phase == .disconnected else { return tick(now: now) }
        guard let file else { return attemptEnded(now: now) }
        if let failure, failure.file == file, now < failure.at &+ Self.staleSocketRetry {
            return attemptEnded(now: now)
        }
        phase = .connecting(file)
        return .connect
    }

    /// The connect ended.
    mutating func connectFinished(_ outcome: ConnectOutcome, now: UInt64) -> Action {
        guard case .connecting(let file) = phase else { return tick(now: now) }
        if outcome == .connected {
            phase = .handshaking(file, answerBy: nil)
            return .sendHello(waitMilliseconds: Self.helloWriteMilliseconds)
        }
        failure = (file, now)
        noteAttemptEnded(now: now)
        if case .untrusted(let reason) = outcome,
            let line = logOnce(
                "not connecting to \(settings.socketPath): \(reason); start your own collector (nodescope daemon)")
        {
            return .log(line)
        }
        return lookForCollector(now: now)
    }

    /// The hello was written (`complete`) or the socket did not take it in time.
    mutating func helloSent(complete: Bool, now: UInt64) -> Action {
        guard case .handshaking(let file, answerBy: nil) = phase else { return tick(now: now) }
        guard complete else { return giveUp(now: now, failed: nil) }
        var answerBy = now &+ Self.helloAnswerWait
        if let exitAt { answerBy = min(answerBy, exitAt &+ firstAttemptWait) }
        phase = .handshaking(file, answerBy: answerBy)
        return .awaitAnswer(waitMilliseconds: Self.answerSliceMilliseconds)
    }

    /// A read of the answer to the hello ended.
    mutating func answerRead(_ answer: Answer, now: UInt64) -> Action {
        guard case .handshaking(let file, let answerBy?) = phase else { return tick(now: now) }
        switch answer {
        case .nothing:
            guard now >= answerBy else { return .awaitAnswer(waitMilliseconds: Self.answerSliceMilliseconds) }
            return giveUp(now: now, failed: file)
        case .unusable:
            return giveUp(now: now, failed: file)
        case .refused(_, versionUnsupported: true) where helloVersion > 1:
            // An older collector: say hello again at once, one version lower (down to version 1,
            // which every collector speaks).
            helloVersion -= 1
            phase = .closing(then: afterClose)
            return .close(log: nil)
        case .refused(let reason, _):
            triedOnce = true
            notBefore = now &+ Self.refusalRetry
            phase = .closing(then: afterClose)
            return .close(log: logOnce("the collector at \(settings.socketPath) refused this process: \(reason)"))
        case .accepted(let graceNanos, let holdsExit, let version):
            triedOnce = true
            failure = nil
            stream = Stream(graceNanos: graceNanos, holdsExit: holdsExit, protocolVersion: min(version, helloVersion))
            phase = .streaming
            return .announceConnected
        }
    }

    /// The weak references were polled; every event up to `horizon` is encoded or in the
    /// writer's batch now (the poll applied the log as a take does).
    /// `oldestUnexplained` is the detach time of the earliest detached node with an object
    /// alive whose holders have not been explained.
    mutating func releasesPolled(horizon: UInt64, oldestUnexplained: UInt64?, now: UInt64) -> Action {
        guard isConnected, stream.step == .polling else { return tick(now: now) }
        stream.oldestUnexplained = oldestUnexplained
        stream.step = .taking(horizon: horizon)
        return .takeEvents
    }

    /// The queue was taken; `dropped` events were lost since the last take.
    mutating func eventsTaken(dropped: UInt64, now: UInt64) -> Action {
        guard isConnected, case .taking(let horizon) = stream.step else { return tick(now: now) }
        if stream.needsSnapshot || dropped > 0 {
            stream.step = .snapshotting(horizon: horizon)
            return .sendSnapshot(dropped: dropped)
        }
        stream.step = .sendingEvents(vouch: horizon)
        return .sendEvents(after: stream.lastSequence)
    }

    /// The snapshot was encoded: it reflects events up to `sequence`, and the latest detach of
    /// its nodes that still have an object alive was at `latestPendingDetach`.
    mutating func snapshotSent(sequence: UInt64, latestPendingDetach: UInt64?, now: UInt64) -> Action {
        guard isConnected, case .snapshotting(let horizon) = stream.step else { return tick(now: now) }
        stream.lastSequence = sequence
        stream.needsSnapshot = false
        noteDetach(at: latestPendingDetach)
        // Everything up to the horizon is in the snapshot: vouch for it before the deltas.
        if let heartbeat = vouch(horizon) {
            stream.step = .eventsNext
            return heartbeat
        }
        stream.step = .sendingEvents(vouch: nil)
        return .sendEvents(after: stream.lastSequence)
    }

    /// The events were encoded, up to sequence `through`; the latest detach among them was at
    /// `latestDetach`.
    mutating func eventsSent(through sequence: UInt64, latestDetach: UInt64?, now: UInt64) -> Action {
        guard isConnected, case .sendingEvents(let horizon) = stream.step else { return tick(now: now) }
        stream.lastSequence = max(stream.lastSequence, sequence)
        noteDetach(at: latestDetach)
        if let heartbeat = vouch(horizon) {
            stream.step = .writeNext
            return heartbeat
        }
        return write()
    }

    /// A write ended; `logBacklog` as for ``tick(now:logBacklog:)``.
    mutating func wrote(_ outcome: WriteOutcome, logBacklog: Int, now: UInt64) -> Action {
        guard isConnected, stream.step == .writing || stream.step == .flushingLeftover else {
            return tick(now: now, logBacklog: logBacklog)
        }
        if outcome == .failed { return connectionLost(log: nil) }
        let leftover = stream.step == .flushingLeftover
        stream.unsentBytes = outcome == .partly
        // A remainder written in full lets the round go on to encode more.
        if leftover, outcome == .all { return collect(now: now, logBacklog: logBacklog) }
        stream.step = .reading
        return .readIncoming
    }

    /// What the collector sent was read; `queueIsEmpty` tells whether events wait.
    mutating func incomingRead(_ incoming: Incoming, queueIsEmpty: Bool, now: UInt64) -> Action {
        guard isConnected, stream.step == .reading else { return tick(now: now) }
        switch incoming {
        case .ended: return connectionLost(log: nil)
        case .malformed(let reason): return connectionLost(log: "closing the connection to \(settings.socketPath): \(reason)")
        case .fine: break
        case .asked(let frames):
            // Beyond the bound a request is let go: the collector's own deadline answers its
            // client. A version-1 collector never sends one.
            let room = max(0, Self.maxQueuedRequests - stream.requests.count)
            if stream.protocolVersion >= 2 { stream.requests += frames.prefix(room) }
        }
        stream.step = .between
        return roundEnded(queueIsEmpty: queueIsEmpty, now: now)
    }

    /// The tracker was looked at during an exit: its latest sequence, the latest detach among
    /// its detached nodes that still have an object alive (nil when none has), and the earliest
    /// detach among those whose holders have not been explained.
    mutating func trackerInspected(
        sequence: UInt64, latestPendingDetach: UInt64?, oldestUnexplained: UInt64?, now: UInt64
    ) -> Action {
        guard case .holding(let until) = phase, stream.step == .inspecting else { return tick(now: now) }
        stream.step = .between
        stream.oldestUnexplained = oldestUnexplained
        // Leaks are explained before the drain, so that their frames go out before the goodbye.
        if stream.explanationDue(now: now) { return beginExplaining(now: now) }
        // Hold while a node detached within the grace still has an object alive: its release
        // may yet come in time. Nothing alive, or only graces run out: nothing to wait for.
        if now < until, let latest = latestPendingDetach, latest &+ stream.graceNanos > now {
            return .sleep(until: min(now &+ Self.holdCheckInterval, until), wakeOnEvent: false)
        }
        let deadline = now &+ settings.exitFlushBound(holdExit: stream.holdsExit)
        phase = .draining(target: sequence, deadline: deadline)
        announceExit(by: deadline &+ Self.goodbyeNanos(Self.exitGoodbyeMilliseconds))
        return continueRound(now: now, logBacklog: 0)
    }

    /// The collector's request was answered (its frames encoded).
    mutating func requestAnswered(now: UInt64) -> Action {
        guard isConnected, case .answering = stream.step else { return tick(now: now) }
        stream.step = .between
        return continueRound(now: now, logBacklog: 0)
    }

    /// The leaks asked for were explained (their frames encoded); `oldestUnexplained` is what
    /// is left, as in ``releasesPolled(horizon:oldestUnexplained:now:)``.
    mutating func leaksExplained(oldestUnexplained: UInt64?, now: UInt64) -> Action {
        guard isConnected, stream.step == .explaining else { return tick(now: now) }
        stream.oldestUnexplained = oldestUnexplained
        stream.step = .between
        // A round writes the frames (unless a stop or an exit comes first). The exit's
        // settlement too: its drain goes on writing until nothing is unsent, and only then says
        // goodbye `normalExit` (or `flushIncomplete` at the flush's deadline), so that the
        // goodbye never follows a frame that the socket took in part.
        return continueRound(now: now, logBacklog: 0)
    }

    /// The process is exiting normally (the exit hook).
    mutating func exitRequested(now: UInt64) -> Action {
        guard exitAt == nil else { return tick(now: now) }
        exitAt = now
        switch phase {
        case .disconnected, .connecting, .handshaking:
            // A process that ends right after it started may not have finished its first
            // connection: when a socket was named, that first attempt may still finish (a
            // collector that is there answers in milliseconds), so its nodes are judged.
            guard waitsForFirstAttempt else { return abandonConnecting() }
            announceExit(by: now &+ firstAttemptWait)
            if case .handshaking(let file, let answerBy?) = phase {
                phase = .handshaking(file, answerBy: min(answerBy, now &+ firstAttemptWait))
            }
            return tick(now: now)
        case .streaming:
            guard stream.step == .between, !stream.needsSnapshot else { return tick(now: now) }
            return beginExit(now: now)
        case .holding, .draining, .closing, .done:
            return tick(now: now)
        }
    }

    /// The agent is being stopped: say goodbye (agent disabled) and end.
    mutating func stopRequested(now: UInt64) -> Action {
        guard !stopRequested else { return tick(now: now) }
        stopRequested = true
        switch phase {
        case .disconnected, .connecting, .handshaking:
            return abandonConnecting()
        case .streaming, .holding:
            guard stream.step == .between else { return tick(now: now) }
            return sayGoodbye(.agentDisabled)
        case .draining, .closing, .done:
            return tick(now: now)
        }
    }

    // MARK: Rules

    /// Whether the round is taking events that will go out as deltas, unless the queue dropped
    /// some: the connection streams and has had its snapshot.
    var takesEventsStraight: Bool {
        guard isConnected, !stream.needsSnapshot, case .taking = stream.step else { return false }
        return true
    }

    /// The same for the round's poll, which applies the changes recorded before its horizon:
    /// the take that follows it adds its own events.
    var pollTakesEventsStraight: Bool {
        isConnected && !stream.needsSnapshot && stream.step == .polling
    }

    /// Whether the connection holds bytes that the socket has not taken: the collector is slow
    /// or stopped.
    var isStalled: Bool { isConnected && stream.unsentBytes }

    private var isConnected: Bool {
        switch phase {
        case .streaming, .holding, .draining: true
        default: false
        }
    }

    /// How long a retainer analysis may take (the bound of one call, and a margin to release its
    /// copy), which an exit waits for when one begins during its hold.
    var explainAllowance: UInt64 { settings.retainerLimits.timePerBatchNanos &+ 500_000_000 }

    /// Whether an exit waits for the first attempt to connect: only when a socket was named.
    private var waitsForFirstAttempt: Bool { settings.mode == .explicit && !triedOnce }

    /// How long an exit waits for the first attempt to connect.
    private var firstAttemptWait: UInt64 { settings.exitFlushBound(holdExit: false) }

    private var afterClose: AfterClose { stopRequested || exitAt != nil ? .finish : .reconnect }

    private static func goodbyeNanos(_ milliseconds: Int32) -> UInt64 { UInt64(milliseconds) &* 1_000_000 }

    /// Disconnected: decide whether to end, wait, or look at the socket.
    private mutating func lookForCollector(now: UInt64) -> Action {
        if stopRequested || (exitAt != nil && !waitsForFirstAttempt) { return end() }
        if let exitAt, now >= exitAt &+ firstAttemptWait { return end() }
        if now < notBefore { return .sleep(until: notBefore, wakeOnEvent: false) }
        guard settings.socketPath.utf8.count < 108 else {
            triedOnce = true
            notBefore = now &+ Self.unusablePathRetry
            let line = logOnce(
                "the socket path \(settings.socketPath) is longer than a Unix socket allows (107 bytes); "
                    + "set NODESCOPE_SOCKET to a shorter path")
            return line.map(Action.log) ?? tick(now: now)
        }
        return .examineSocket
    }

    /// An attempt ended without a connection: look again after the check interval.
    private mutating func attemptEnded(now: UInt64) -> Action {
        noteAttemptEnded(now: now)
        return lookForCollector(now: now)
    }

    private mutating func noteAttemptEnded(now: UInt64) {
        triedOnce = true
        phase = .disconnected
        notBefore = now &+ Self.socketCheckInterval
    }

    /// A handshake failed: close; a socket file that `failed` is left alone until it changes.
    private mutating func giveUp(now: UInt64, failed file: SocketFile?) -> Action {
        triedOnce = true
        if let file { failure = (file, now) }
        notBefore = now &+ Self.socketCheckInterval
        phase = .closing(then: afterClose)
        return .close(log: nil)
    }

    /// Ends before any stream: closes what a connect may have opened.
    private mutating func abandonConnecting() -> Action {
        if phase == .disconnected { return end() }
        phase = .closing(then: .finish)
        return .close(log: nil)
    }

    private mutating func end() -> Action {
        phase = .done
        return .finish
    }

    private mutating func connectionLost(log: String?) -> Action {
        phase = .closing(then: afterClose)
        return .close(log: log)
    }

    private mutating func logOnce(_ line: String) -> String? {
        guard !problemLogged else { return nil }
        problemLogged = true
        return line
    }

    private mutating func announceExit(by deadline: UInt64) {
        exitDeadline = max(exitDeadline ?? 0, deadline)
    }

    /// A normal exit while streaming: hold (if asked, at most one grace), then drain.
    private mutating func beginExit(now: UInt64) -> Action {
        let until = stream.holdsExit ? now &+ stream.graceNanos : now
        phase = .holding(until: until)
        announceExit(
            by: until &+ settings.exitFlushBound(holdExit: stream.holdsExit)
                &+ Self.goodbyeNanos(Self.exitGoodbyeMilliseconds))
        stream.step = .inspecting
        return .inspectTracker
    }

    /// Asks for the holders of the nodes whose grace ran out with an object alive; an exit
    /// waits for the analysis.
    private mutating func beginExplaining(now: UInt64) -> Action {
        stream.step = .explaining
        if case .holding = phase {
            announceExit(
                by: now &+ explainAllowance &+ settings.exitFlushBound(holdExit: stream.holdsExit)
                    &+ Self.goodbyeNanos(Self.exitGoodbyeMilliseconds))
        }
        return .explainLeaks(detachedBy: stream.explainedDetachesBy(now: now))
    }

    /// A normal exit has written everything it queued: the nodes still awaiting release are
    /// explained within what is left of the flush, so that the collector can settle the
    /// verdicts that their holders decide (a retain cycle: leaked; a global: retained by a
    /// global) instead of leaving them unverified.
    private mutating func settle(now: UInt64, deadline: UInt64) -> Action {
        stream.settledAtExit = true
        stream.step = .explaining
        let graceRanOutBy = stream.explainedDetachesBy(now: now)
        stream.settledGraceRanOutBy = graceRanOutBy
        return .settleLeaks(detachedBy: stream.vouchedUntil, graceRanOutBy: graceRanOutBy, boundNanos: deadline - now)
    }

    /// The last words: a stopped agent waits a little longer for the socket than an exit does.
    /// A drain that sent everything in time may wait for the socket to take its goodbye for what
    /// is left of the flush's bound (`within`): the last frames can fill the socket just as a
    /// collector that was stopped comes back, and it reads that backlog before there is room
    /// again. Without the goodbye, the session would end abnormally and its verdicts be lost.
    private mutating func sayGoodbye(_ reason: GoodbyeReason, within nanoseconds: UInt64 = 0) -> Action {
        phase = .closing(then: .finish)
        stream.step = .between
        var wait = reason == .agentDisabled ? Self.stopGoodbyeMilliseconds : Self.exitGoodbyeMilliseconds
        wait = max(wait, Int32(clamping: nanoseconds / 1_000_000))
        return .sayGoodbye(reason, waitMilliseconds: wait)
    }

    /// Connected: the next step of the round, or a new round.
    private mutating func continueRound(now: UInt64, logBacklog: Int) -> Action {
        switch stream.step {
        case .between:
            if case .draining(_, let deadline) = phase {
                guard now < deadline else {
                    return sayGoodbye(.flushIncomplete)
                }
            } else if stopRequested {
                return sayGoodbye(.agentDisabled)
            } else if exitAt != nil, phase == .streaming, !stream.needsSnapshot {
                // An exit that came before the connection's snapshot (a hello answered late)
                // waits for one round: the snapshot goes out before anything about its nodes.
                return beginExit(now: now)
            }
            return startRound(now: now, logBacklog: logBacklog)
        case .eventsNext:
            stream.step = .sendingEvents(vouch: nil)
            return .sendEvents(after: stream.lastSequence)
        case .writeNext:
            return write()
        case .flushingLeftover, .writing:
            return .write(waitMilliseconds: Self.roundWriteMilliseconds, through: stream.lastSequence)
        case .polling:
            return .pollReleases
        case .taking:
            return .takeEvents
        case .snapshotting:
            return .sendSnapshot(dropped: 0)
        case .sendingEvents:
            return .sendEvents(after: stream.lastSequence)
        case .reading:
            return .readIncoming
        case .inspecting:
            return .inspectTracker
        case .explaining:
            if case .draining(_, let deadline) = phase, stream.settledAtExit {
                return .settleLeaks(
                    detachedBy: stream.vouchedUntil,
                    graceRanOutBy: stream.settledGraceRanOutBy ?? stream.explainedDetachesBy(now: now),
                    boundNanos: deadline > now ? deadline - now : 0)
            }
            return .explainLeaks(detachedBy: stream.explainedDetachesBy(now: now))
        case .answering(let request):
            return .answer(request)
        }
    }

    /// A round: first what the socket did not take last time, then the collection.
    private mutating func startRound(now: UInt64, logBacklog: Int) -> Action {
        stream.roundStart = now
        if stream.unsentBytes {
            stream.step = .flushingLeftover
            return .write(waitMilliseconds: Self.roundWriteMilliseconds, through: stream.lastSequence)
        }
        return collect(now: now, logBacklog: logBacklog)
    }

    /// Polls first when the round vouches for a time (a new connection, a heartbeat due, every
    /// round of a drain), so that the vouched time is read before the queue is taken. A due
    /// heartbeat waits while the writer is behind (more than ``roundUnits`` of `logBacklog`),
    /// until it is overdue.
    private mutating func collect(now: UInt64, logBacklog: Int) -> Action {
        var vouches = stream.needsSnapshot || stream.heartbeatDue(now: now)
        let behind = logBacklog > Self.roundUnits
        if vouches, behind, !stream.needsSnapshot, !stream.heartbeatOverdue(now: now) { vouches = false }
        if case .draining = phase { vouches = true }
        if vouches {
            stream.step = .polling
            return .pollReleases
        }
        stream.step = .taking(horizon: nil)
        return .takeEvents
    }

    private mutating func write() -> Action {
        stream.step = .writing
        return .write(waitMilliseconds: Self.roundWriteMilliseconds, through: stream.lastSequence)
    }

    /// A heartbeat for `horizon` when it is news to the collector.
    private mutating func vouch(_ horizon: UInt64?) -> Action? {
        guard var horizon else { return nil }
        if let line = stream.settledGraceRanOutBy { horizon = min(horizon, line &+ stream.graceNanos) }
        guard horizon > stream.vouchedUntil else { return nil }
        stream.vouchedUntil = horizon
        stream.lastHeartbeat = stream.roundStart
        return .sendHeartbeat(horizon)
    }

    private mutating func noteDetach(at time: UInt64?) {
        guard let time else { return }
        stream.gracesEndBy = max(stream.gracesEndBy, time &+ stream.graceNanos)
    }

    /// A round is over: sleep, hold, drain on, or say goodbye.
    private mutating func roundEnded(queueIsEmpty: Bool, now: UInt64) -> Action {
        switch phase {
        case .draining(let target, let deadline):
            if stream.lastSequence >= target, !stream.unsentBytes {
                if stream.settlementDue, now < deadline { return settle(now: now, deadline: deadline) }
                return sayGoodbye(.normalExit, within: deadline > now ? deadline - now : 0)
            }
            if now >= deadline { return sayGoodbye(.flushIncomplete) }
            // A drain's every round vouches: the backlog does not matter.
            return startRound(now: now, logBacklog: 0)
        case .holding:
            if stopRequested { return sayGoodbye(.agentDisabled) }
            stream.step = .inspecting
            return .inspectTracker
        case .streaming, .disconnected, .connecting, .handshaking, .closing, .done:
            if stopRequested { return sayGoodbye(.agentDisabled) }
            if exitAt != nil, !stream.needsSnapshot { return beginExit(now: now) }
            if stream.explanationDue(now: now) { return beginExplaining(now: now) }
            if !stream.requests.isEmpty {
                let request = stream.requests.removeFirst()
                stream.step = .answering(request)
                return .answer(request)
            }
            if !queueIsEmpty { return .sleep(until: now &+ Self.busyInterval, wakeOnEvent: false) }
            // The rest of a frame that the socket took in part is tried again soon: the collector
            // closes a connection whose frame stays incomplete (10 s), and no event may come.
            if stream.unsentBytes { return .sleep(until: now &+ Self.heartbeatInterval, wakeOnEvent: true) }
            if stream.gracePending { return .sleep(until: now &+ Self.heartbeatInterval, wakeOnEvent: false) }
            return .sleep(until: now &+ Self.idleInterval, wakeOnEvent: true)
        }
    }
}
