/// Which kind of peer sent a ``Hello``.
public enum PeerRole: UInt8, Sendable, CaseIterable {
    /// A process whose node tree is observed; it streams snapshots and deltas.
    case host = 1
    /// A tool (the CLI) that queries the collector over the control frames.
    case client = 2
}
