import NodescopeCollector
import NodescopeWire

/// `explain`: what holds the detached nodes at the request's path, now. The host answers
/// (its own retainer analysis, protocol version 2), so this handler only chooses the nodes; the
/// hub sends the question and answers the client when the host is done.
///
/// The path must name at least one detached node that is not a placeholder; the first
/// ``ExplainFrame/maxNodes`` of them, in tree order, are asked about.
enum ExplainHandler: ControlCommandHandler {
    static func answer(_ request: ControlRequest, subscriptions: inout SubscriptionTable) -> ControlAnswer {
        let frame = request.frame
        guard !frame.rootPath.isEmpty else {
            return .failure(.badRequest, "explain needs the path of a node, such as AppFlow/LoggedInFlow/ProfileFlow")
        }
        let path = frame.rootPath.split(separator: "/").map(String.init)
        return request.aboutNamedProcess { session in
            let nodes = request.collector.nodes(session, atPath: path)
            guard !nodes.isEmpty else { return .failure(.notFound, "no node at \(frame.rootPath)") }
            let detached = nodes.filter { !$0.status.isAttached && !$0.isPlaceholder }
            guard !detached.isEmpty else {
                return .failure(
                    .badRequest,
                    "\(frame.rootPath) is attached: its tree holds it, there is nothing to explain until it is detached")
            }
            return .ask(HostQuestion(session: session, nodeIDs: detached.prefix(ExplainFrame.maxNodes).map(\.id)))
        }
    }
}
