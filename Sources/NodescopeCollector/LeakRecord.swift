/// One node that was flagged by the leak check, kept in the collector's leak list.
///
/// There is one record per node: a leaked node that is released later keeps its record, which
/// then reads ``Verdict/lateRelease`` with ``releasedAtNanos`` set.
public struct LeakRecord: Sendable, Equatable, Codable {
    /// The judgement on a flagged node.
    public enum Verdict: String, Sendable, Codable {
        /// The grace ran out with objects alive, and they still are (or were, when the process ended).
        case leaked
        /// Leaked, then every object was released: a warning, with the delay.
        case lateRelease
        /// The process ended before the grace ran out, with objects alive: it cannot be known
        /// whether they would have been released. Fails a gate only when asked to be strict.
        case unverified
    }

    /// The session of the host process.
    public var session: SessionID
    /// The host's process id.
    public var pid: UInt32
    /// The host's process name.
    public var processName: String
    /// The node's id in its process.
    public var nodeID: UInt64
    /// The node's kind.
    public var kind: String
    /// The display names (``NodeInfo/displayName``) from the root down to the node, at flag time.
    public var path: [String]
    /// The node's objects that were alive when it was flagged (for a late release: before it was
    /// released).
    public var aliveObjects: [ObjectInfo]
    /// When the node was detached (host time mapped to the collector's clock), nanoseconds.
    public var detachedAtNanos: UInt64
    /// When the node was flagged, nanoseconds of the collector's clock: the moment its grace ran
    /// out (detach + grace), or the end of its session for an unverified node or one judged at a
    /// held exit.
    public var flaggedAtNanos: UInt64
    /// For a late release: when its last object was released (never before ``flaggedAtNanos``;
    /// the snapshot's arrival when a resync found it gone).
    public var releasedAtNanos: UInt64?
    /// The judgement.
    public var verdict: Verdict
    /// A stable hash for grouping and baselines; see ``LeakFingerprint``.
    public var fingerprint: String

    /// Creates a record.
    public init(
        session: SessionID, pid: UInt32, processName: String, nodeID: UInt64, kind: String,
        path: [String], aliveObjects: [ObjectInfo], detachedAtNanos: UInt64, flaggedAtNanos: UInt64,
        releasedAtNanos: UInt64?, verdict: Verdict, fingerprint: String
    ) {
        self.session = session
        self.pid = pid
        self.processName = processName
        self.nodeID = nodeID
        self.kind = kind
        self.path = path
        self.aliveObjects = aliveObjects
        self.detachedAtNanos = detachedAtNanos
        self.flaggedAtNanos = flaggedAtNanos
        self.releasedAtNanos = releasedAtNanos
        self.verdict = verdict
        self.fingerprint = fingerprint
    }

    /// For a late release: how long after its detach the node was released, in nanoseconds.
    public var releaseDelayNanos: UInt64? {
        releasedAtNanos.map { $0 >= detachedAtNanos ? $0 - detachedAtNanos : 0 }
    }
}
