/// Why a host ends its stream with a goodbye frame.
public enum GoodbyeReason: UInt8, Sendable, CaseIterable {
    /// The host process is exiting normally, and its queue was flushed first.
    case normalExit = 1
    /// The host's agent was switched off at run time.
    case agentDisabled = 2
    /// The host is exiting normally, but its exit flush ran out of time before everything it
    /// had queued was written: what was cut cannot be judged (its verdicts are unverified).
    case flushIncomplete = 3
}
