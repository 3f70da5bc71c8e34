import Logging
import NIOCore
import NodescopeCollector
import NodescopeWire

/// The collector's state and its fan-out, confined to the server's one event loop: every
/// connection handler calls in from that loop, so nothing here needs a lock.
final class CollectorHub {
    private struct Subscriber {
        var requestID: UInt32
        var channel: Channel
    }

    let eventLoop: EventLoop
    let logger: Logger
    private(set) var collector: Collector
    private var subscribers: [SessionID: [Subscriber]] = [:]
    /// Every open connection, so that stopping the collector can close them.
    private var connections: [ObjectIdentifier: Channel] = [:]
    private var timer: Scheduled<Void>?
    private var timerDeadline: UInt64?
    /// Called on the loop after every change of the processes list (tests and `check` use it).
    var onSessionsChanged: (() -> Void)?

    init(settings: CollectorSettings, eventLoop: EventLoop, logger: Logger) {
        self.collector = Collector(settings: settings)
        self.eventLoop = eventLoop
        self.logger = logger
    }

    static func now() -> UInt64 { NIODeadline.now().uptimeNanoseconds }

    // MARK: Hosts

    func openHost(_ hello: Hello) -> SessionID {
        let session = collector.openSession(hello, now: Self.now())
        logger.info("host connected", metadata: ["pid": "\(hello.pid)", "name": "\(hello.processName)", "session": "\(session)"])
        onSessionsChanged?()
        return session
    }

    /// Feeds one message; false when it violates the protocol (the connection must close).
    func ingest(_ message: WireMessage, session: SessionID) -> Bool {
        do {
            let changes = try collector.ingest(message, session: session, now: Self.now())
            publish(changes, for: session)
            rescheduleTimer()
            return true
        } catch {
            logger.warning("closing host connection: \(error)", metadata: ["session": "\(session)"])
            return false
        }
    }

    func endHost(_ session: SessionID, normally: Bool) {
        let changes = collector.endSession(session, normally: normally, now: Self.now())
        logger.info("host ended", metadata: ["session": "\(session)", "normally": "\(normally)"])
        publish(changes, for: session)
        // The last change was `sessionEnded`: the subscriptions of this session are over.
        subscribers[session] = nil
        rescheduleTimer()
        onSessionsChanged?()
    }

    // MARK: Clients

    func handle(_ request: ControlRequestFrame, from channel: Channel) {
        let reply: (ResponseStatus, [UInt8])
        switch request.command {
        case .listProcesses:
            reply = (.ok, ControlBody.encode(collector.processes()))
        case .tree:
            reply = resolve(request.argument) { session in
                let path = request.rootPath.isEmpty ? nil : request.rootPath.split(separator: "/").map(String.init)
                let depth = request.depth == 0 ? nil : Int(request.depth) - 1
                guard let view = collector.tree(session, rootPath: path, depth: depth) else {
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
            let id = UInt32(request.argument) ?? request.requestID
            for key in subscribers.keys {
                subscribers[key]?.removeAll { $0.channel === channel && $0.requestID == id }
            }
            reply = (.ok, ControlBody.encode([String: String]()))
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
    }

    func connectionOpened(_ channel: Channel) {
        connections[ObjectIdentifier(channel)] = channel
    }

    func connectionClosed(_ channel: Channel) {
        connections[ObjectIdentifier(channel)] = nil
    }

    /// Closes every connection (the collector is stopping).
    func closeAll() {
        for channel in connections.values { channel.close(promise: nil) }
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
        guard !changes.isEmpty, let list = subscribers[session], !list.isEmpty else { return }
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

    private func send(_ messages: [WireMessage], on channel: Channel) {
        var encoder = FrameEncoder()
        var bytes: [UInt8] = []
        for message in messages { encoder.encode(message, into: &bytes) }
        channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
    }

    /// Keeps one timer at the collector's next deadline (a grace running out, a retention).
    private func rescheduleTimer() {
        let next = collector.nextDeadline()
        guard next != timerDeadline else { return }
        timer?.cancel()
        timerDeadline = next
        guard let next else {
            timer = nil
            return
        }
        let delay = next > Self.now() ? Int64(clamping: next - Self.now()) : 0
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        timer = eventLoop.scheduleTask(in: .nanoseconds(delay)) {
            bound.value.timerFired()
        }
    }

    private func timerFired() {
        do {
            timerDeadline = nil
            let changes = collector.advance(now: Self.now())
            var sessions = Set<SessionID>()
            for (session, change) in changes {
                publish([change], for: session)
                sessions.insert(session)
            }
            for (_, change) in changes {
                if case let .leakFlagged(record) = change {
                    logger.notice("leak flagged", metadata: [
                        "process": "\(record.processName)", "path": "\(record.path.joined(separator: "/"))",
                        "verdict": "\(record.verdict)",
                    ])
                }
            }
            rescheduleTimer()
        }
    }
}
