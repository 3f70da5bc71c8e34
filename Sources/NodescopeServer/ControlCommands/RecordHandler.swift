import NodescopeCollector
import NodescopeWire

/// `record`: the hub starts recording the process into the file that the request's `rootPath`
/// names: a connected process from now, or, when no process has that pid or name yet, the
/// next one to connect with it, from its hello. An ended process cannot be recorded.
enum RecordHandler: ControlCommandHandler {
    static func answer(_ request: ControlRequest, subscriptions: inout SubscriptionTable) -> ControlAnswer {
        let frame = request.frame
        guard frame.rootPath.hasPrefix("/") else {
            return .failure(.badRequest, "record needs an absolute file path")
        }
        switch request.collector.resolve(frame.argument) {
        case .success(let session):
            guard let summary = request.collector.summary(session), summary.isConnected else {
                return .failure(.notFound, "\(frame.argument) has ended; only a running process can be recorded")
            }
            return ControlAnswer(
                status: .ok, body: [], record: RecordOrder(session: session, process: frame.argument, path: frame.rootPath))
        case .failure(.ambiguous(let candidates)):
            return .failure(.ambiguous, "\(ResolveError.ambiguous(candidates))", candidates: candidates)
        case .failure(.notFound):
            guard !frame.argument.isEmpty else { return .failure(.badRequest, "name the process to record") }
            return ControlAnswer(status: .ok, body: [], record: RecordOrder(session: nil, process: frame.argument, path: frame.rootPath))
        }
    }
}
