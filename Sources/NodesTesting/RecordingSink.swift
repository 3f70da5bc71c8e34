import Synchronization

/// A ``DebugSink`` that keeps every event in memory, for tests and in-process tools.
public final class RecordingSink: DebugSink {
    private let recorded = Mutex<[DebugInformation]>([])

    /// An empty sink.
    public init() {}

    /// Appends the event.
    public func receive(_ event: DebugInformation) {
        recorded.withLock { $0.append(event) }
    }

    /// Every event so far, in sequence order.
    public var events: [DebugInformation] { recorded.withLock { $0 } }

    /// Forgets the events so far.
    public func removeAll() {
        recorded.withLock { $0.removeAll() }
    }

    /// The events' one-line descriptions with node ids replaced by node names, which makes
    /// lifecycle orders readable in assertions: `attached LoggedInFlow under RootFlow`,
    /// `LoggedInFlow active`, `LoggedInFlow released context LoggedInContext` …
    public var lines: [String] {
        var names: [NodeID: String] = [:]
        return events.map { event in
            switch event.change {
            case .attached(let parent, _, let name):
                names[event.node] = name
                return "attached \(name) under \(parent.flatMap { names[$0] } ?? "root")"
            case .objectAdded(_, let role, let typeName):
                return "\(names[event.node] ?? "\(event.node)") watches \(role) \(typeName)"
            case .stateChanged(let state):
                return "\(names[event.node] ?? "\(event.node)") \(state)"
            case .detached:
                return "detached \(names[event.node] ?? "\(event.node)")"
            case .released(_, let role, let typeName):
                return "\(names[event.node] ?? "\(event.node)") released \(role) \(typeName)"
            }
        }
    }
}
