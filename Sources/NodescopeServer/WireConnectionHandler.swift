import Glibc
import Logging
import NIOCore
import NodescopeCollector
import NodescopeWire

/// One connection, host or client: decodes frames with the wire's incremental decoder, asks
/// the connection's state machine what each means, and calls the hub. A bad frame closes this
/// connection only, with a logged reason.
final class WireConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let hub: NIOLoopBound<CollectorHub>
    private let peerUID: UInt32?
    private var decoder = FrameDecoder()
    private var machine = ConnectionStateMachine()
    private var session: SessionID?
    private var logger: Logger
    private var helloTimeout: Scheduled<Void>?

    /// How long a peer may take to say hello.
    static let helloDeadline = TimeAmount.seconds(5)

    init(hub: NIOLoopBound<CollectorHub>, peerUID: UInt32?, logger: Logger) {
        self.hub = hub
        self.peerUID = peerUID
        self.logger = logger
    }

    func channelActive(context: ChannelHandlerContext) {
        hub.value.connectionOpened(context.channel)
        startHelloTimer(context)
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The server adds this handler to channels that are already active.
        if context.channel.isActive {
            hub.value.connectionOpened(context.channel)
            startHelloTimer(context)
        }
    }

    /// Closes the connection if the peer has not said hello in time.
    private func startHelloTimer(_ context: ChannelHandlerContext) {
        guard helloTimeout == nil else { return }
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        helloTimeout = context.eventLoop.scheduleTask(in: Self.helloDeadline) {
            let (handler, context) = bound.value
            if handler.machine.state == .awaitingHello {
                handler.close(context, reason: "no hello within \(Self.helloDeadline.nanoseconds / 1_000_000_000) s")
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { decoder.feed($0) }
        while context.channel.isActive {
            let message: WireMessage?
            do {
                message = try decoder.next()
            } catch {
                close(context, reason: "malformed frame: \(error)")
                return
            }
            guard let message else { return }
            perform(machine.received(message), context: context)
        }
    }

    private func perform(_ action: ConnectionStateMachine.Action, context: ChannelHandlerContext) {
        let hub = self.hub.value
        switch action {
        case let .acceptHost(hello):
            guard admit(context) else { return }
            let session = hub.openHost(hello)
            self.session = session
            logger[metadataKey: "session"] = "\(session)"
            let settings = hub.collector.settings
            reply(.helloAccepted(HelloAccepted(
                graceNanos: settings.graceNanos, holdExit: settings.holdExit,
                collectorMonotonicNanos: CollectorHub.now())), context: context)
        case .acceptClient:
            guard admit(context) else { return }
            reply(.helloAccepted(HelloAccepted(
                graceNanos: hub.collector.settings.graceNanos, holdExit: false,
                collectorMonotonicNanos: CollectorHub.now())), context: context)
        case let .refuse(code, reason):
            logger.notice("refused a peer: \(reason)")
            reply(.helloRefused(HelloRefused(code: code, reason: reason)), context: context)
            context.close(promise: nil)
        case let .ingest(message):
            guard let session, hub.ingest(message, session: session) else {
                close(context, reason: "protocol violation (see above)")
                return
            }
        case .goodbye:
            break
        case let .request(request):
            hub.handle(request, from: context.channel)
        case .ignore:
            break
        case let .close(reason):
            close(context, reason: reason)
        }
    }

    /// Refuses a peer of another user (SO_PEERCRED), as the protocol requires.
    private func admit(_ context: ChannelHandlerContext) -> Bool {
        guard let peerUID, peerUID != getuid() else { return true }
        let reason = "peer uid \(peerUID) is not the collector's uid \(getuid())"
        logger.warning("refused a peer: \(reason)")
        reply(.helloRefused(HelloRefused(code: .wrongUser, reason: reason)), context: context)
        context.close(promise: nil)
        return false
    }

    func channelInactive(context: ChannelHandlerContext) {
        helloTimeout?.cancel()
        let hub = self.hub.value
        hub.connectionClosed(context.channel)
        if let session {
            hub.endHost(session, normally: machine.endedNormally)
            self.session = nil
        } else {
            hub.clientClosed(context.channel)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        close(context, reason: "connection error: \(error)")
    }

    private func reply(_ message: WireMessage, context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: FrameEncoder.encoded(message))), promise: nil)
    }

    private func close(_ context: ChannelHandlerContext, reason: String) {
        logger.warning("closing connection: \(reason)")
        context.close(promise: nil)
    }
}
