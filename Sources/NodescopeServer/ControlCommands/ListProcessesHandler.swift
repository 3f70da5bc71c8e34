import NodescopeCollector
import NodescopeWire

/// `listProcesses`: every process the collector knows, connected ones first.
enum ListProcessesHandler: ControlCommandHandler {
    static func answer(_ request: ControlRequest, subscriptions: inout SubscriptionTable) -> ControlAnswer {
        .ok(request.collector.processes())
    }
}
