/// How a ``Collector`` judges leaks and how much it keeps.
///
/// The settings are fixed when the collector is created; the grace and the exit hold are also
/// what the server announces to hosts in its `helloAccepted`.
public struct CollectorSettings: Sendable, Equatable {
    /// How long after its detach a node's objects may stay alive before the node is flagged as
    /// leaked, in nanoseconds. Default 1 s.
    public var graceNanos: UInt64
    /// Whether hosts are asked to hold a normal exit until their pending graces have run out
    /// (`nodescope check` sets it). When a session then ends normally, nodes still awaiting
    /// release are judged leaked instead of unverified. Default false.
    public var holdExit: Bool
    /// How long an ended session (its tree and its leaks) is kept, in nanoseconds. Default 10 minutes.
    public var endedSessionRetentionNanos: UInt64
    /// How many ended sessions are kept at most; the oldest beyond this are dropped. Default 64.
    public var maxEndedSessions: Int
    /// The most nodes one session's tree may hold (placeholders included); an attach beyond it is
    /// a ``SessionError/Code/tooManyNodes`` violation. Default 2 000 000.
    public var maxNodesPerSession: Int
    /// The most interned strings one session may define (``SessionError/Code/tooManyStrings``).
    /// Default 1 000 000.
    public var maxStringsPerSession: Int
    /// The most UTF-8 bytes that one session's interned strings may hold in total
    /// (``SessionError/Code/tooManyStrings``). Default 256 MiB.
    public var maxStringBytesPerSession: Int
    /// The most UTF-8 bytes that the interned strings of every session kept (live and ended)
    /// may hold together. A string that would pass it first drops ended sessions, the earliest
    /// ended first; when the live sessions alone leave no room, it is a
    /// ``SessionError/Code/tooManyStrings`` violation of the session that sent it. An ended
    /// session keeps only the strings its tree and origins name. Default 512 MiB.
    public var maxStringBytesTotal: Int
    /// The most objects that the nodes of one session may hold in total
    /// (``SessionError/Code/tooManyObjects``). Default 16 000 000.
    public var maxObjectsPerSession: Int
    /// The most leak records one session keeps. Beyond it, nodes are still flagged in the tree and
    /// counted in ``ProcessSummary/leaks``, but no further record is listed. Default 100 000.
    public var maxLeakRecordsPerSession: Int
    /// The most retainer paths (protocol version 2: why an object of a detached node is alive)
    /// one session may send over its life; later ones are ignored. Default 10 000.
    public var maxRetainerPathsPerSession: Int
    /// The most bytes (about: names, references and notes) that one session's retainer paths
    /// may take over its life; later paths are ignored. Default 16 MiB.
    public var maxRetainerBytesPerSession: Int

    /// Creates settings; every value has the default described on its property.
    public init(
        graceNanos: UInt64 = 1_000_000_000,
        holdExit: Bool = false,
        endedSessionRetentionNanos: UInt64 = 600_000_000_000,
        maxEndedSessions: Int = 64,
        maxNodesPerSession: Int = 2_000_000,
        maxStringsPerSession: Int = 1_000_000,
        maxStringBytesPerSession: Int = 256 << 20,
        maxStringBytesTotal: Int = 512 << 20,
        maxObjectsPerSession: Int = 16_000_000,
        maxLeakRecordsPerSession: Int = 100_000,
        maxRetainerPathsPerSession: Int = 10_000,
        maxRetainerBytesPerSession: Int = 16 << 20
    ) {
        self.graceNanos = graceNanos
        self.holdExit = holdExit
        self.endedSessionRetentionNanos = endedSessionRetentionNanos
        self.maxEndedSessions = maxEndedSessions
        self.maxNodesPerSession = maxNodesPerSession
        self.maxStringsPerSession = maxStringsPerSession
        self.maxStringBytesPerSession = maxStringBytesPerSession
        self.maxStringBytesTotal = maxStringBytesTotal
        self.maxObjectsPerSession = maxObjectsPerSession
        self.maxLeakRecordsPerSession = maxLeakRecordsPerSession
        self.maxRetainerPathsPerSession = maxRetainerPathsPerSession
        self.maxRetainerBytesPerSession = maxRetainerBytesPerSession
    }
}
