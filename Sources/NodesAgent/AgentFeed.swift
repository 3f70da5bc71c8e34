import NodesTracking
import Synchronization

/// The agent's sink: what the app's threads touch. It owns the queue, the writer's wake-up and
/// the two flags the hot path reads, and refers to nothing else, so that the agent, the tracker
/// and the writer thread may each hold it without a cycle or an unowned reference.
///
/// It is registered with its own tracker only: the queue behind it takes one producer, which
/// that tracker's lock provides. (Were it a public sink, a second tracker could feed it
/// concurrently.)
final class AgentFeed: LogConsumer {
    /// The bounded hand-off to the writer thread.
    let queue: EventQueue
    /// Wakes the writer thread (work while it idles, a stop, an exit, a flush wait).
    let wake = WakeSignal()
    /// Whether a collector accepted the connection: events are queued only then.
    let connected = Atomic<Bool>(false)

    /// A feed whose queue holds `capacity` events (rounded up to a power of two).
    init(capacity: Int) {
        queue = EventQueue(capacity: capacity)
    }

    /// Queues one event for the writer. Called under the tracker's lock by whoever applies its
    /// changes (mostly the writer itself); never blocks. (The tracker wakes an idle writer.)
    @inline(__always)
    func receive(_ event: DebugInformation) {
        guard connected.load(ordering: .relaxed) else { return }
        let count = queue.enqueue(event)
        // A writer busy elsewhere (a slow socket) is woken when the queue is half full.
        if count == queue.capacity / 2 { wake.signal() }
    }

    /// Whether a collector accepted the connection (see ``connected``).
    @inline(__always)
    var wantsEvents: Bool { connected.load(ordering: .relaxed) }

    /// The same for an event made for this feed alone: moved into the queue, with no copy.
    @inline(__always)
    func receiveMade(_ event: consuming DebugInformation) {
        guard connected.load(ordering: .relaxed) else { return }
        let count = queue.enqueue(event)
        if count == queue.capacity / 2 { wake.signal() }
    }

    /// Moves the queued events into `batch`; returns how many the queue dropped.
    func takeQueued(into batch: inout [DebugInformation]) -> UInt64 {
        queue.take(into: &batch)
    }

    /// Moves the queued events out to `encoding` while none was dropped, else into `batch`;
    /// returns how many the queue dropped.
    func takeQueued(into batch: inout [DebugInformation], encoding: any AppliedChangeEncoder) -> UInt64 {
        queue.take(into: &batch, encoding: encoding)
    }

    /// Wakes the writer thread.
    func wakeUp() {
        wake.signal()
    }
}
