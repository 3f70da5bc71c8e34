import NodescopeCollector
import NodescopeWire

/// `tree`: one process's tree once, with the request's depth and root path applied
/// (``Collector/treeAnswer(process:rootPath:depth:)``, which a recording answers with too),
/// stamped with when it stands so (``ControlRequest/stamped(_:)``).
enum TreeHandler: ControlCommandHandler {
    static func answer(_ request: ControlRequest, subscriptions: inout SubscriptionTable) -> ControlAnswer {
        let frame = request.frame
        // On the wire the depth counts the root's level (1 = the root only, 0 = all); the
        // collector counts the levels below the roots.
        let depth = frame.depth == 0 ? nil : Int(frame.depth) - 1
        return .answer(
            request.collector.treeAnswer(process: frame.argument, rootPath: frame.rootPath, depth: depth).map(request.stamped))
    }
}
