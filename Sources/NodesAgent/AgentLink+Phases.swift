import NodesTracking
import NodescopeWire

/// Where the link and its stream stand.
extension AgentLink {
    /// Where the link stands.
    enum Phase: Equatable {
        /// No connection.
        case disconnected
        /// A connect to `socket` was asked for.
        case connecting(SocketFile)
        /// Connected to `socket`: the hello is being written, then its answer awaited until
        /// `answerBy` (nil until the hello is out).
        case handshaking(SocketFile, answerBy: UInt64?)
        /// Accepted: the stream goes on.
        case streaming
        /// A normal exit, held (when the collector asked) while a recent detach awaits
        /// release, until `until` at the latest.
        case holding(until: UInt64)
        /// A normal exit: writing everything up to sequence `target`, until `deadline`.
        case draining(target: UInt64, deadline: UInt64)
        /// The connection is being closed; then `next`.
        case closing(then: AfterClose)
        /// Nothing more to do.
        case done
    }

    /// What follows a close.
    enum AfterClose: Equatable {
        /// Look for the collector again.
        case reconnect
        /// End the writer (an exit or a stop).
        case finish
    }

    /// Where a round of the stream stands: the action whose report is awaited, or what comes
    /// after a heartbeat.
    enum Step: Equatable {
        /// No round under way.
        case between
        /// Writing what the socket did not take last round, before encoding anything new.
        case flushingLeftover
        /// Awaiting the horizon.
        case polling
        /// Awaiting the queue, with the horizon to vouch for (if polled).
        case taking(horizon: UInt64?)
        /// Awaiting the snapshot, with the horizon to vouch for right after it.
        case snapshotting(horizon: UInt64?)
        /// Awaiting the events; `vouch` is the horizon to vouch for after them.
        case sendingEvents(vouch: UInt64?)
        /// A heartbeat was asked for; the events come next.
        case eventsNext
        /// A heartbeat was asked for; the write comes next.
        case writeNext
        /// Awaiting the write.
        case writing
        /// Awaiting the read.
        case reading
        /// Awaiting what the tracker still awaits (an exit hold).
        case inspecting
        /// Awaiting the explanation of leaks (a retainer analysis).
        case explaining
        /// Awaiting the answer to the collector's request to explain nodes.
        case answering(ExplainFrame)
    }

    /// One accepted connection's stream, as the rules see it.
    struct Stream: Equatable {
        /// The collector's grace.
        var graceNanos: UInt64 = 1_000_000_000
        /// Whether the collector asked to hold a normal exit.
        var holdsExit = false
        /// The protocol version of the connection: frames of a later version are not sent.
        var protocolVersion: UInt16 = 1
        /// Whether a snapshot is due (at the start of every connection).
        var needsSnapshot = true
        /// The sequence of the last event (or snapshot) encoded.
        var lastSequence: UInt64 = 0
        /// The host time up to which the collector was told the stream is complete.
        var vouchedUntil: UInt64 = 0
        /// When the last heartbeat went out (the start of its round).
        var lastHeartbeat: UInt64 = 0
        /// The end of the latest grace that the collector has to judge.
        var gracesEndBy: UInt64 = 0
        /// Whether encoded bytes wait to be written.
        var unsentBytes = false
        /// When the current round began.
        var roundStart: UInt64 = 0
        /// Where the current round stands.
        var step = Step.between
        /// The detach time of the earliest detached node with an object alive whose holders
        /// have not been explained, as last read from the tracker.
        var oldestUnexplained: UInt64?
        /// Whether the exit's drain explained the nodes still awaiting release (once per exit).
        var settledAtExit = false
        /// The settlement's line between leaks and nodes within their grace: nodes detached by
        /// then were explained as leaks, the later ones as settled. After it, the stream vouches
        /// no further than this plus the grace, so that the collector judges leaked exactly the
        /// nodes explained as leaks: a later vouch would flag a node that the settlement
        /// explained stacks first (a stale stack word then named its path, and its fingerprint).
        var settledGraceRanOutBy: UInt64?
        /// The collector's requests to explain nodes, not answered yet, oldest first (at most
        /// ``AgentLink/maxQueuedRequests``: the collector keeps one open per host).
        var requests: [ExplainFrame] = []

        /// Whether a grace is pending that the collector has not been vouched past.
        var gracePending: Bool { vouchedUntil < gracesEndBy }

        /// Whether a node's grace has run out with an object alive and its holders unexplained,
        /// on a connection that carries explanations (version 2), and its detach is on the
        /// stream: a `retainers` frame names only a node that the stream has shown detached (after
        /// the snapshot, and not while a stalled socket holds the deltas back).
        func explanationDue(now: UInt64) -> Bool {
            guard protocolVersion >= 2, !needsSnapshot, let oldest = oldestUnexplained else { return false }
            return oldest <= explainedDetachesBy(now: now)
        }

        /// The latest detach whose node may be explained at `now`: its grace has run out, and
        /// the stream has been vouched for past it (so its detach was encoded before).
        func explainedDetachesBy(now: UInt64) -> UInt64 {
            min(now >= graceNanos ? now - graceNanos : 0, vouchedUntil)
        }

        /// Whether, at the end of an exit's drain, nodes still await release whose holders are
        /// unexplained and whose detach the stream has shown (version 2): the exit settlement.
        var settlementDue: Bool {
            guard protocolVersion >= 2, !needsSnapshot, !settledAtExit, let oldest = oldestUnexplained else {
                return false
            }
            return oldest <= vouchedUntil
        }

        /// Whether a heartbeat is due at `now`.
        func heartbeatDue(now: UInt64) -> Bool {
            gracePending && now &- lastHeartbeat >= AgentLink.heartbeatInterval
        }

        /// Whether a heartbeat is due at `now` and has been put off for as long as it may be
        /// while the writer is behind (see ``AgentLink/roundUnits``).
        func heartbeatOverdue(now: UInt64) -> Bool {
            gracePending && now &- lastHeartbeat >= AgentLink.heartbeatInterval &+ AgentLink.heartbeatPostponement
        }
    }
}
