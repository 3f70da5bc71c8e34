/// Why ``Collector/resolve(_:)`` found no single session for a pid or a process name.
public enum ResolveError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No session matches the query.
    case notFound(String)
    /// Several live sessions match; the candidates, to choose from by pid.
    case ambiguous([ProcessSummary])

    /// A sentence for a person, naming the candidates when there are several.
    public var description: String {
        switch self {
        case .notFound(let query):
            return "no host process matches \"\(query)\"; `nodescope ps` lists the connected ones"
        case .ambiguous(let candidates):
            let list = candidates.map { "\($0.pid) (\($0.processName))" }.joined(separator: ", ")
            return "\(candidates.count) host processes match: \(list); give a pid instead"
        }
    }
}
