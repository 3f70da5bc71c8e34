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
    /// placeholders): ``NodeCounts/attached``.
    public var liveNodes: Int
    /// Nodes leaked, except those only globals hold: ``NodeCounts/leaked``, the number `leaks`
    /// reports as leaked (unverified nodes, late releases and nodes retained by a global are
    /// counted apart, in ``counts``).
    public var leaks: Int
    /// Where the process's nodes stand: attached, awaiting release, leaked, retained by a
    /// global, unverified (of which cut by the exit flush), released late.
    public var counts: NodeCounts
    /// How the session ended; nil while the host is connected.
    public var end: SessionEnd?
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
        awaitingRelease: Int = 0, graceNanos: UInt64 = 0, counts: NodeCounts? = nil, end: SessionEnd? = nil
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
        self.counts = counts ?? NodeCounts(attached: liveNodes, awaitingRelease: awaitingRelease, leaked: leaks)
        self.end = end ?? endedNormally.map { $0 ? .normalExit : .abnormal }
    }

    private enum CodingKeys: String, CodingKey {
        case session, pid, processName, connectedAtNanos, endedAtNanos, endedNormally, liveNodes, leaks, counts, end
        case eventsIngested, droppedReported, startedAtNanos, awaitingRelease, graceNanos
    }

    /// Decodes a summary; one written before ``counts`` and ``end`` existed reads them from its
    /// other fields.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let endedNormally = try container.decodeIfPresent(Bool.self, forKey: .endedNormally)
        let liveNodes = try container.decode(Int.self, forKey: .liveNodes)
        let leaks = try container.decode(Int.self, forKey: .leaks)
        let awaiting = try container.decodeIfPresent(Int.self, forKey: .awaitingRelease) ?? 0
        self.init(
            session: try container.decode(SessionID.self, forKey: .session), pid: try container.decode(UInt32.self, forKey: .pid),
            processName: try container.decode(String.self, forKey: .processName),
            connectedAtNanos: try container.decode(UInt64.self, forKey: .connectedAtNanos),
            endedAtNanos: try container.decodeIfPresent(UInt64.self, forKey: .endedAtNanos), endedNormally: endedNormally,
            liveNodes: liveNodes, leaks: leaks, eventsIngested: try container.decode(UInt64.self, forKey: .eventsIngested),
            droppedReported: try container.decode(UInt64.self, forKey: .droppedReported),
            startedAtNanos: try container.decodeIfPresent(UInt64.self, forKey: .startedAtNanos), awaitingRelease: awaiting,
            graceNanos: try container.decodeIfPresent(UInt64.self, forKey: .graceNanos) ?? 0,
            counts: try container.decodeIfPresent(NodeCounts.self, forKey: .counts),
            end: try container.decodeIfPresent(SessionEnd.self, forKey: .end))
    }

    /// Whether the host is still connected.
    public var isConnected: Bool { endedAtNanos == nil }
}
