import HummingbirdCore
import NIOCore
import Synchronization

// What an HTTP server of the tools (the web view, the metrics endpoint) keeps a client from
// making it hold: connections, places for work that asks the collector, and how long a
// connection may take to send a request.

/// A fixed number of places (event streams, or questions to the collector) taken and given back
/// from any thread.
package final class SlotPool: Sendable {
    /// How many places there are.
    package let capacity: Int
    private let used = Mutex(0)

    package init(capacity: Int) {
        self.capacity = capacity
    }

    /// A place, or nil when all are taken. The place is given back when the returned slot is
    /// released (so a response that is dropped unsent, a `HEAD`, gives it back too).
    package func take() -> Slot? {
        let taken = used.withLock { count in
            guard count < capacity else { return false }
            count += 1
            return true
        }
        return taken ? Slot(pool: self) : nil
    }

    /// How many places are taken now.
    package var inUse: Int { used.withLock { $0 } }

    fileprivate func giveBack() {
        used.withLock { $0 -= 1 }
    }
}

/// One place of a ``SlotPool``, held until this object goes away.
package final class Slot: Sendable {
    private let pool: SlotPool

    fileprivate init(pool: SlotPool) {
        self.pool = pool
    }

    deinit { pool.giveBack() }
}

/// When a connection's request deadline runs, as a plain value: it runs while the connection
/// waits for a request or reads one, and stops while a whole request is answered. It starts
/// afresh each time it goes from stopped to running (the connection opened, or an answer ended).
package struct RequestDeadline: Equatable {
    /// What to do with the timer after an event.
    package enum Action: Equatable {
        /// Start the timer afresh.
        case start
        /// Cancel the timer.
        case cancel
        /// Leave it as it is.
        case none
    }

    package init() {}

    private(set) var requestsBegun = 0
    private(set) var requestsRead = 0
    private(set) var answersEnded = 0

    /// Whether the deadline runs now: part of a request is read, or every request is answered.
    package var isRunning: Bool { requestsBegun > requestsRead || answersEnded >= requestsBegun }

    /// A request's head arrived.
    package mutating func readHead() -> Action { step { $0.requestsBegun += 1 } }
    /// A request's end arrived.
    package mutating func readEnd() -> Action { step { $0.requestsRead += 1 } }
    /// An answer's end was written.
    package mutating func wroteEnd() -> Action { step { $0.answersEnded += 1 } }

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
/// (``RequestDeadline``): one that sends nothing, half a head, or
/// a body that never ends. Sits after the HTTP decoding, where it sees requests and answers by part.
package final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPConnectionStateHandler.InboundIn
    package typealias InboundOut = HTTPConnectionStateHandler.InboundIn
    package typealias OutboundIn = HTTPConnectionStateHandler.OutboundIn
    package typealias OutboundOut = HTTPConnectionStateHandler.OutboundIn

    private let deadline: TimeAmount
    private var state = RequestDeadline()
    private var timer: Scheduled<Void>?

    package init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    package func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    package func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: perform(state.readHead(), context)
        case .body: break
        case .end: perform(state.readEnd(), context)
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
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

/// Counts a server's open connections for the server, which stops accepting at the limit.
package struct ConnectionCap: AvailableConnectionsDelegate {
    package let limit: Int
    private var open = 0

    package init(limit: Int) {
        self.limit = limit
    }

    package mutating func connectionOpened() { open += 1 }
    package mutating func connectionClosed() { open -= 1 }
    package func isAcceptingNewConnections() -> Bool { open < limit }
}
