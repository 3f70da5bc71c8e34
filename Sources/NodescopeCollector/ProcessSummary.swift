/// One host session at a glance, as listed by `nodescope ps`.
public struct ProcessSummary: Sendable, Equatable, Codable {
    /// The session.
    public var session: SessionID
    /// The host's process id.
    public var pid: UInt32
    /// The host's process name.
    public var processName: String
    /// When the host connected, nanoseconds of the collector's clock.
    public var connectedAtNanos: UInt64
    /// When the session ended, or nil while the host is connected.
    public var endedAtNanos: UInt64?
    /// Whether the session ended normally (a `goodbye(normalExit)` before the end of the stream);
    /// nil while the host is connected.
    public var endedNormally: Bool?
    /// Nodes in the tree that are attached (not detached, leaked, late released, unverified or
    /// placeholders).
    public var liveNodes: Int
    /// Nodes flagged leaked or unverified (late releases are not counted).
    public var leaks: Int
    /// Lifecycle event frames ingested (attached, object added, state changed, detached, object
    /// released), those replayed in snapshots included.
    public var eventsIngested: UInt64
    /// The sum of the counts of the host's `dropped` frames.
    public var droppedReported: UInt64
    /// When the host process started, nanoseconds of the collector's clock, when the collector
    /// could tell (from the kernel, for a peer in its pid namespace); nil otherwise.
    public var startedAtNanos: UInt64?
    /// Detached nodes with an object still alive whose grace has not run out (by the host's
    /// vouched time): each will be released, leaked or, if the session ends first, unverified.
    public var awaitingRelease: Int
    /// The grace the collector gives a detached node, in nanoseconds.
    public var graceNanos: UInt64

    /// Creates a summary.
    public init(
        session: SessionID, pid: UInt32, processName: String, connectedAtNanos: UInt64,
        endedAtNanos: UInt64?, endedNormally: Bool?, liveNodes: Int, leaks: Int,
        eventsIngested: UInt64, droppedReported: UInt64, startedAtNanos: UInt64? = nil,
        awaitingRelease: Int = 0, graceNanos: UInt64 = 0
    ) {
        self.session = session
        self.pid = pid
        self.processName = processName
        self.connectedAtNanos = connectedAtNanos
        self.endedAtNanos = endedAtNanos
        self.endedNormally = endedNormally
        self.liveNodes = liveNodes
        self.leaks = leaks
        self.eventsIngested = eventsIngested
        self.droppedReported = droppedReported
        self.startedAtNanos = startedAtNanos
        self.awaitingRelease = awaitingRelease
        self.graceNanos = graceNanos
    }

    /// Whether the host is still connected.
    public var isConnected: Bool { endedAtNanos == nil }
}
