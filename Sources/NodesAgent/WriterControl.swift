import NodesTracking
import Synchronization

/// What the agent's API and its exit hook ask of the writer thread (stop, exit), and what the
/// writer reports back (the exit's progress, how far the stream is written, the counters).
final class WriterControl: Sendable {
    /// Set by ``NodescopeAgent/stop()``.
    let stop = AtomicFlag()
    /// Set by the exit hook.
    let exit = AtomicFlag()
    /// Signalled when the writer has finished (after an exit or a stop).
    let exitDone = ThreadSignal()
    /// The host time by which the writer expects an exit to be over, 0 until it knows.
    let exitDeadline = Atomic<UInt64>(0)
    /// The sequence of the last event (or snapshot) fully written on this connection.
    let sentThrough = Atomic<UInt64>(0)
    /// The counters so far.
    let statistics = Mutex(NodescopeAgent.Statistics(connections: 0, eventsSent: 0, eventsDropped: 0, snapshotsSent: 0))
}
