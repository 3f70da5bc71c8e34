import NodescopeCollector
import NodescopeControl
import NodescopeWire

/// The collector's answer to one control request before it is framed: a status, a JSON body
/// (docs/PROTOCOL.md, "Control API"), and the events that follow it on the subscription the
/// request opened.
struct ControlAnswer: Equatable {
    /// The response status of every part.
    var status: ResponseStatus
    /// The whole body; the hub splits it into parts.
    var body: [UInt8]
    /// Events sent right after the answer with the request's id as subscription id (a
    /// subscription to a process that has already ended gets its `sessionEnded` at once).
    var events: [TreeChange] = []

    /// A successful answer with `value` as its body.
    static func ok(_ value: some Encodable, events: [TreeChange] = []) -> ControlAnswer {
        ControlAnswer(status: .ok, body: ControlBody.encode(value), events: events)
    }

    /// A failed answer: `{"error": …, "candidates": …}`.
    static func failure(_ status: ResponseStatus, _ error: String, candidates: [ProcessSummary]? = nil) -> ControlAnswer {
        ControlAnswer(status: status, body: ControlBody.encode(ControlBody.Failure(error: error, candidates: candidates)))
    }

}
