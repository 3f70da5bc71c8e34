import NodescopeCollector
import NodescopeWire

/// `unsubscribe`: ends one of this connection's subscriptions, named by its id in decimal. An
/// id the connection does not have is not found; an argument that is not a number is a bad
/// request.
enum UnsubscribeHandler: ControlCommandHandler {
    static func answer(_ request: ControlRequest, subscriptions: inout SubscriptionTable) -> ControlAnswer {
        guard let id = UInt32(request.frame.argument) else {
            return .failure(.badRequest, "unsubscribe takes a subscription id in decimal, not \"\(request.frame.argument)\"")
        }
        guard subscriptions.unsubscribe(request.connection, subscriptionID: id) else {
            return .failure(.notFound, "no subscription \(id) on this connection")
        }
        return .ok([String: String]())
    }
}
