/// Why a reading question got no answer: the process or the node it names is not there, the name
/// fits several processes, or the question is not one that can be answered.
public enum QueryRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// No process, or no node, matches.
    case notFound(String)
    /// Several processes match the name; the candidates, to choose from by pid.
    case ambiguous(String, candidates: [ProcessSummary])
    /// The question itself is wrong.
    case badRequest(String)

    /// The sentence for a person.
    public var description: String {
        switch self {
        case .notFound(let reason), .ambiguous(let reason, _), .badRequest(let reason): reason
        }
    }
}

/// The questions that the reading commands and the web view ask, answered from a collector's
/// state. The daemon answers them for its live collector (its control handlers call these), and a
/// recording replayed to an instant answers them with the same code on the replay's collector, so
/// that `tree PID` and `tree --from FILE --at T` cannot disagree in how they answer. A new reading
/// question is written here once.
extension Collector {
    /// The session that `process` (a pid or a name, ``resolve(_:)``) means.
    public func session(named process: String) -> Result<SessionID, QueryRefusal> {
        switch resolve(process) {
        case .success(let session): .success(session)
        case .failure(let error):
            switch error {
            case .notFound: .failure(.notFound("\(error)"))
            case .ambiguous(let candidates): .failure(.ambiguous("\(error)", candidates: candidates))
            }
        }
    }

    /// `tree`: the tree of `process`, its subtree at `rootPath` (node names separated by `/`;
    /// empty for the whole tree), `depth` levels below the roots (nil for all). A root path that
    /// matches no node is not found.
    public func treeAnswer(process: String, rootPath: String, depth: Int?) -> Result<TreeView, QueryRefusal> {
        let path = rootPath.isEmpty ? nil : rootPath.split(separator: "/").map(String.init)
        return session(named: process).flatMap { session in
            guard let view = tree(session, rootPath: path, depth: depth), path == nil || !view.nodes.isEmpty else {
                return .failure(.notFound("no node at \(rootPath)"))
            }
            return .success(view)
        }
    }

    /// `leaks`: the leak records of `process`, or of every process for an empty one, in flag order.
    public func leaksAnswer(process: String) -> Result<[LeakRecord], QueryRefusal> {
        guard !process.isEmpty else { return .success(leaks(nil)) }
        return session(named: process).map { leaks($0) }
    }
}
