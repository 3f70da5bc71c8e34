import NodescopeCollector
import NodescopeWire

/// A control request as its handler sees it: the frame, the connection that sent it, the
/// collector's state to answer from, and when it was asked.
struct ControlRequest {
    /// The request as it came.
    let frame: ControlRequestFrame
    /// The connection that asked (its subscriptions are the ones a handler may change).
    let connection: ConnectionID
    /// The collector at the moment of the request.
    let collector: Collector
    /// When the request was read, on the loop's clock.
    let now: UInt64
    /// The daemon's pairing of the loop's clock with the wall clock.
    let wallClock: WallClockMap

    /// `view` stamped with when it stands so (``WallClockMap/stamped(_:in:now:)``).
    func stamped(_ view: TreeView) -> TreeView {
        wallClock.stamped(view, in: collector, now: now)
    }

    /// The answer about the process that the argument (a pid or a name) means, or the reason
    /// none could be chosen: not found, or ambiguous with the candidates.
    func aboutNamedProcess(_ answer: (SessionID) -> ControlAnswer) -> ControlAnswer {
        switch collector.session(named: frame.argument) {
        case .success(let session): answer(session)
        case .failure(let refusal): .refused(refusal)
        }
    }
}
