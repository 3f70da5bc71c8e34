import NodescopeCollector
import NodescopeWire

/// `tree`: one process's tree once, with the request's depth and root path applied. A root
/// path that matches no node is not found.
enum TreeHandler: ControlCommandHandler {
    static func answer(_ request: ControlRequest, subscriptions: inout SubscriptionTable) -> ControlAnswer {
        let frame = request.frame
        let path = frame.rootPath.isEmpty ? nil : frame.rootPath.split(separator: "/").map(String.init)
        // On the wire the depth counts the root's level (1 = the root only, 0 = all); the
        // collector counts the levels below the roots.
        let depth = frame.depth == 0 ? nil : Int(frame.depth) - 1
        return request.aboutNamedProcess { session in
            guard let view = request.collector.tree(session, rootPath: path, depth: depth), path == nil || !view.nodes.isEmpty
            else {
                return .failure(.notFound, "no node at \(frame.rootPath)")
            }
            return .ok(view)
        }
    }
}
