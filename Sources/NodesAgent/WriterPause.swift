import NodesTracking

/// How the writer waits when the link says `sleep`: a pure decision, so that the writer thread
/// only performs it (``AgentWriter``) and the choice is tested on its own.
///
/// - A backlog (the last round stopped at ``AgentLink/roundUnits`` with changes left): the next
///   round comes at once, after yielding the core to any thread that waits for it. A round that
///   runs long on the app's core holds the app's thread up for milliseconds.
/// - Changes came in during the round: a short pause (``gatherNanoseconds``, never past the
///   link's deadline), so that the next round takes many at once. Taking each change as it comes
///   pulls every entry of the log across the cores one at a time, which costs the app's thread
///   more than the change itself; the log holds thousands of changes more than an app can make in
///   the pause.
/// - Nothing to do: sleep until there is work (a change, an event, the collector's request or its
///   end on the socket) or the deadline, not on a short timer.
/// - The link waits for its deadline only (`wakeOnEvent` false): a timed sleep.
enum WriterPause: Equatable {
    /// Yield the core, then run the next round.
    case yieldThenRound
    /// Sleep this long, then run the next round (a pause to gather changes).
    case gather(nanoseconds: UInt64)
    /// Sleep until woken, or this long at most (0: do not sleep).
    case untilWork(nanoseconds: UInt64)
    /// Sleep this long at most, woken only by the feed (a stop, an exit).
    case timed(nanoseconds: UInt64)

    /// The pause before a round when changes are already waiting.
    static let gatherNanoseconds: UInt64 = 250_000

    /// The pause for a `sleep(until:wakeOnEvent:)` at `now`, given whether the last round left a
    /// backlog and whether changes wait in the log.
    static func choose(until: UInt64, wakeOnEvent: Bool, now: UInt64, backlog: Bool, changesWaiting: Bool) -> WriterPause {
        if backlog { return .yieldThenRound }
        let left = until > now ? until &- now : 0
        guard wakeOnEvent else { return .timed(nanoseconds: left) }
        if changesWaiting { return .gather(nanoseconds: min(gatherNanoseconds, left)) }
        return .untilWork(nanoseconds: left)
    }
}
