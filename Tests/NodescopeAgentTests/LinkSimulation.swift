import NodesDebug
import NodescopeWire

@testable import NodesAgent
@testable import NodesTracking

/// The agent's writer thread played in a simulated world on a manual clock: it performs what
/// ``AgentLink`` asks against scripted facts (when the socket appears, what the collector
/// answers, how much the socket takes, what the app detaches and releases) and records every
/// action with its time. Simulated seconds take microseconds.
struct LinkSimulation {
    static let millisecond: UInt64 = 1_000_000
    static let second: UInt64 = 1_000_000_000

    /// One thing the app does at a given time.
    struct AppEvent {
        var at: UInt64
        var isDetach: Bool
        /// The node detached (by index of detach), for a detach.
        var node: Int?
    }

    /// A node detached at `detachedAt` whose objects are released at `releasedAt` (nil: never).
    struct DetachedNode {
        var detachedAt: UInt64
        var releasedAt: UInt64?
        /// When its holders were explained, if they were.
        var explainedAt: UInt64?
        /// The sequence of its detach, once it happened.
        var sequence: UInt64?
    }

    /// What the writer put on a connection, in the order it encoded it, as the protocol's
    /// ordering rules see it (docs/PROTOCOL.md, sections 5 to 7).
    enum WireFrame: Equatable {
        /// The hello.
        case hello
        /// The answer accepted the hello: the connection speaks `version`.
        case accepted(version: UInt16)
        /// A snapshot (after a `dropped` marker when `dropped`) reflecting events up to `sequence`.
        case snapshot(sequence: UInt64, dropped: Bool)
        /// Deltas with these sequences.
        case events([UInt64])
        /// A heartbeat.
        case heartbeat
        /// `retainers` frames about these nodes (by index of detach).
        case retainers(nodes: [Int])
        /// The `explained` frame that ends an answer to the collector's request.
        case explained
        /// The goodbye.
        case goodbye(GoodbyeReason)
    }

    private(set) var link: AgentLink
    /// The manual clock, in host nanoseconds.
    private(set) var now: UInt64 = 100 * second

    // MARK: The world

    /// When the socket file appears (nil: never).
    var socketAppearsAt: UInt64? = 0
    /// The socket file found at the path.
    var socketFile = AgentLink.SocketFile(inode: 1, modified: 1)
    /// How a connect ends.
    var connectOutcome = AgentLink.ConnectOutcome.connected
    /// The collector's answer to each hello, and how long after the hello it comes (nil: never).
    var answer = AgentLink.Answer.accepted(graceNanos: second, holdsExit: false, version: WireLimits.protocolVersion)
    var answerDelay: UInt64? = millisecond
    /// How much of each write the socket takes.
    var writeOutcome = AgentLink.WriteOutcome.all
    /// Writes begun within this time take only part of their bytes (whatever `writeOutcome` says).
    var partialWritesDuring: Range<UInt64>?
    /// How many of the next writes fail (the collector goes away), before `writeOutcome` holds.
    var failingWrites = 0
    /// Events the next take reports as dropped.
    var dropsAtNextTake: UInt64 = 0
    /// While the writer finds more of the log waiting than one round applies (it passes the
    /// backlog with each tick and each write's outcome: ``AgentLink/roundUnits``).
    var writerBehindDuring: Range<UInt64>?
    /// The backlog the writer reports during ``writerBehindDuring`` (units of the log).
    var backlogUnits = AgentLink.roundUnits + 1
    /// The log's backlog the writer reports now: none outside ``writerBehindDuring``.
    private var logBacklog: Int { writerBehindDuring?.contains(now) == true ? backlogUnits : 0 }
    /// How long an explanation takes.
    var explainDuration: UInt64 = 5 * millisecond
    /// When the process exits normally, and when the agent is stopped.
    var exitAt: UInt64?
    var stopAt: UInt64?

    // MARK: The record

    /// Every action the link asked for, with the time it was asked.
    private(set) var trace: [(time: UInt64, action: AgentLink.Action)] = []
    /// The lines logged.
    private(set) var logs: [String] = []
    /// The heartbeats written: when, and the time each vouched for.
    private(set) var heartbeats: [(time: UInt64, vouched: UInt64)] = []
    /// The goodbye said, and when.
    private(set) var goodbye: (reason: GoodbyeReason, time: UInt64)?
    /// How long the goodbye's send was allowed to wait for the socket, in milliseconds.
    private(set) var goodbyeWaitMilliseconds: Int32?
    /// Whether frames encoded before the goodbye were not all written when it was asked for:
    /// the goodbye then goes out in one final send behind them.
    private(set) var unsentAtGoodbye = false
    /// Whether the goodbye was lost: the final send that carried it, behind frames not written
    /// yet, was taken in part (a write begun in ``partialWritesDuring``, or ``writeOutcome``
    /// partial), so the collector got a frame cut short and no goodbye (an abnormal end).
    private(set) var goodbyeLost = false
    /// When the writer finished.
    private(set) var finishedAt: UInt64?
    /// The explanations performed: when, and the nodes (by index of detach) each explained.
    private(set) var explanations: [(time: UInt64, nodes: [Int])] = []
    /// The collector's explain requests: when each arrives on the socket.
    var requests: [(at: UInt64, frame: ExplainFrame)] = []
    /// The requests answered: when the answer was done, and the request.
    private(set) var answers: [(time: UInt64, frame: ExplainFrame)] = []
    /// When each write that took everything happened.
    private(set) var completeWrites: [UInt64] = []
    /// What each connection carried, in order (one entry per hello written).
    private(set) var connections: [[WireFrame]] = []

    // MARK: Internals

    private var appEvents: [AppEvent] = []
    private var nodes: [DetachedNode] = []
    private var sequence: UInt64 = 0
    private var connected = false
    private var queue: [(sequence: UInt64, event: AppEvent)] = []
    private var batch: [(sequence: UInt64, event: AppEvent)] = []
    private var helloSentAt: UInt64 = 0
    /// The action to perform when the run goes on.
    private var next: AgentLink.Action?
    private var stopFed = false
    private var exitFed = false
    /// Whether frames were encoded that no write has taken in full since.
    private var unsent = false

    /// A simulation of an agent whose socket is `socketPath`, named explicitly unless `mode` says.
    init(
        mode: AgentSettings.Mode = .explicit, socketPath: String = "/run/nodescope/c.sock", exitFlushNanos: UInt64? = nil
    ) {
        link = AgentLink(settings: AgentSettings(mode: mode, socketPath: socketPath, exitFlushNanos: exitFlushNanos))
    }

    /// `offset` after the simulation's start.
    static func start(plus offset: UInt64) -> UInt64 { 100 * second + offset }

    /// The app detaches a node at `at`; its objects are released at `releasedAt` (nil: never).
    mutating func detach(at: UInt64, releasedAt: UInt64?) {
        appEvents.append(AppEvent(at: at, isDetach: true, node: nodes.count))
        nodes.append(DetachedNode(detachedAt: at, releasedAt: releasedAt))
        if let releasedAt { appEvents.append(AppEvent(at: releasedAt, isDetach: false)) }
    }

    /// The app does something other than a detach at `at`.
    mutating func otherEvent(at: UInt64) {
        appEvents.append(AppEvent(at: at, isDetach: false))
    }

    /// Runs the writer until `end` (simulated), or until it finishes.
    mutating func run(until end: UInt64) {
        var action = next ?? link.tick(now: now, logBacklog: logBacklog)
        var steps = 0
        while now < end, finishedAt == nil, steps < 10_000_000 {
            steps += 1
            happen()
            trace.append((now, action))
            action = perform(action, until: end)
        }
        next = action
    }

    /// When the link first asked for an action that `matches`, at or after `from`.
    func firstTime(from: UInt64 = 0, of matches: (AgentLink.Action) -> Bool) -> UInt64? {
        trace.first { $0.time >= from && matches($0.action) }?.time
    }

    /// The times of every action that `matches`.
    func times(of matches: (AgentLink.Action) -> Bool) -> [UInt64] {
        trace.filter { matches($0.action) }.map(\.time)
    }

    /// The actions asked for from `from` on, in order.
    func actions(from: UInt64) -> [AgentLink.Action] {
        trace.filter { $0.time >= from }.map(\.action)
    }

    // MARK: Performing

    /// Lets the app's events up to now happen: numbered, and queued while connected.
    private mutating func happen() {
        while let index = appEvents.indices.min(by: { appEvents[$0].at < appEvents[$1].at }), appEvents[index].at <= now {
            let event = appEvents.remove(at: index)
            sequence += 1
            if let node = event.node { nodes[node].sequence = sequence }
            if connected { queue.append((sequence, event)) }
        }
    }

    private var awaitingRelease: [DetachedNode] {
        nodes.filter { $0.detachedAt <= now && ($0.releasedAt.map { $0 > now } ?? true) }
    }

    /// The earliest detach among the nodes awaiting release whose holders were not explained.
    private var oldestUnexplained: UInt64? {
        awaitingRelease.filter { $0.explainedAt == nil }.map(\.detachedAt).min()
    }

    private mutating func perform(_ action: AgentLink.Action, until end: UInt64) -> AgentLink.Action {
        switch action {
        case .sleep(let until, let wakeOnEvent):
            if let request = feedRequest() { return request }
            var wakeAt = min(until, end)
            for request in [exitAt, stopAt].compactMap({ $0 }) where request > now { wakeAt = min(wakeAt, request) }
            if wakeOnEvent, connected, let next = appEvents.map(\.at).filter({ $0 > now }).min() { wakeAt = min(wakeAt, next) }
            // An idle writer also waits on the socket: a request wakes it.
            if wakeOnEvent, connected, let next = requests.map(\.at).filter({ $0 > now }).min() { wakeAt = min(wakeAt, next) }
            now = max(now, wakeAt)
        case .log(let line):
            logs.append(line)
        case .examineSocket:
            let present = socketAppearsAt.map { $0 <= now } ?? false
            return link.socketExamined(present ? socketFile : nil, now: now)
        case .connect:
            return link.connectFinished(connectOutcome, now: now)
        case .sendHello:
            helloSentAt = now
            connections.append([.hello])
            return link.helloSent(complete: true, now: now)
        case .awaitAnswer(let wait):
            if let request = feedRequest() { return request }
            let slice = UInt64(wait) * Self.millisecond
            guard let delay = answerDelay, helloSentAt + delay <= now + slice else {
                now += slice
                return link.answerRead(.nothing, now: now)
            }
            now = max(now, helloSentAt + delay)
            return link.answerRead(answer, now: now)
        case .announceConnected:
            connected = true
            put(.accepted(version: link.stream.protocolVersion))
        case .pollReleases:
            return link.releasesPolled(horizon: now, oldestUnexplained: oldestUnexplained, now: now)
        case .takeEvents:
            batch = queue
            queue = []
            defer { dropsAtNextTake = 0 }
            return link.eventsTaken(dropped: dropsAtNextTake, now: now)
        case .sendSnapshot(let dropped):
            put(.snapshot(sequence: sequence, dropped: dropped > 0))
            return link.snapshotSent(sequence: sequence, latestPendingDetach: awaitingRelease.map(\.detachedAt).max(), now: now)
        case .sendEvents(let after):
            let sent = batch.filter { $0.sequence > after }
            batch = []
            let latestDetach = sent.filter(\.event.isDetach).map(\.event.at).max()
            if !sent.isEmpty { put(.events(sent.map(\.sequence))) }
            return link.eventsSent(through: sent.last?.sequence ?? after, latestDetach: latestDetach, now: now)
        case .sendHeartbeat(let vouched):
            heartbeats.append((now, vouched))
            put(.heartbeat)
        case .write(let wait, _):
            if failingWrites > 0 {
                failingWrites -= 1
                return link.wrote(.failed, logBacklog: logBacklog, now: now)
            }
            let outcome = partialWritesDuring?.contains(now) == true ? .partly : writeOutcome
            if outcome == .partly { now += UInt64(wait) * Self.millisecond }
            if outcome == .all {
                completeWrites.append(now)
                unsent = false
            }
            return link.wrote(outcome, logBacklog: logBacklog, now: now)
        case .readIncoming:
            let arrived = requests.filter { $0.at <= now }.map(\.frame)
            requests.removeAll { $0.at <= now }
            return link.incomingRead(arrived.isEmpty ? .fine : .asked(arrived), queueIsEmpty: queue.isEmpty, now: now)
        case .answer(let request):
            now += explainDuration
            answers.append((now, request))
            put(.explained)
            return link.requestAnswered(now: now)
        case .inspectTracker:
            return link.trackerInspected(
                sequence: sequence, latestPendingDetach: awaitingRelease.map(\.detachedAt).max(),
                oldestUnexplained: oldestUnexplained, now: now)
        case .explainLeaks(let detachedBy), .settleLeaks(let detachedBy, _, _):
            // The tracker takes every unexplained node awaiting release detached by then.
            let taken = nodes.indices.filter { index in
                let node = nodes[index]
                return node.explainedAt == nil && node.detachedAt <= detachedBy && (node.releasedAt.map { $0 > now } ?? true)
            }
            for index in taken { nodes[index].explainedAt = now }
            if !taken.isEmpty { put(.retainers(nodes: taken)) }
            explanations.append((now, taken))
            now += explainDuration
            return link.leaksExplained(oldestUnexplained: oldestUnexplained, now: now)
        case .sayGoodbye(let reason, let wait):
            goodbye = (reason, now)
            goodbyeWaitMilliseconds = wait
            unsentAtGoodbye = unsent
            let finalSendPartial = partialWritesDuring?.contains(now) == true || writeOutcome == .partly
            goodbyeLost = unsent && finalSendPartial
            put(.goodbye(reason))
            disconnect()
        case .close(let line):
            if let line { logs.append(line) }
            disconnect()
        case .finish:
            finishedAt = now
            return .finish
        }
        // Every action takes a little time, so that a loop without waits still advances.
        now += 10_000
        return link.tick(now: now, logBacklog: logBacklog)
    }

    /// Notes what the writer encoded on the current connection.
    private mutating func put(_ frame: WireFrame) {
        guard !connections.isEmpty else { return }
        switch frame {
        case .hello, .accepted, .goodbye: break
        default: unsent = true
        }
        connections[connections.count - 1].append(frame)
    }

    private mutating func disconnect() {
        connected = false
        queue = []
        batch = []
    }

    private mutating func feedRequest() -> AgentLink.Action? {
        if !stopFed, let stopAt, stopAt <= now {
            stopFed = true
            return link.stopRequested(now: now)
        }
        if !exitFed, let exitAt, exitAt <= now {
            exitFed = true
            return link.exitRequested(now: now)
        }
        return nil
    }
}

extension LinkSimulation {
    /// What broke the protocol's ordering rules on each connection the writer opened, in words
    /// (empty when every stream was correct): the hello first and alone until the answer; the
    /// snapshot before any `retainers`; deltas strictly after the snapshot's sequence, rising;
    /// `retainers` only about nodes the stream has shown and only in version 2; nothing after
    /// the goodbye.
    var protocolViolations: [String] {
        var found: [String] = []
        for (number, frames) in connections.enumerated() {
            func note(_ text: String) { found.append("connection \(number + 1): \(text)") }
            guard frames.first == .hello else {
                note("does not open with a hello")
                continue
            }
            var version: UInt16?
            var snapshotSeen = false
            var covered: UInt64 = 0
            var lastSequence: UInt64 = 0
            var ended = false
            for frame in frames.dropFirst() {
                if ended { note("\(frame) after the goodbye") }
                switch frame {
                case .hello:
                    note("a second hello")
                case .accepted(let accepted):
                    if version != nil { note("accepted twice") }
                    version = accepted
                case _ where version == nil:
                    note("\(frame) before the answer to the hello")
                case .snapshot(let sequence, _):
                    if sequence < covered { note("a snapshot at \(sequence) after events up to \(covered)") }
                    snapshotSeen = true
                    covered = sequence
                    lastSequence = sequence
                case .events(let sequences):
                    for sequence in sequences {
                        if sequence <= lastSequence { note("delta \(sequence) after \(lastSequence)") }
                        lastSequence = max(lastSequence, sequence)
                    }
                    covered = max(covered, lastSequence)
                case .heartbeat:
                    break
                case .retainers(let indices):
                    if version ?? 1 < 2 { note("retainers on a connection of version 1") }
                    if !snapshotSeen { note("retainers before the snapshot") }
                    for index in indices {
                        guard let sequence = nodes[index].sequence, sequence <= covered else {
                            note("retainers name node \(index), which the stream has not shown")
                            continue
                        }
                    }
                case .explained:
                    if version ?? 1 < 2 { note("explained on a connection of version 1") }
                    if !snapshotSeen { note("explained before the snapshot") }
                case .goodbye:
                    ended = true
                }
            }
        }
        return found
    }
}

extension AgentLink.Action {
    /// Whether this is a `connect`.
    var isConnect: Bool { self == .connect }
    /// Whether this is an `examineSocket`.
    var isExamine: Bool { self == .examineSocket }
    /// Whether this is a `sendSnapshot`.
    var isSnapshot: Bool { if case .sendSnapshot = self { true } else { false } }
    /// Whether this is an `inspectTracker`.
    var isInspect: Bool { self == .inspectTracker }
    /// Whether this is an `explainLeaks`.
    var isExplain: Bool { if case .explainLeaks = self { true } else { false } }
}
