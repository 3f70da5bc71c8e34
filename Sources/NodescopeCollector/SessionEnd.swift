import NodescopeWire

/// How a host session ended, as far as its verdicts are concerned.
public enum SessionEnd: String, Sendable, Codable, CaseIterable {
    /// A goodbye `normalExit`: the host exited normally and flushed everything it had queued.
    case normalExit
    /// A goodbye `flushIncomplete`: the host exited normally, but its exit flush ran out of time
    /// before everything it had queued was written. The nodes whose fate was in the cut events
    /// are unverified; raising `NODESCOPE_EXIT_FLUSH`, or running under `nodescope check` (which
    /// holds the exit), avoids it.
    case exitFlushCut
    /// A goodbye `agentDisabled`: the host switched its agent off and went on untracked.
    case agentDisabled
    /// No goodbye: the process crashed or was killed, the connection was cut, or the collector
    /// closed it for a protocol violation.
    case abnormal

    /// The end of a session that read `goodbye` (nil: none) before its stream ended.
    public init(goodbye: GoodbyeReason?) {
        switch goodbye {
        case .normalExit?: self = .normalExit
        case .flushIncomplete?: self = .exitFlushCut
        case .agentDisabled?: self = .agentDisabled
        case nil: self = .abnormal
        }
    }
}
