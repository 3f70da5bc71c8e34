import NodescopeCollector
import NodescopeControlCodec

extension ControlClient.Refusal {
    /// The refusal that a collector sends for `refusal`: what a client gets from the daemon, and
    /// what a recording's answer (which the same queries refuse) throws in its place.
    package init(_ refusal: QueryRefusal) {
        switch refusal {
        case .notFound(let reason): self.init(status: .notFound, failure: .init(error: reason))
        case .ambiguous(let reason, let candidates):
            self.init(status: .ambiguous, failure: .init(error: reason, candidates: candidates))
        case .badRequest(let reason): self.init(status: .badRequest, failure: .init(error: reason))
        }
    }
}
