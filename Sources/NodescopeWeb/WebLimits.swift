import HummingbirdCore
import NIOCore
import Synchronization

/// The bounds on what a browser, or another local user who can reach the port, can make the web
/// view hold, and through it the collector: connections, event streams (each one a subscription
/// on the collector), questions to the collector at once, and how long a connection may take to
/// send a request. The collector's own limits count the web view as clients, apart from hosts, so
/// no web page ever takes a host's place (docs/PROTOCOL.md, section 10).
package struct WebLimits: Sendable, Equatable {
    /// The most HTTP connections open at once. Beyond it the server stops accepting until one
    /// closes: new connections wait in the kernel's queue (``backlog``) and, past it, are refused
    /// by the kernel. Default 64.
    package var maxConnections: Int
    /// The length of the kernel's queue of connections not yet accepted. Default 256.
    package var backlog: Int
    /// The most `/api/events` streams at once (each holds one connection to the collector for as
    /// long as the page shows a process); one more is answered 503. Default 16.
    package var maxEventStreams: Int
    /// The most other requests asking the collector at once (`/api/processes`, `/api/tree`, …);
    /// one more is answered 503. Default 16.
    package var maxCollectorRequests: Int
    /// How long a connection may wait before sending a whole request: from its opening, or from
    /// the end of its last answer. A connection that sends nothing, or only part of a request
    /// (head or body), for that long is closed. An answer being written (an event stream) does
    /// not count. Default 10 s.
    package var requestDeadline: TimeAmount

    /// Limits with the defaults described on each property.
    package init(
        maxConnections: Int = 64, backlog: Int = 256, maxEventStreams: Int = 16, maxCollectorRequests: Int = 16,
        requestDeadline: TimeAmount = .seconds(10)
    ) {
        self.maxConnections = maxConnections
        self.backlog = backlog
        self.maxEventStreams = maxEventStreams
        self.maxCollectorRequests = maxCollectorRequests
        self.requestDeadline = requestDeadline
    }

    /// The most diagrams (SVG or DOT) the web views of one process draw at once; one more is
    /// answered 503. Drawing is bounded by the renderer's own size bound (100,000 boxes), and
    /// this bounds how many such drawings run side by side.
    package static let maxRenders = 2

    /// The most connections to the collector that one web view holds at once.
    package var maxCollectorConnections: Int { maxEventStreams + maxCollectorRequests }
}

/// A fixed number of places (event streams, or questions to the collector) taken and given back
/// from any thread.
final class SlotPool: Sendable {
    /// How many places there are.
    let capacity: Int
    private let used = Mutex(0)

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// A place, or nil when all are taken. The place is given back when the returned slot is
    /// released (so a response that is dropped unsent, a `HEAD`, gives it back too).
    func take() -> Slot? {
        let taken = used.withLock { count in
            guard count < capacity else { return false }
            count += 1
            return true
        }
        return taken ? Slot(pool: self) : nil
    }

    /// How many places are taken now.
    var inUse: Int { used.withLock { $0 } }

    fileprivate func giveBack() {
        used.withLock { $0 -= 1 }
    }
}

/// One place of a ``SlotPool``, held until this object goes away.
final class Slot: Sendable {
    private let pool: SlotPool

    fileprivate init(pool: SlotPool) {
        self.pool = pool
    }

    deinit { pool.giveBack() }
}

/// When a connection's request deadline runs, as a plain value: it runs while the connection
/// waits for a request or reads one, and stops while a whole request is answered. It starts
/// afresh each time it goes from stopped to running (the connection opened, or an answer ended).
struct RequestDeadline: Equatable {
    /// What to do with the timer after an event.
    enum Action: Equatable {
        /// Start the timer afresh.
        case start
        /// Cancel the timer.
        case cancel
        /// Leave it as it is.
        case none
    }

    private(set) var requestsBegun = 0
    private(set) var requestsRead = 0
    private(set) var answersEnded = 0

    /// Whether the deadline runs now: part of a request is read, or every request is answered.
    var isRunning: Bool { requestsBegun > requestsRead || answersEnded >= requestsBegun }

    /// A request's head arrived.
    mutating func readHead() -> Action { step { $0.requestsBegun += 1 } }
    /// A request's end arrived.
    mutating func readEnd() -> Action { step { $0.requestsRead += 1 } }
    /// An answer's end was written.
    mutating func wroteEnd() -> Action { step { $0.answersEnded += 1 } }

    private mutating func step(_ change: (inout Self) -> Void) -> Action {
        let was = isRunning
        change(&self)
        switch (was, isRunning) {
        case (false, true): return .start
        case (true, false): return .cancel
        default: return .none
        }
    }
}

/// Closes a connection whose request does not arrive whole within the deadline
/// (``WebLimits/requestDeadline``, ``RequestDeadline``): one that sends nothing, half a head, or
/// a body that never ends. Sits after the HTTP decoding, where it sees requests and answers by part.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPConnectionStateHandler.InboundIn
    typealias InboundOut = HTTPConnectionStateHandler.InboundIn
    typealias OutboundIn = HTTPConnectionStateHandler.OutboundIn
    typealias OutboundOut = HTTPConnectionStateHandler.OutboundIn

    private let deadline: TimeAmount
    private var state = RequestDeadline()
    private var timer: Scheduled<Void>?

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: perform(state.readHead(), context)
        case .body: break
        case .end: perform(state.readEnd(), context)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { perform(state.wroteEnd(), context) }
        context.write(data, promise: promise)
    }

    private func perform(_ action: RequestDeadline.Action, _ context: ChannelHandlerContext) {
        switch action {
        case .start: start(context)
        case .cancel:
            timer?.cancel()
            timer = nil
        case .none: break
        }
    }

    private func start(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: deadline) { bound.value.close(promise: nil) }
    }
}

/// Counts the web view's open connections for the server, which stops accepting at the limit.
struct ConnectionCap: AvailableConnectionsDelegate {
    let limit: Int
    private var open = 0

    init(limit: Int) {
        self.limit = limit
    }

    mutating func connectionOpened() { open += 1 }
    mutating func connectionClosed() { open -= 1 }
    func isAcceptingNewConnections() -> Bool { open < limit }
}
