import NodescopeCollector
import NodescopeWire

/// `leaks`: the leak records of one process, or of every process for an empty argument, in
/// flag order (``Collector/leaksAnswer(process:)``, which a recording answers with too).
enum LeaksHandler: ControlCommandHandler {
    static func answer(_ request: ControlRequest, subscriptions: inout SubscriptionTable) -> ControlAnswer {
        .answer(request.collector.leaksAnswer(process: request.frame.argument))
    }
}
