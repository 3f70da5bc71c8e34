import Glibc
import Logging
import NIOCore
import NodescopeCollector
import NodescopeRecording
import NodescopeWire

/// One connection, host or client: decodes frames with the wire's incremental decoder, asks
/// the connection's state machine what each means, and calls the hub with the event loop's
/// time. A bad frame closes this connection only, with one logged line that names the peer and
/// the reason; so does every other close that the collector decides (deadlines, slow clients).
final class WireConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let hub: NIOLoopBound<CollectorHub>
    private let peer: PeerCredentials?
    private var decoder = FrameDecoder()
    /// The bytes of the frames of this read that the collector took, when the session is
    /// recorded: handed to the recordings in one piece (``handOverRecording()``).
    private var recording: FramePack?
    /// The run of recorded frames not yet copied: where they lie in the decoder's buffer.
    private var run: (bytes: Range<Int>, frames: Int) = (0..<0, 0)
    /// Whether this read has asked the hub if the session is recorded.
    private var recordingChecked = false
    private var machine = ConnectionStateMachine()
    /// The first bytes of the connection, kept until the hello is read: enough to answer a hello
    /// of another version that cannot be decoded.
    private var streamStart: [UInt8] = []
    private var session: SessionID?
    /// The hub's name for this connection, from the moment it is open.
    private var connection: ConnectionID?
    /// Who the peer said it is (pid and name from its hello).
    private var hello: Hello?
    private var logger: Logger
    private var helloTimeout: Scheduled<Void>?
    private var frameTimeout: Scheduled<Void>?
    /// Frames decoded so far: the stall deadline closes a connection only when none completed.
    private var framesDecoded: UInt64 = 0
    private var closing = false

    init(hub: NIOLoopBound<CollectorHub>, peer: PeerCredentials?, logger: Logger) {
        self.hub = hub
        self.peer = peer
        self.logger = logger
    }

    private var limits: ServerLimits { hub.value.limits }

    func channelActive(context: ChannelHandlerContext) {
        opened(context)
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The server adds this handler to channels that are already active.
        if context.channel.isActive { opened(context) }
    }

    private func opened(_ context: ChannelHandlerContext) {
        guard connection == nil else { return }
        // The hub keeps this until the connection closes (channelInactive).
        connection = hub.value.connectionOpened(context.channel) { reason in self.close(context, reason: reason) }
        armHelloTimeout(context)
    }

    /// Closes the connection when no hello came within the deadline. A deadline that passed while
    /// the collector's loop was busy with other work (a big answer for another client) is given
    /// again: the hello may be waiting in the socket, and the loop runs the timers that came due
    /// during that work before it reads its sockets again. A deadline met in time still takes a
    /// last look ``lastLookNanos`` later, after the loop has read its sockets once more: the loop
    /// may have been busy for most of the deadline and come back just before it, with the hello
    /// waiting unread (closing then would reset a client that did say hello).
    private func armHelloTimeout(_ context: ChannelHandlerContext, lastLook: Bool = false) {
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let deadline = limits.helloDeadlineNanos
        let due = context.eventLoop.now + .nanoseconds(lastLook ? Self.lastLookNanos : deadline)
        helloTimeout = context.eventLoop.scheduleTask(deadline: due) {
            let (handler, context) = bound.value
            guard handler.machine.state == .awaitingHello, !handler.closing else { return }
            if context.eventLoop.now - due > .nanoseconds(max(deadline / 4, 100_000_000)) {
                handler.armHelloTimeout(context)
            } else if !lastLook {
                handler.armHelloTimeout(context, lastLook: true)
            } else {
                handler.close(context, reason: "no hello within \(Self.seconds(deadline))")
            }
        }
    }

    /// How long after the hello deadline a connection is looked at once more before it is closed.
    static let lastLookNanos: Int64 = 50_000_000

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        // Everything in one read arrived at once: one reading of the loop's clock serves it all.
        let now = Self.now(context)
        if machine.state == .awaitingHello, streamStart.count < Hello.versionPrefixBytes {
            streamStart +=
                buffer.getBytes(
                    at: buffer.readerIndex, length: min(buffer.readableBytes, Hello.versionPrefixBytes - streamStart.count)) ?? []
        }
        buffer.withUnsafeReadableBytes { decoder.feed($0) }
        // Asked once a read, not once a message (a new session's changes are observed).
        let observed = session.map { hub.value.observesChanges(of: $0) } ?? true
        while context.channel.isActive, !closing {
            let message: WireMessage?
            do {
                message = try decoder.next()
            } catch {
                if machine.state == .awaitingHello {
                    perform(
                        machine.undecodableFirstFrame(error, announcedVersion: Hello.announcedVersion(inStreamStart: streamStart)),
                        context: context, now: now)
                } else {
                    close(context, reason: "malformed frame: \(error.message)")
                }
                return
            }
            guard let message else { break }
            framesDecoded &+= 1
            perform(machine.received(message), context: context, now: now, observed: observed)
        }
        handOverRecording()
        recordingChecked = false
        if let session { hub.value.readDone(session, now: now) }
        watchForStalledFrame(context)
    }

    /// Closes the connection when a frame, once begun, does not complete within the deadline
    /// (a peer that stalls mid-frame would otherwise hold its buffer forever). A connection on
    /// which frames keep completing is never closed by it, also when the collector itself was
    /// stopped and reads a backlog late.
    private func watchForStalledFrame(_ context: ChannelHandlerContext) {
        guard !closing, decoder.bufferedByteCount > 0 else {
            frameTimeout?.cancel()
            frameTimeout = nil
            return
        }
        guard frameTimeout == nil else { return }
        armFrameTimeout(context)
    }

    private func armFrameTimeout(_ context: ChannelHandlerContext) {
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let deadline = limits.frameDeadlineNanos
        let framesAtArm = framesDecoded
        frameTimeout = context.eventLoop.scheduleTask(in: .nanoseconds(deadline)) {
            let (handler, context) = bound.value
            handler.frameTimeout = nil
            guard handler.decoder.bufferedByteCount > 0, !handler.closing else { return }
            if handler.framesDecoded != framesAtArm {
                handler.armFrameTimeout(context)
            } else {
                handler.close(context, reason: "a frame stayed incomplete for \(Self.seconds(deadline))")
            }
        }
    }

    /// Notes a frame that the collector took, for the recordings: frames that lie end to end in
    /// the decoder's buffer make one run, copied at once.
    private func noteRecordedFrame(_ bounds: Range<Int>) {
        if run.frames > 0, bounds.lowerBound == run.bytes.upperBound {
            run.bytes = run.bytes.lowerBound..<bounds.upperBound
            run.frames += 1
            return
        }
        copyRun()
        run = (bounds, 1)
    }

    /// Copies the run of frames noted so far into the recording's pack.
    private func copyRun() {
        guard run.frames > 0 else { return }
        let (bytes, frames) = run
        run = (0..<0, 0)
        decoder.withBytes(in: bytes) { recording?.add(run: $0, frames: frames) }
    }

    /// Hands the frames gathered for the recordings over, before anything that could end them.
    private func handOverRecording() {
        copyRun()
        guard let pack = recording else { return }
        recording = nil
        if let session { hub.value.recorded(pack, session: session) }
    }

    private func perform(_ action: ConnectionStateMachine.Action, context: ChannelHandlerContext, now: UInt64, observed: Bool = true) {
        let hub = self.hub.value
        switch action {
        case .acceptHost(let hello, let version):
            self.hello = hello
            guard admit(context, asHost: true) else { return }
            guard let connection else { return }
            let session = hub.openHost(
                hello, connection: connection, version: version, clocks: TimeNamespace.relation(toPeer: peer?.pid),
                processStartedAt: ProcessStart.monotonicNanos(ofPeer: peer?.pid), now: now)
            self.session = session
            logger[metadataKey: "session"] = "\(session)"
            let settings = hub.collector.settings
            reply(
                .helloAccepted(
                    HelloAccepted(
                        protocolVersion: version, graceNanos: settings.graceNanos, holdExit: settings.holdExit,
                        collectorMonotonicNanos: now)), context: context)
        case .acceptClient(let hello, let version):
            self.hello = hello
            guard admit(context, asHost: false) else { return }
            reply(
                .helloAccepted(
                    HelloAccepted(
                        protocolVersion: version, graceNanos: hub.collector.settings.graceNanos, holdExit: false,
                        collectorMonotonicNanos: now)), context: context)
        case .refuse(let code, let reason):
            refuse(code, reason, context: context)
        case .ingest(let message):
            guard let session else { return }
            if let violation = hub.ingest(message, session: session, now: now, observed: observed) {
                close(context, reason: violation.message)
                return
            }
            if !recordingChecked {
                recordingChecked = true
                if hub.isRecording(session) { recording = FramePack(arrivalNanos: now, capacity: decoder.bufferedByteCount + 4096) }
            }
            if recording != nil { noteRecordedFrame(decoder.lastFrameBounds) }
            if case .goodbye(let reason) = message {
                handOverRecording()
                // The session ends at its goodbye: nothing after it is read.
                hub.endHost(session, normally: true, now: now)
                self.session = nil
                logger.debug("host said goodbye (\(reason))")
                closing = true
                context.close(promise: nil)
            }
        case .explained(let frame):
            guard let session else { return }
            hub.explained(frame, session: session)
        case .request(let request):
            guard let connection else { return }
            if case .disconnect(let reason) = hub.handle(request, from: connection, now: Self.now(context)) {
                close(context, reason: reason)
            }
        case .ignore:
            break
        case .close(let reason):
            close(context, reason: reason)
        }
    }

    /// Admits a peer that said hello: refuses one of another user (SO_PEERCRED), as the protocol
    /// requires, and one beyond the limit of its kind (hosts and clients are counted apart).
    private func admit(_ context: ChannelHandlerContext, asHost: Bool) -> Bool {
        if let uid = peer?.uid, uid != getuid() {
            refuse(.wrongUser, "peer uid \(uid) is not the collector's uid \(getuid())", context: context)
            return false
        }
        if let connection, !hub.value.admit(connection, asHost: asHost) {
            let limit = asHost ? "\(limits.maxConnections) hosts" : "\(limits.maxClientConnections) client connections"
            refuse(.busyOrOther, "the collector serves its limit of \(limit); try again later", context: context)
            return false
        }
        return true
    }

    private func refuse(_ code: RefusalCode, _ reason: String, context: ChannelHandlerContext) {
        logger.notice("refused \(peerName): \(VisibleText.escaped(reason))")
        reply(.helloRefused(HelloRefused(code: code, reason: reason)), context: context)
        closing = true
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        helloTimeout?.cancel()
        frameTimeout?.cancel()
        let hub = self.hub.value
        if let connection { hub.connectionClosed(connection, now: Self.now(context)) }
        connection = nil
        handOverRecording()
        if let session {
            // Without a goodbye (which ends the session as it is read), the end is abnormal.
            hub.endHost(session, normally: false, now: Self.now(context))
            self.session = nil
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A peer that resets the connection as it exits is an end of stream, not news.
        if let io = error as? IOError, io.errnoCode == ECONNRESET || io.errnoCode == EPIPE {
            context.close(promise: nil)
            return
        }
        close(context, reason: "connection error: \(error)")
    }

    private func reply(_ message: WireMessage, context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: FrameEncoder.encoded(message))), promise: nil)
    }

    /// The peer as log lines name it: `host 4242 (sample-nodes)` from its hello, with the
    /// kernel's pid for the socket (SO_PEERCRED) when the two differ; `peer pid 777` before a hello.
    /// The name is the peer's own choice, escaped (``VisibleText``) so that it cannot forge a line.
    private var peerName: String {
        guard let hello else { return "peer pid \(peer.map { "\($0.pid)" } ?? "?")" }
        let role = hello.role == .host ? "host" : "client"
        var name = "\(role) \(hello.pid) (\(VisibleText.escaped(hello.processName)))"
        if let pid = peer?.pid, pid > 0, UInt32(pid) != hello.pid { name += " [socket peer pid \(pid)]" }
        return name
    }

    /// Closes the connection for a violation or a limit, with one log line: who and why.
    private func close(_ context: ChannelHandlerContext, reason: String) {
        guard !closing else { return }
        closing = true
        logger.warning("closing \(peerName): \(VisibleText.escaped(reason))")
        context.close(promise: nil)
    }

    /// The event loop's clock in nanoseconds: `CLOCK_MONOTONIC` on a real loop, the manual
    /// clock of an `EmbeddedEventLoop` in tests.
    private static func now(_ context: ChannelHandlerContext) -> UInt64 {
        context.eventLoop.now.uptimeNanoseconds
    }

    private static func seconds(_ nanos: Int64) -> String {
        nanos % 1_000_000_000 == 0 ? "\(nanos / 1_000_000_000) s" : "\(Double(nanos) / 1e9) s"
    }
}
