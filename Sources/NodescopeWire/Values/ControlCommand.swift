/// What a client asks of the collector in a ``ControlRequestFrame``.
public enum ControlCommand: UInt8, Sendable, CaseIterable {
    /// List the connected host processes.
    case listProcesses = 1
    /// The node tree of one host, once.
    case tree = 2
    /// The leak report of one host.
    case leaks = 3
    /// Start receiving the changes of one host as event frames.
    case subscribe = 4
    /// Stop a subscription.
    case unsubscribe = 5
    /// Ask a host, through the collector, what holds the detached nodes at a path now
    /// (version 2; the answer comes when the host's analysis is over).
    case explain = 6
    /// Record a process's stream into a file (the request's `rootPath` field names it): from
    /// now, beginning with a snapshot, or from its hello when it has not connected yet. The
    /// recording's end comes as one event on the request's id.
    case record = 7
}
