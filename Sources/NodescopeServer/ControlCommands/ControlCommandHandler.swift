import NodescopeCollector
import NodescopeWire

/// Answers one control command (docs/PROTOCOL.md, section 8), as a pure function of the
/// request, the collector's state and the subscription table. There is one handler per
/// ``ControlCommand``, in a file of its own; ``ControlCommand/handler`` picks it, so a new
/// command does not compile until it has one.
protocol ControlCommandHandler {
    /// The answer to `request`. Only subscribe and unsubscribe change `subscriptions`; none
    /// changes the collector.
    static func answer(_ request: ControlRequest, subscriptions: inout SubscriptionTable) -> ControlAnswer
}

extension ControlCommand {
    /// The handler that answers this command.
    var handler: any ControlCommandHandler.Type {
        switch self {
        case .listProcesses: ListProcessesHandler.self
        case .tree: TreeHandler.self
        case .leaks: LeaksHandler.self
        case .subscribe: SubscribeHandler.self
        case .unsubscribe: UnsubscribeHandler.self
        case .explain: ExplainHandler.self
        case .record: RecordHandler.self
        }
    }
}
