import Glibc
import InMemoryLogging
import Logging
import NIOCore
import NIOEmbedded
import NodescopeCollector
import NodescopeWire

@testable import NodescopeServer

/// A collector hub on NIO's `EmbeddedEventLoop`, its connections `EmbeddedChannel`s: bytes in,
/// frames out, time moved by hand (``advance(by:)``), and every log line kept in memory.
struct EmbeddedCollector {
    /// The loop, whose manual clock starts at 0.
    let loop = EmbeddedEventLoop()
    /// Where the hub and the connection handlers log.
    let log = InMemoryLogHandler()
    /// The hub under test.
    let hub: CollectorHub

    /// A hub with `settings` and `limits`, and the observers given.
    init(
        settings: CollectorSettings = .init(), limits: ServerLimits = .init(),
        changeObserver: ChangeObserver? = nil
    ) {
        let log = log
        hub = CollectorHub(
            settings: settings, limits: limits, eventLoop: loop, logger: Logger(label: "test") { _ in log },
            changeObserver: changeObserver)
    }

    /// A new connection, active. `peerPID` is the socket peer's pid (SO_PEERCRED, with this
    /// process's uid); `unread`, when given, sits in front of the connection handler and holds
    /// what is written to the peer.
    func connect(peerPID: Int32? = nil, unread: UnreadWrites? = nil) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        if let unread { try channel.pipeline.syncOperations.addHandler(unread) }
        let peer = peerPID.map { PeerCredentials(pid: $0, uid: getuid(), gid: getgid()) }
        try channel.pipeline.syncOperations.addHandler(
            WireConnectionHandler(hub: NIOLoopBound(hub, eventLoop: loop), peer: peer, logger: Logger(label: "test") { _ in log }))
        // An embedded channel is inactive until connected; the handler reads only while active.
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/embedded")).wait()
        return channel
    }

    /// Sends `messages` to the collector on `channel`, one byte at a time when `bytewise` (the
    /// handler must reassemble frames across reads).
    func send(_ messages: [WireMessage], to channel: EmbeddedChannel, bytewise: Bool = false) throws {
        var encoder = FrameEncoder()
        var bytes: [UInt8] = []
        for message in messages { encoder.encode(message, into: &bytes) }
        if bytewise {
            for byte in bytes { try channel.writeInbound(ByteBuffer(bytes: [byte])) }
        } else {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
        }
    }

    /// The frames the collector has written to `channel` since the last call.
    func replies(from channel: EmbeddedChannel) throws -> [WireMessage] {
        var decoder = FrameDecoder()
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            buffer.withUnsafeReadableBytes { decoder.feed($0) }
        }
        var messages: [WireMessage] = []
        while let message = try decoder.next() { messages.append(message) }
        return messages
    }

    /// Moves the loop's clock on, running the timers that fall due.
    func advance(by amount: TimeAmount) {
        loop.advanceTime(by: amount)
    }

    /// The logged messages at `level` or above, in order.
    func logLines(atLeast level: Logger.Level) -> [String] {
        log.entries.filter { $0.level >= level }.map { "\($0.message)" }
    }
}

/// Frames that the tests send.
enum Frames {
    /// The hello of host 42, "app".
    static let hostHello = WireMessage.hello(Hello(role: .host, pid: 42, monotonicNanos: 0, wallNanos: 0, processName: "app"))
    /// The hello of client 7, "nodescope".
    static let clientHello = WireMessage.hello(
        Hello(role: .client, pid: 7, monotonicNanos: 0, wallNanos: 0, processName: "nodescope"))
    /// A snapshot of an empty tree.
    static let emptySnapshot: [WireMessage] = [
        .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), .snapshotEnd(sequence: 0),
    ]

    /// The request `command` with `argument`.
    static func request(_ id: UInt32, _ command: ControlCommand, _ argument: String = "") -> WireMessage {
        .request(ControlRequestFrame(requestID: id, command: command, argument: argument))
    }

    /// Node `id` attached (kind string 1) at `time`, as event `sequence`.
    static func attached(_ id: UInt64, parent: UInt64 = 0, sequence: UInt64, time: UInt64 = 1) -> WireMessage {
        .nodeAttached(
            NodeAttachedFrame(
                sequence: sequence, timeNanos: time, nodeID: id, parentID: parent, kindStringID: 1, nameStringID: 0))
    }
}

/// An outbound handler that holds every write while ``holding``: a peer that reads nothing, so
/// the collector's bytes stay waiting. Held writes fail when the channel closes.
final class UnreadWrites: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Whether writes are held (true) or passed on.
    var holding = true
    private var held: [EventLoopPromise<Void>?] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if holding {
            held.append(promise)
        } else {
            context.write(data, promise: promise)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        for promise in held { promise?.fail(ChannelError.ioOnClosedChannel) }
        held.removeAll()
        context.fireChannelInactive()
    }
}
