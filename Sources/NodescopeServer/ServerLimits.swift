/// The bounds that keep one daemon's memory and descriptors in check whatever its peers do.
package struct ServerLimits: Sendable, Equatable {
    /// The most hosts served at once; a host's hello beyond it is refused with code 4 (busy).
    /// Clients are counted apart (``maxClientConnections``), so that no number of clients (the
    /// CLI, `attach`, web views) ever takes a host's place. Default 1 024.
    package var maxConnections: Int
    /// The most clients served at once, counted apart from hosts; a client's hello beyond it is
    /// refused with code 4 (busy). Default 256.
    package var maxClientConnections: Int
    /// How many answer bytes may wait for one client to read them. A client that sends a
    /// request while more than this is waiting is disconnected. Default 64 MiB.
    package var maxPendingClientBytes: Int
    /// How many bytes may wait for a subscriber to read them when the next change of its
    /// process is due; beyond it the subscriber is disconnected. Default 8 MiB.
    package var maxPendingSubscriberBytes: Int
    /// How long a peer may take to say hello, in nanoseconds. Default 5 s.
    package var helloDeadlineNanos: Int64
    /// How long one frame may stay incomplete once its first byte has arrived, in nanoseconds.
    /// Default 10 s.
    package var frameDeadlineNanos: Int64
    /// How long a host may take to answer an `explain` request (its retainer analysis is
    /// bounded, by default to at most 1 s), in nanoseconds; then the client is told it did not
    /// answer in time. Default 30 s.
    package var explainDeadlineNanos: Int64
    /// How many frames may wait for a recording's writer; beyond it frames are lost and the
    /// recording gets a gap and a fresh snapshot. Default 262 144.
    package var maxQueuedRecordingFrames: Int

    /// Limits with the defaults described on each property.
    package init(
        maxConnections: Int = 1_024, maxPendingClientBytes: Int = 64 << 20, maxPendingSubscriberBytes: Int = 8 << 20,
        helloDeadlineNanos: Int64 = 5_000_000_000, frameDeadlineNanos: Int64 = 10_000_000_000,
        explainDeadlineNanos: Int64 = 30_000_000_000, maxQueuedRecordingFrames: Int = 262_144,
        maxClientConnections: Int = 256
    ) {
        self.maxClientConnections = maxClientConnections
        self.explainDeadlineNanos = explainDeadlineNanos
        self.maxQueuedRecordingFrames = maxQueuedRecordingFrames
        self.maxConnections = maxConnections
        self.maxPendingClientBytes = maxPendingClientBytes
        self.maxPendingSubscriberBytes = maxPendingSubscriberBytes
        self.helloDeadlineNanos = helloDeadlineNanos
        self.frameDeadlineNanos = frameDeadlineNanos
    }
}
