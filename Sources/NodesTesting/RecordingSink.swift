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
            case let .attached(parent, _, name):
                names[event.node] = name
                return "attached \(name) under \(parent.flatMap { names[$0] } ?? "root")"
            case let .objectAdded(_, role, typeName):
                return "\(names[event.node] ?? "\(event.node)") watches \(role) \(typeName)"
            case let .stateChanged(state):
                return "\(names[event.node] ?? "\(event.node)") \(state)"
            case .detached:
                return "detached \(names[event.node] ?? "\(event.node)")"
            case let .released(_, role, typeName):
                return "\(names[event.node] ?? "\(event.node)") released \(role) \(typeName)"
            }
        }
    }
}
