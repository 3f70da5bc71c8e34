import NodescopeCollector
import NodescopeControlCodec
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
    /// A question for a host: the hub sends it and answers the request when the host has
    /// answered (``ExplainHandler``). The status and body are then unused.
    var askHost: HostQuestion?
    /// A recording to start: the hub starts it and answers the request.
    var record: RecordOrder?

    /// A successful answer with `value` as its body.
    static func ok(_ value: some Encodable, events: [TreeChange] = []) -> ControlAnswer {
        ControlAnswer(status: .ok, body: ControlBody.encode(value), events: events)
    }

    /// A failed answer: `{"error": …, "candidates": …}`.
    static func failure(_ status: ResponseStatus, _ error: String, candidates: [ProcessSummary]? = nil) -> ControlAnswer {
        ControlAnswer(status: status, body: ControlBody.encode(ControlBody.Failure(error: error, candidates: candidates)))
    }

    /// The answer to a question the collector's queries refused (``QueryRefusal``).
    static func refused(_ refusal: QueryRefusal) -> ControlAnswer {
        switch refusal {
        case .notFound(let reason): .failure(.notFound, reason)
        case .ambiguous(let reason, let candidates): .failure(.ambiguous, reason, candidates: candidates)
        case .badRequest(let reason): .failure(.badRequest, reason)
        }
    }

    /// The answer `result` gives: its value as the body, or its refusal.
    static func answer(_ result: Result<some Encodable, QueryRefusal>) -> ControlAnswer {
        switch result {
        case .success(let value): .ok(value)
        case .failure(let refusal): .refused(refusal)
        }
    }

    /// An answer that the host gives: the hub asks `question` and answers later.
    static func ask(_ question: HostQuestion) -> ControlAnswer {
        ControlAnswer(status: .ok, body: [], askHost: question)
    }
}

/// A recording a client asked for: of a session now, or of the next process of a name.
struct RecordOrder: Equatable {
    /// The session to record from now, or nil to wait for `process` to connect.
    var session: SessionID?
    /// The pid or name that the client gave.
    var process: String
    /// The file to write.
    var path: String
}

/// What the collector asks a host for a client: what holds some of its detached nodes now.
struct HostQuestion: Equatable {
    /// The host's session.
    var session: SessionID
    /// The detached nodes to explain (at most ``ExplainFrame/maxNodes``).
    var nodeIDs: [UInt64]
}
