import NodescopeCollector
import NodescopeWire

/// `leaks`: the leak records of one process, or of every process for an empty argument, in
/// flag order.
enum LeaksHandler: ControlCommandHandler {
    static func answer(_ request: ControlRequest, subscriptions: inout SubscriptionTable) -> ControlAnswer {
        guard !request.frame.argument.isEmpty else { return .ok(request.collector.leaks(nil)) }
        return request.aboutNamedProcess { .ok(request.collector.leaks($0)) }
    }
}
