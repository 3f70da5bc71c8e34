import Logging
import NIOCore
import NodescopeCollector
import NodescopeControl
import NodescopeWire

/// The collector's state and its fan-out, confined to the server's one event loop: every
/// connection handler calls in from that loop, so nothing here needs a lock.
///
/// It holds the pure parts and performs what they decide: the ``Collector`` (trees and
/// verdicts), the ``SubscriptionTable`` (who follows which process, bytes waiting for each
/// connection, which subscriber to let go), one ``ControlCommandHandler`` per control command,
/// and the ``RetentionTimer``. It never reads a clock: callers pass `now`, nanoseconds of the
/// event loop's clock (`CLOCK_MONOTONIC` on a real loop, the manual clock of an
/// `EmbeddedEventLoop` in tests), and the retention timer reads its loop's `now` when it fires.
final class CollectorHub {
    /// An open connection as the hub reaches it: where to write, and how to close it. `close`
    /// is the connection handler's, which logs the reason in one line naming the peer.
    private struct Endpoint {
        var channel: Channel
        var close: (_ reason: String) -> Void
    }

    let eventLoop: EventLoop
    let logger: Logger
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

    /// A client's question that a host is answering.
    private struct OpenQuestion {
        var client: ConnectionID
        var clientRequestID: UInt32
        var session: SessionID
        var nodeIDs: [UInt64]
        var deadline: Scheduled<Void>?
    }

    /// A hub with an empty collector, serving on `eventLoop`.
    init(settings: CollectorSettings, limits: ServerLimits = .init(), eventLoop: EventLoop, logger: Logger) {
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

    /// Whether more connections are open than the limit allows.
    var isOverConnectionLimit: Bool { subscriptions.isOverConnectionLimit }

    /// Forgets a closed connection and ends its subscriptions.
    func connectionClosed(_ connection: ConnectionID) {
        endpoints[connection] = nil
        // A client that goes away gets no answer; the host's, when it comes, is dropped.
        for (id, question) in questions where question.client == connection {
            question.deadline?.cancel()
            questions[id] = nil
        }
        subscriptions.close(connection)
    }

    /// Closes every connection (the collector is stopping).
    func closeAll() {
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
        logger.debug(
            "host connected",
            metadata: ["pid": "\(hello.pid)", "name": "\(hello.processName)", "session": "\(session)", "clock": "\(clocks)"])
        return session
    }

    /// Feeds one message of a host's stream, read at `now`; returns the violation when it
    /// breaks a rule (the connection must then close).
    func ingest(_ message: WireMessage, session: SessionID, now: UInt64) -> SessionError? {
        do {
            let changes = try collector.ingest(message, session: session, now: now)
            publish(changes, for: session)
            return nil
        } catch {
            return error
        }
    }

    /// Ends a host's session at `now`: `normally` after its goodbye, otherwise abnormally.
    func endHost(_ session: SessionID, normally: Bool, now: UInt64) {
        hosts[session] = nil
        for (id, question) in questions where question.session == session {
            answerQuestion(id, with: .failure(.unavailable, "the process ended before its analysis was done"))
        }
        let changes = collector.endSession(session, normally: normally, now: now)
        logger.debug("host ended", metadata: ["session": "\(session)", "normally": "\(normally)"])
        publish(changes, for: session)
        // The last change was `sessionEnded`: the subscriptions of this session are over.
        subscriptions.sessionEnded(session)
        updateRetentionTimer(now: now)
    }

    // MARK: Clients

    /// Answers a client's request with the handler of its command, unless the client has let
    /// more than ``ServerLimits/maxPendingClientBytes`` of earlier answers wait unread: then it
    /// is not answered, and the caller closes the connection with the returned reason.
    func handle(_ request: ControlRequestFrame, from connection: ConnectionID) -> SubscriptionTable.RequestAdmission {
        let admission = subscriptions.admitRequest(from: connection)
        guard admission == .answer else { return admission }
        let asked = ControlRequest(frame: request, connection: connection, collector: collector)
        let answer = request.command.handler.answer(asked, subscriptions: &subscriptions)
        if let question = answer.askHost {
            ask(question, for: request.requestID, of: connection)
            return .answer
        }
        let parts = ControlResponseFrame.parts(requestID: request.requestID, status: answer.status, body: answer.body)
        let events = eventFrames(answer.events.map { ControlBody.encode($0) }, subscriptionID: request.requestID)
        send(parts.map { .response($0) } + events, to: connection)
        return .answer
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
        let deadlineNanos = limits.explainDeadlineNanos
        let deadline = eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(deadlineNanos)) {
            self.answerQuestion(
                id,
                with: .failure(
                    .unavailable,
                    "the process did not answer within \(deadlineNanos / 1_000_000_000) s (is it stopped, or its agent busy?)"))
        }
        questions[id] = OpenQuestion(
            client: client, clientRequestID: requestID, session: question.session, nodeIDs: question.nodeIDs,
            deadline: deadline)
        send([.explain(ExplainFrame(requestID: id, nodeIDs: question.nodeIDs))], to: host.connection)
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

    /// Logs flagged leaks and sends a session's changes to its subscribers, letting go of those
    /// that do not keep up.
    private func publish(_ changes: [TreeChange], for session: SessionID) {
        guard !changes.isEmpty else { return }
        for case .leakFlagged(let record) in changes where record.verdict != .lateRelease {
            logger.notice(
                "leak flagged",
                metadata: [
                    "process": "\(record.processName)", "path": "\(record.path.joined(separator: "/"))",
                    "verdict": "\(record.verdict)",
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
            retentionTask = eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(delayNanos)) {
                self.retentionTimerFired(now: self.eventLoop.now.uptimeNanoseconds)
            }
        }
    }

    private func retentionTimerFired(now: UInt64) {
        retention.fired()
        _ = collector.advance(now: now)
        updateRetentionTimer(now: now)
    }
}
