import Logging
import NIOCore
import NIOPosix
import NodescopeCollector
import NodescopeControlCodec
import NodescopeRecording
import NodescopeWire

/// The collector's state and its fan-out, confined to the server's one event loop: every
/// connection handler calls in from that loop, so nothing here needs a lock.
///
/// It holds the pure parts and performs what they decide: the ``Collector`` (trees and
/// verdicts), the ``SubscriptionTable`` (who follows which process, bytes waiting for each
/// connection, which subscriber to let go), one ``ControlCommandHandler`` per control command,
/// and the ``RetentionTimer``. It never reads a clock: callers pass `now`, nanoseconds of the
/// event loop's clock (`CLOCK_MONOTONIC` on a real loop, the manual clock of an
/// `EmbeddedEventLoop` in tests), and the retention timer passes the instant it was armed for.
final class CollectorHub {
    /// An open connection as the hub reaches it: where to write, and how to close it. `close`
    /// is the connection handler's, which logs the reason in one line naming the peer.
    private struct Endpoint {
        var channel: Channel
        var close: (_ reason: String) -> Void
    }

    let eventLoop: EventLoop
    let logger: Logger
    /// Told of every leak record created or changed (the daemon's OTLP export).
    private let leakObserver: (@Sendable ([LeakRecord]) -> Void)?
    /// Told of every batch of changes (a `check`'s node lives, the daemon's OTLP spans), in
    /// bunches: see ``observe(_:for:now:resynced:)``.
    private let changeObserver: ChangeObserver?
    /// The batches not handed to ``changeObserver`` yet.
    private var observed: [ObservedChanges] = []
    /// Sessions whose changes the observer declined: only their end is handed over.
    private var declined: Set<SessionID> = []
    let limits: ServerLimits
    private(set) var collector: Collector
    private var subscriptions: SubscriptionTable
    private var endpoints: [ConnectionID: Endpoint] = [:]
    private var retention = RetentionTimer()
    private var retentionTask: Scheduled<Void>?
    /// The connection of each connected host and the protocol version it speaks.
    private var hosts: [SessionID: (connection: ConnectionID, version: UInt16)] = [:]
    /// The explain requests sent to hosts and not answered yet, by the id the host echoes.
    private var questions: [UInt32: OpenQuestion] = [:]
    private var lastQuestionID: UInt32 = 0
    /// Where every host's stream is recorded (`daemon --record-dir`), if anywhere.
    let recordDirectory: String?
    /// The thread that writes recordings, started with the first one.
    private var recordingPool: NIOThreadPool?
    /// The recordings of ``recordDirectory`` that could not be written, in the order they failed.
    private(set) var failedRecordings: [RecordingSink.Outcome] = []
    /// Recordings that could not be written since the start, whoever asked for them.
    private(set) var failedRecordingCount = 0
    /// The recordings under way, by session.
    private var recorders: [SessionID: [SessionRecorder]] = [:]
    /// Recordings asked for processes that have not connected yet.
    private var pendingRecordings: [(order: RecordOrder, client: ConnectionID, requestID: UInt32)] = []
    /// The pairing of the loop's clock with the wall clock, through which every wall-clock time
    /// the daemon states goes (a recording's start, the instant a tree stands at).
    private var wallClock = WallClockMap()
    /// The hello and clock relation of each connected host (a recording's header).
    private var helloOf: [SessionID: (hello: Hello, version: UInt16, clocks: ClockRelation)] = [:]

    /// A client's question that a host is answering.
    private struct OpenQuestion {
        var client: ConnectionID
        var clientRequestID: UInt32
        var session: SessionID
        var nodeIDs: [UInt64]
        var deadline: Scheduled<Void>?
    }

    /// A hub with an empty collector, serving on `eventLoop`.
    init(
        settings: CollectorSettings, limits: ServerLimits = .init(), eventLoop: EventLoop, logger: Logger,
        recordDirectory: String? = nil, leakObserver: (@Sendable ([LeakRecord]) -> Void)? = nil,
        changeObserver: ChangeObserver? = nil
    ) {
        self.leakObserver = leakObserver
        self.changeObserver = changeObserver
        self.recordDirectory = recordDirectory
        self.collector = Collector(settings: settings)
        self.subscriptions = SubscriptionTable(limits: limits)
        self.limits = limits
        self.eventLoop = eventLoop
        self.logger = logger
    }

    // MARK: Connections

    /// Registers a connection, host or client, and returns its id. `close` closes it with a
    /// logged reason (a subscriber that does not keep up is let go through it).
    func connectionOpened(_ channel: Channel, close: @escaping (_ reason: String) -> Void) -> ConnectionID {
        let connection = subscriptions.open()
        endpoints[connection] = Endpoint(channel: channel, close: close)
        return connection
    }

    /// Admits a connection that said hello when hosts (or, counted apart, clients) have room
    /// (``SubscriptionTable/admit(_:asHost:)``); false: refuse it as busy.
    func admit(_ connection: ConnectionID, asHost: Bool) -> Bool {
        subscriptions.admit(connection, asHost: asHost)
    }

    /// Hosts and clients admitted now.
    var admittedCounts: (hosts: Int, clients: Int) { subscriptions.admittedCounts }

    /// Recordings being written now.
    var recordingCount: Int { recorders.values.reduce(0) { $0 + $1.count } }

    /// Forgets a closed connection and ends its subscriptions (and the recordings it asked for,
    /// at `now`).
    func connectionClosed(_ connection: ConnectionID, now: UInt64) {
        endpoints[connection] = nil
        pendingRecordings.removeAll { $0.client == connection }
        for (session, list) in recorders {
            for recorder in list where recorder.owner == connection {
                recorder.finish(.stopped, arrival: now) { collector.resyncStream(session) }
            }
            let left = list.filter { $0.owner != connection }
            // No list left: the connection stops gathering the bytes of its reads for recordings.
            recorders[session] = left.isEmpty ? nil : left
        }
        // A client that goes away gets no answer; the host's, when it comes, is dropped.
        for (id, question) in questions where question.client == connection {
            question.deadline?.cancel()
            questions[id] = nil
        }
        subscriptions.close(connection)
    }

    /// Closes every connection (the collector is stopping).
    func closeAll() {
        handOverObserved()
        for endpoint in endpoints.values { endpoint.channel.close(promise: nil) }
        retentionTask?.cancel()
    }

    // MARK: Hosts

    /// Opens the session of a host whose hello was accepted at `now`.
    func openHost(
        _ hello: Hello, connection: ConnectionID, version: UInt16, clocks: ClockRelation, processStartedAt: UInt64? = nil,
        now: UInt64
    ) -> SessionID {
        let session = collector.openSession(hello, now: now, clocks: clocks, processStartedAt: processStartedAt)
        hosts[session] = (connection, version)
        helloOf[session] = (hello, version, clocks)
        startRecordings(of: session, now: now)
        logger.debug(
            "host connected",
            metadata: [
                "pid": "\(hello.pid)", "name": "\(VisibleText.escaped(hello.processName))", "session": "\(session)",
                "clock": "\(clocks)",
            ])
        return session
    }

    /// Whether the change observer takes `session`'s changes. A connection asks once a read, and
    /// passes the answer with each message of the read to ``ingest(_:session:now:observed:)``:
    /// a flood's messages then cost the loop no lookup each.
    func observesChanges(of session: SessionID) -> Bool {
        changeObserver != nil && (declined.isEmpty || !declined.contains(session))
    }

    /// Feeds one message of a host's stream, read at `now`; returns the violation when it
    /// breaks a rule (the connection must then close). `observed`: whether the change observer
    /// takes the session's changes (``observesChanges(of:)``).
    func ingest(_ message: WireMessage, session: SessionID, now: UInt64, observed: Bool = true) -> SessionError? {
        do {
            let changes = try collector.ingest(message, session: session, now: now)
            if case .defineString = message { noteSessionsDroppedForMemory(now: now) }
            // Only a snapshot's end resyncs the tree: the observers need the tree after it.
            var resynced = false
            if case .snapshotEnd = message { resynced = true }
            publish(changes, for: session, now: now, resynced: resynced, observed: observed)
            return nil
        } catch {
            return error
        }
    }

    /// Logs the ended sessions that the collector dropped to make room for a live host's
    /// strings (``CollectorSettings/maxStringBytesTotal``), and gives their memory back.
    private func noteSessionsDroppedForMemory(now: UInt64) {
        let dropped = collector.takeSessionsDroppedForMemory()
        guard !dropped.isEmpty else { return }
        for process in dropped {
            logger.notice(
                "dropped an ended process early: the strings of all processes reached their limit",
                metadata: [
                    "pid": "\(process.pid)", "name": "\(VisibleText.escaped(process.processName))",
                    "limit": "\(collector.settings.maxStringBytesTotal)",
                ])
        }
        AllocatorTrim.afterFreeing(AllocatorTrim.threshold)
        updateRetentionTimer(now: now)
    }

    /// What stamps a tree of the collector as it stands now (``WallClockMap/stamped(_:in:now:)``).
    func stamping(now: UInt64) -> (TreeView) -> TreeView {
        wallClock.refresh()
        let (clock, collector) = (wallClock, collector)
        return { clock.stamped($0, in: collector, now: now) }
    }

    /// Ends a host's session at `now`: `normally` after its goodbye, otherwise abnormally.
    func endHost(_ session: SessionID, normally: Bool, now: UInt64) {
        hosts[session] = nil
        helloOf[session] = nil
        for recorder in recorders.removeValue(forKey: session) ?? [] {
            recorder.finish(normally ? .normal : .abnormal, arrival: now) { collector.resyncStream(session) }
        }
        for (id, question) in questions where question.session == session {
            answerQuestion(id, with: .failure(.unavailable, "the process ended before its analysis was done"))
        }
        let stringBytes = collector.stringBytes
        let changes = collector.endSession(session, normally: normally, now: now)
        logger.debug("host ended", metadata: ["session": "\(session)", "normally": "\(normally)"])
        AllocatorTrim.afterFreeing(stringBytes - collector.stringBytes)
        publish(changes, for: session, now: now, ending: true)
        // The last change was `sessionEnded`: the subscriptions of this session are over.
        subscriptions.sessionEnded(session)
        updateRetentionTimer(now: now)
    }

    // MARK: Clients

    /// Answers a client's request with the handler of its command, unless the client has let
    /// more than ``ServerLimits/maxPendingClientBytes`` of earlier answers wait unread: then it
    /// is not answered, and the caller closes the connection with the returned reason.
    func handle(_ request: ControlRequestFrame, from connection: ConnectionID, now: UInt64) -> SubscriptionTable.RequestAdmission {
        let admission = subscriptions.admitRequest(from: connection)
        guard admission == .answer else { return admission }
        wallClock.refresh()
        let asked = ControlRequest(frame: request, connection: connection, collector: collector, now: now, wallClock: wallClock)
        let answer = request.command.handler.answer(asked, subscriptions: &subscriptions)
        if let question = answer.askHost {
            ask(question, for: request.requestID, of: connection)
            return .answer
        }
        if let order = answer.record {
            startRecording(order, for: request.requestID, of: connection, now: now)
            return .answer
        }
        let parts = ControlResponseFrame.parts(requestID: request.requestID, status: answer.status, body: answer.body)
        let events = eventFrames(answer.events.map { ControlBody.encode($0) }, subscriptionID: request.requestID)
        send(parts.map { .response($0) } + events, to: connection)
        return .answer
    }

    // MARK: Recordings

    /// Whether `session` is being recorded: its connection then gathers the bytes of the frames
    /// it ingests and hands them over with ``recorded(_:session:)``.
    func isRecording(_ session: SessionID) -> Bool {
        recorders[session] != nil
    }

    /// The frames of one read of `session` that the collector took, as the bytes they arrived in.
    func recorded(_ pack: FramePack, session: SessionID) {
        guard let list = recorders[session] else { return }
        for recorder in list { recorder.record(pack) }
    }

    /// Hands the frames of one read to the recordings of `session` (called after each read).
    func readDone(_ session: SessionID, now: UInt64) {
        guard let list = recorders[session] else { return }
        for recorder in list { recorder.flush(arrival: now) { collector.resyncStream(session) } }
    }

    /// Starts the recordings that a newly connected host gets: `--record-dir`, and the `record`
    /// requests waiting for its pid or name.
    private func startRecordings(of session: SessionID, now: UInt64) {
        guard let info = helloOf[session] else { return }
        if let recordDirectory {
            let name = SessionRecorder.fileName(
                processName: info.hello.processName, pid: info.hello.pid, session: session, wallNanos: SessionRecorder.wallNanos())
            let path = recordDirectory.hasSuffix("/") ? recordDirectory + name : recordDirectory + "/" + name
            addRecorder(for: session, path: path, midSession: false, owner: nil, requestID: 0, now: now)
        }
        let waiting = pendingRecordings
        pendingRecordings = []
        for pending in waiting {
            if case .success(let found) = collector.resolve(pending.order.process), found == session {
                addRecorder(
                    for: session, path: pending.order.path, midSession: false, owner: pending.client, requestID: pending.requestID, now: now
                )
                reply(
                    .ok(ControlBody.RecordingStarted(path: pending.order.path, pid: info.hello.pid, processName: info.hello.processName)),
                    to: pending.requestID, of: pending.client)
            } else {
                pendingRecordings.append(pending)
            }
        }
    }

    /// Starts a recording a client asked for, or keeps it until the process connects.
    private func startRecording(_ order: RecordOrder, for requestID: UInt32, of client: ConnectionID, now: UInt64) {
        guard let session = order.session else {
            pendingRecordings.append((order, client, requestID))
            return
        }
        guard let info = helloOf[session] else {
            reply(.failure(.notFound, "\(order.process) has ended; only a running process can be recorded"), to: requestID, of: client)
            return
        }
        addRecorder(for: session, path: order.path, midSession: true, owner: client, requestID: requestID, now: now)
        reply(
            .ok(ControlBody.RecordingStarted(path: order.path, pid: info.hello.pid, processName: info.hello.processName)), to: requestID,
            of: client)
    }

    private func addRecorder(
        for session: SessionID, path: String, midSession: Bool, owner: ConnectionID?, requestID: UInt32, now: UInt64
    ) {
        guard let info = helloOf[session] else { return }
        let pool: NIOThreadPool
        if let recordingPool {
            pool = recordingPool
        } else {
            pool = NIOThreadPool(numberOfThreads: 1)
            pool.start()
            recordingPool = pool
        }
        let clocks: UInt8 =
            switch info.clocks {
            case .unknown: 0
            case .same: 1
            case .different: 2
            }
        wallClock.refresh()
        let header = RecordingHeader(
            protocolVersion: info.version, pid: info.hello.pid, processName: info.hello.processName,
            helloMonotonicNanos: info.hello.monotonicNanos, helloWallNanos: info.hello.wallNanos, startMonotonicNanos: now,
            startWallNanos: wallClock.wallNanos(atMonotonic: now), clockRelation: clocks, graceNanos: collector.settings.graceNanos,
            holdExit: collector.settings.holdExit, startsMidSession: midSession)
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let loop = eventLoop
        let sink = RecordingSink(path: path, header: header, pool: pool, maxQueued: limits.maxQueuedRecordingFrames) { outcome in
            loop.execute { bound.value.recordingFinished(outcome, owner: owner, requestID: requestID) }
        }
        let recorder = SessionRecorder(sink: sink, owner: owner, requestID: requestID)
        if midSession {
            for frame in collector.resyncStream(session) ?? [] { recorder.record(frame, arrival: now) }
            recorder.flush(arrival: now) { nil }
        }
        recorders[session, default: []].append(recorder)
        logger.debug("recording", metadata: ["session": "\(session)", "path": "\(VisibleText.escaped(path))"])
    }

    private func recordingFinished(_ outcome: RecordingSink.Outcome, owner: ConnectionID?, requestID: UInt32) {
        if let error = outcome.error {
            logger.warning(
                "recording failed",
                metadata: ["path": "\(VisibleText.escaped(outcome.path))", "error": "\(VisibleText.escaped("\(error)"))"])
        } else if outcome.lostFrames > 0 {
            logger.notice(
                "recording lost frames",
                metadata: ["path": "\(VisibleText.escaped(outcome.path))", "frames": "\(outcome.lostFrames)"])
        }
        if outcome.error != nil { failedRecordingCount += 1 }
        guard let owner else {
            // A recording of the record directory: the embedding program asks (`check --record`).
            // The latest 1,000: a daemon's disk may stay full for days.
            if outcome.error != nil {
                if failedRecordings.count >= 1_000 { failedRecordings.removeFirst() }
                failedRecordings.append(outcome)
            }
            return
        }
        send([.event(ControlEventFrame(subscriptionID: requestID, body: ControlBody.encode(outcome)))], to: owner)
    }

    /// Ends every recording at `now` (the collector is stopping) and waits until they are written.
    func finishRecordings(now: UInt64) -> NIOThreadPool? {
        for (session, list) in recorders {
            for recorder in list { recorder.finish(.stopped, arrival: now) { collector.resyncStream(session) } }
        }
        recorders = [:]
        defer { recordingPool = nil }
        return recordingPool
    }

    // MARK: Questions for hosts

    /// Sends a client's question to its host, unless the host cannot take it: then the client
    /// is answered at once.
    private func ask(_ question: HostQuestion, for requestID: UInt32, of client: ConnectionID) {
        let refusal: String?
        if let host = hosts[question.session] {
            if host.version < FrameType.explain.sinceVersion {
                refusal =
                    "the process speaks protocol version \(host.version), which cannot explain on request; "
                    + "its leaks are explained when their grace runs out (update its Nodescope runtime)"
            } else if questions.values.contains(where: { $0.session == question.session }) {
                refusal = "the process is answering another explain request; try again when it is done"
            } else {
                refusal = nil
            }
        } else {
            refusal = "the process has ended: there is no one left to ask"
        }
        if let refusal {
            reply(.failure(.unavailable, refusal), to: requestID, of: client)
            return
        }
        guard let host = hosts[question.session] else { return }
        lastQuestionID &+= 1
        let id = lastQuestionID
        questions[id] = OpenQuestion(
            client: client, clientRequestID: requestID, session: question.session, nodeIDs: question.nodeIDs,
            deadline: nil)
        armQuestionDeadline(id, due: eventLoop.now + .nanoseconds(limits.explainDeadlineNanos))
        send([.explain(ExplainFrame(requestID: id, nodeIDs: question.nodeIDs))], to: host.connection)
    }

    /// Answers question `id` as unanswered at `due`. A deadline that the loop reaches late (it
    /// was busy with other work, a big answer for another client) is given a little longer,
    /// once: the host's answer may be waiting in its socket, which the loop reads before it runs
    /// timers again.
    private func armQuestionDeadline(_ id: UInt32, due: NIODeadline, extended: Bool = false) {
        let deadlineNanos = limits.explainDeadlineNanos
        let slack = TimeAmount.nanoseconds(max(deadlineNanos / 4, 100_000_000))
        questions[id]?.deadline = eventLoop.assumeIsolated().scheduleTask(deadline: due) {
            guard self.questions[id] != nil else { return }
            if !extended, self.eventLoop.now - due > slack {
                self.armQuestionDeadline(id, due: self.eventLoop.now + slack, extended: true)
                return
            }
            self.answerQuestion(
                id,
                with: .failure(
                    .unavailable,
                    "the process did not answer within \(deadlineNanos / 1_000_000_000) s (is it stopped, or its agent busy?)"))
        }
    }

    /// A host ended its answer to a question: the client gets the nodes as the collector now
    /// holds them, with the paths the host sent before. An answer that no open question of
    /// this host awaits (late, or made up) changes nothing.
    func explained(_ frame: ExplainedFrame, session: SessionID) {
        guard let question = questions[frame.requestID], question.session == session else { return }
        var byID: [UInt64: NodeInfo] = [:]
        for node in collector.tree(session)?.nodes ?? [] { byID[node.id] = node }
        let ordered = question.nodeIDs.compactMap { byID[$0] }
        let paths = ordered.map { node in
            var names: [String] = []
            var current: NodeInfo? = node
            while let next = current, names.count <= byID.count {
                names.append(next.displayName)
                current = next.parent.flatMap { byID[$0] }
            }
            return Array(names.reversed())
        }
        let outcome =
            switch frame.outcome {
            case .explained: "explained"
            case .nothingAlive: "nothingAlive"
            case .unavailable: "unavailable"
            }
        answerQuestion(frame.requestID, with: .ok(ControlBody.Explanation(outcome: outcome, nodes: ordered, paths: paths)))
    }

    /// Answers the client of an open question and closes it.
    private func answerQuestion(_ id: UInt32, with answer: ControlAnswer) {
        guard let question = questions.removeValue(forKey: id) else { return }
        question.deadline?.cancel()
        reply(answer, to: question.clientRequestID, of: question.client)
    }

    private func reply(_ answer: ControlAnswer, to requestID: UInt32, of connection: ConnectionID) {
        let parts = ControlResponseFrame.parts(requestID: requestID, status: answer.status, body: answer.body)
        send(parts.map { .response($0) }, to: connection)
    }

    // MARK: Fan-out and time

    /// Unverified nodes logged one line each from one batch of changes; the rest get one line.
    static let unverifiedLinesPerBatch = 10

    /// Logs flagged leaks and sends a session's changes to its subscribers, letting go of those
    /// that do not keep up.
    private func publish(
        _ changes: [TreeChange], for session: SessionID, now: UInt64, resynced: Bool = false, ending: Bool = false, observed: Bool = true
    ) {
        guard !changes.isEmpty else { return }
        if changeObserver != nil {
            if ending ? !declined.contains(session) : observed {
                observe(changes, for: session, now: now, resynced: resynced)
            } else if ending {
                // A declined session's end is still handed over: it closes the session's trace.
                declined.remove(session)
                observe([.sessionEnded(normally: changes.contains(.sessionEnded(normally: true)))], for: session, now: now, resynced: false)
            }
        }
        // One pass over the changes for the leak observer and the log, reading each in place
        // (a loop that copies each change out retains and releases what it carries).
        // Leaks one line each; unverified nodes (thousands when a busy process's exit is cut)
        // one line each only while there are few, then one line for the rest of the batch.
        var records: [LeakRecord] = []
        var unverified = 0
        var firstUnverified: LeakRecord?
        for index in changes.indices {
            switch changes[index] {
            case .leakFlagged(let record):
                if leakObserver != nil { records.append(record) }
                guard record.verdict != .lateRelease else { continue }
                if record.verdict == .unverified {
                    unverified += 1
                    if unverified > Self.unverifiedLinesPerBatch {
                        if firstUnverified == nil { firstUnverified = record }
                        continue
                    }
                }
                logger.notice(
                    "leak flagged",
                    metadata: [
                        "process": "\(VisibleText.escaped(record.processName))",
                        "path": "\(record.path.map(VisibleText.escaped).joined(separator: "/"))",
                        "verdict": "\(record.verdict)",
                    ])
            case .retainersFound(_, _, .some(let record)):
                if leakObserver != nil { records.append(record) }
            default:
                break
            }
        }
        if !records.isEmpty { leakObserver?(records) }
        if let record = firstUnverified {
            logger.notice(
                "more nodes unverified",
                metadata: [
                    "process": "\(VisibleText.escaped(record.processName))",
                    "count": "\(unverified - Self.unverifiedLinesPerBatch)",
                ])
        }
        let deliveries = subscriptions.deliveries(for: session)
        guard !deliveries.isEmpty else { return }
        // After a resync the subscribers get the new tree, one attached event a node.
        var changes = changes
        if changes.contains(.resynced), let view = collector.tree(session) {
            changes += view.nodes.map { TreeChange.attached($0) }
        }
        let bodies = changes.map { ControlBody.encode($0) }
        for delivery in deliveries {
            switch delivery {
            case .send(let subscriber):
                send(eventFrames(bodies, subscriptionID: subscriber.subscriptionID), to: subscriber.connection)
            case .evict(let connection, let reason):
                endpoints[connection]?.close(reason)
            }
        }
    }

    /// Keeps a batch for the change observer, which gets them in bunches: when 256 wait, and at
    /// the end of the loop's current turn (a task is scheduled when the first one comes), so that
    /// a flood of small batches costs the loop an append each, not a call and a lock each.
    private func observe(_ changes: [TreeChange], for session: SessionID, now: UInt64, resynced: Bool) {
        observed.append(
            ObservedChanges(
                session: session, changes: changes, arrivalNanos: now, treeAfterResync: resynced ? collector.tree(session) : nil))
        if observed.count == 1 {
            let hub = NIOLoopBound(self, eventLoop: eventLoop)
            eventLoop.execute { hub.value.handOverObserved() }
        } else if observed.count >= 256 {
            handOverObserved()
        }
    }

    /// Hands the batches kept to the change observer.
    private func handOverObserved() {
        guard !observed.isEmpty, let changeObserver else { return }
        let bunch = observed
        observed.removeAll(keepingCapacity: true)
        for session in changeObserver(bunch) { declined.insert(session) }
    }

    /// Event frames on one subscription, one per encoded change.
    private func eventFrames(_ bodies: [[UInt8]], subscriptionID: UInt32) -> [WireMessage] {
        bodies.map { .event(ControlEventFrame(subscriptionID: subscriptionID, body: $0)) }
    }

    /// Writes frames to a connection, counting them as waiting until the socket has taken them.
    private func send(_ messages: [WireMessage], to connection: ConnectionID) {
        guard let channel = endpoints[connection]?.channel, !messages.isEmpty else { return }
        var encoder = FrameEncoder()
        var bytes: [UInt8] = []
        for message in messages { encoder.encode(message, into: &bytes) }
        let count = bytes.count
        subscriptions.wrote(count, to: connection)
        let promise = eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenComplete { _ in
            self.subscriptions.taken(count, by: connection)
        }
        channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: promise)
    }

    /// Keeps the one timer at the collector's next deadline (an ended session to drop).
    private func updateRetentionTimer(now: UInt64) {
        switch retention.update(nextDeadline: collector.nextDeadline(), now: now) {
        case .keep:
            break
        case .cancel:
            retentionTask?.cancel()
            retentionTask = nil
        case .arm(let delayNanos):
            retentionTask?.cancel()
            // The timer passes the instant it was armed for, not a clock reading: what is due
            // then is judged then, and the next arming takes up whatever came due meanwhile.
            let firesAt = now &+ UInt64(max(delayNanos, 0))
            retentionTask = eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(delayNanos)) {
                self.retentionTimerFired(now: firesAt)
            }
        }
    }

    private func retentionTimerFired(now: UInt64) {
        retention.fired()
        let stringBytes = collector.stringBytes
        _ = collector.advance(now: now)
        AllocatorTrim.afterFreeing(stringBytes - collector.stringBytes)
        updateRetentionTimer(now: now)
    }
}
