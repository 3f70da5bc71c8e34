import NodescopeCollector
import NodescopeWire

/// `subscribe`: the whole tree of one process now; its changes follow as events with the
/// request's id. One subscription per process and connection. A process that has already
/// ended gets its `sessionEnded` right after the tree, and no subscription stays open.
enum SubscribeHandler: ControlCommandHandler {
    static func answer(_ request: ControlRequest, subscriptions: inout SubscriptionTable) -> ControlAnswer {
        request.aboutNamedProcess { session in
            let view = request.collector.tree(session).map(request.stamped)
            // An ended session has no subscribers left: its end is all there is to follow.
            if let summary = request.collector.summary(session), summary.endedAtNanos != nil {
                return .ok(view, events: [.sessionEnded(normally: summary.endedNormally ?? false)])
            }
            guard subscriptions.subscribe(request.connection, to: session, subscriptionID: request.frame.requestID) else {
                return .failure(.badRequest, "this connection already follows that process; one subscription each")
            }
            return .ok(view)
        }
    }
}
