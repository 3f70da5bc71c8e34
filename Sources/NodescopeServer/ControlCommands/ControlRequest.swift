import NodescopeCollector
import NodescopeWire

/// A control request as its handler sees it: the frame, the connection that sent it, and the
/// collector's state to answer from.
struct ControlRequest {
    /// The request as it came.
    let frame: ControlRequestFrame
    /// The connection that asked (its subscriptions are the ones a handler may change).
    let connection: ConnectionID
    /// The collector at the moment of the request.
    let collector: Collector

    /// The answer about the process that the argument (a pid or a name) means, or the reason
    /// none could be chosen: not found, or ambiguous with the candidates.
    func aboutNamedProcess(_ answer: (SessionID) -> ControlAnswer) -> ControlAnswer {
        switch collector.session(named: frame.argument) {
        case .success(let session): answer(session)
        case .failure(let refusal): .refused(refusal)
        }
    }
}
