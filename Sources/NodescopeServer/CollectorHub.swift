import Logging
import NIOCore
import NodescopeCollector
import NodescopeControl
import NodescopeWire

/// The collector's state and its fan-out, confined to the server's one event loop: every
/// connection handler calls in from that loop, so nothing here needs a lock.
///
/// Time: every decision reads the clock once (``now()``) and passes that reading on. Graces are
/// judged by the collector in the hosts' time; the hub's only timer drops ended sessions.
final class CollectorHub {
    private struct Subscriber {
        var requestID: UInt32
        var channel: Channel
    }

    /// An open connection and the bytes written to it that its peer has not taken yet.
    private struct Connection {
        var channel: Channel
        var pendingBytes = 0
    }

    let eventLoop: EventLoop
    let logger: Logger
    let limits: ServerLimits
    private(set) var collector: Collector
    private var subscribers: [SessionID: [Subscriber]] = [:]
    private var connections: [ObjectIdentifier: Connection] = [:]
    private var timer: Scheduled<Void>?
    private var timerDeadline: UInt64?

    init(settings: CollectorSettings, limits: ServerLimits = .init(), eventLoop: EventLoop, logger: Logger) {
        self.collector = Collector(settings: settings)
        self.limits = limits
        self.eventLoop = eventLoop
        self.logger = logger
    }

    /// The collector's clock (`CLOCK_MONOTONIC`), in nanoseconds.
    static func now() -> UInt64 { NIODeadline.now().uptimeNanoseconds }

    // MARK: Hosts

    func openHost(_ hello: Hello, clocks: ClockRelation, processStartedAt: UInt64? = nil) -> SessionID {
        let session = collector.openSession(hello, now: Self.now(), clocks: clocks, processStartedAt: processStartedAt)
        logger.debug(
            "host connected",
            metadata: ["pid": "\(hello.pid)", "name": "\(hello.processName)", "session": "\(session)", "clock": "\(clocks)"])
        return session
    }

    /// Feeds one message of a host's stream; returns the violation when it breaks a rule (the
    /// connection must then close).
    func ingest(_ message: WireMessage, session: SessionID) -> SessionError? {
        do {
            let changes = try collector.ingest(message, session: session, now: Self.now())
            publish(changes, for: session)
            return nil
        } catch {
            return error
        }
    }

    func endHost(_ session: SessionID, normally: Bool) {
        let now = Self.now()
        let changes = collector.endSession(session, normally: normally, now: now)
        logger.debug("host ended", metadata: ["session": "\(session)", "normally": "\(normally)"])
        publish(changes, for: session)
        // The last change was `sessionEnded`: the subscriptions of this session are over.
        subscribers[session] = nil
        rescheduleTimer(now: now)
    }

    // MARK: Clients

    /// Answers a client's request. False when the client has let more than
    /// ``ServerLimits/maxPendingClientBytes`` of earlier answers wait unread: it is not answered
    /// and must be disconnected.
    func handle(_ request: ControlRequestFrame, from channel: Channel) -> Bool {
        if let waiting = connections[ObjectIdentifier(channel)]?.pendingBytes, waiting > limits.maxPendingClientBytes {
            return false
        }
        let reply: (ResponseStatus, [UInt8])
        switch request.command {
        case .listProcesses:
            reply = (.ok, ControlBody.encode(collector.processes()))
        case .tree:
            reply = resolve(request.argument) { session in
                let path = request.rootPath.isEmpty ? nil : request.rootPath.split(separator: "/").map(String.init)
                let depth = request.depth == 0 ? nil : Int(request.depth) - 1
                guard let view = collector.tree(session, rootPath: path, depth: depth),
                      path == nil || !view.nodes.isEmpty
                else {
                    return (.notFound, ControlBody.encode(ControlBody.Failure(error: "no node at \(request.rootPath)")))
                }
                return (.ok, ControlBody.encode(view))
            }
        case .leaks:
            if request.argument.isEmpty {
                reply = (.ok, ControlBody.encode(collector.leaks(nil)))
            } else {
                reply = resolve(request.argument) { (.ok, ControlBody.encode(collector.leaks($0))) }
            }
        case .subscribe:
            reply = resolve(request.argument) { session in
                if subscribers[session]?.contains(where: { $0.channel === channel }) == true {
                    return (.badRequest, ControlBody.encode(ControlBody.Failure(
                        error: "this connection already follows that process; one subscription each")))
                }
                subscribers[session, default: []].append(Subscriber(requestID: request.requestID, channel: channel))
                let view = collector.tree(session)
                return (.ok, ControlBody.encode(view))
            }
        case .unsubscribe:
            reply = unsubscribe(request, from: channel)
        }
        send(ControlResponseFrame.parts(requestID: request.requestID, status: reply.0, body: reply.1).map { .response($0) },
             on: channel)
        // A subscription to a process that has already ended gets its end at once.
        if request.command == .subscribe, reply.0 == .ok, case let .success(session) = collector.resolve(request.argument),
           let summary = collector.summary(session), summary.endedAtNanos != nil
        {
            let ended = TreeChange.sessionEnded(normally: summary.endedNormally ?? false)
            send([.event(ControlEventFrame(subscriptionID: request.requestID, body: ControlBody.encode(ended)))], on: channel)
            subscribers[session]?.removeAll { $0.channel === channel && $0.requestID == request.requestID }
        }
        return true
    }

    /// Ends one of this connection's subscriptions; an id it does not have is not found.
    private func unsubscribe(_ request: ControlRequestFrame, from channel: Channel) -> (ResponseStatus, [UInt8]) {
        guard let id = UInt32(request.argument) else {
            return (.badRequest, ControlBody.encode(ControlBody.Failure(
                error: "unsubscribe takes a subscription id in decimal, not \"\(request.argument)\"")))
        }
        var found = false
        for key in subscribers.keys {
            let before = subscribers[key]?.count ?? 0
            subscribers[key]?.removeAll { $0.channel === channel && $0.requestID == id }
            if (subscribers[key]?.count ?? 0) != before { found = true }
        }
        guard found else {
            return (.notFound, ControlBody.encode(ControlBody.Failure(error: "no subscription \(id) on this connection")))
        }
        return (.ok, ControlBody.encode([String: String]()))
    }

    // MARK: Connections

    /// Registers a connection (see ``isOverConnectionLimit``).
    func connectionOpened(_ channel: Channel) {
        connections[ObjectIdentifier(channel)] = Connection(channel: channel)
    }

    /// Whether more connections are open than the limit allows.
    var isOverConnectionLimit: Bool { connections.count > limits.maxConnections }

    func connectionClosed(_ channel: Channel) {
        connections[ObjectIdentifier(channel)] = nil
    }

    /// Closes every connection (the collector is stopping).
    func closeAll() {
        for connection in connections.values { connection.channel.close(promise: nil) }
        connections.removeAll()
        timer?.cancel()
    }

    func clientClosed(_ channel: Channel) {
        for key in subscribers.keys { subscribers[key]?.removeAll { $0.channel === channel } }
    }

    private func resolve(
        _ query: String, _ body: (SessionID) -> (ResponseStatus, [UInt8])
    ) -> (ResponseStatus, [UInt8]) {
        switch collector.resolve(query) {
        case let .success(session):
            return body(session)
        case let .failure(error):
            switch error {
            case .notFound:
                return (.notFound, ControlBody.encode(ControlBody.Failure(error: "\(error)")))
            case let .ambiguous(candidates):
                return (.ambiguous, ControlBody.encode(ControlBody.Failure(error: "\(error)", candidates: candidates)))
            }
        }
    }

    // MARK: Fan-out and time

    private func publish(_ changes: [TreeChange], for session: SessionID) {
        guard !changes.isEmpty else { return }
        for change in changes {
            if case let .leakFlagged(record) = change, record.verdict != .lateRelease {
                logger.notice("leak flagged", metadata: [
                    "process": "\(record.processName)", "path": "\(record.path.joined(separator: "/"))",
                    "verdict": "\(record.verdict)",
                ])
            }
        }
        guard let list = subscribers[session], !list.isEmpty else { return }
        // After a resync the subscribers get the new tree, one attached event a node.
        var changes = changes
        if changes.contains(.resynced), let view = collector.tree(session) {
            changes += view.nodes.map { TreeChange.attached($0) }
        }
        for subscriber in list {
            // A subscriber that does not read (a suspended `attach`) must not make the daemon
            // buffer without bound: past the channel's high-water mark it is let go.
            guard subscriber.channel.isWritable else {
                logger.notice("disconnected a subscriber that does not keep up", metadata: ["session": "\(session)"])
                subscribers[session]?.removeAll { $0.channel === subscriber.channel }
                subscriber.channel.close(promise: nil)
                continue
            }
            let frames = changes.map { change in
                WireMessage.event(ControlEventFrame(subscriptionID: subscriber.requestID, body: ControlBody.encode(change)))
            }
            send(frames, on: subscriber.channel)
        }
    }

    /// Writes frames to a client, counting them as waiting until the socket has taken them.
    private func send(_ messages: [WireMessage], on channel: Channel) {
        var encoder = FrameEncoder()
        var bytes: [UInt8] = []
        for message in messages { encoder.encode(message, into: &bytes) }
        let key = ObjectIdentifier(channel)
        let count = bytes.count
        connections[key]?.pendingBytes += count
        let promise = eventLoop.makePromise(of: Void.self)
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        promise.futureResult.whenComplete { _ in
            let hub = bound.value
            if hub.connections[key]?.channel === channel { hub.connections[key]!.pendingBytes -= count }
        }
        channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: promise)
    }

    /// Keeps one timer at the collector's next deadline (an ended session to drop), from one
    /// reading of the clock.
    private func rescheduleTimer(now: UInt64) {
        let next = collector.nextDeadline()
        guard next != timerDeadline else { return }
        timer?.cancel()
        timerDeadline = next
        guard let next else {
            timer = nil
            return
        }
        let delay = next > now ? Int64(clamping: next - now) : 0
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        timer = eventLoop.scheduleTask(in: .nanoseconds(delay)) {
            bound.value.timerFired()
        }
    }

    private func timerFired() {
        timerDeadline = nil
        let now = Self.now()
        _ = collector.advance(now: now)
        rescheduleTimer(now: now)
    }
}
