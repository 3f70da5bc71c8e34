import Synchronization

/// The bounded hand-off between the node lifecycle (any thread, under the tracker's lock) and
/// the agent's writer thread. A full queue drops and counts; it never blocks and never grows.
final class EventQueue: Sendable {
    private struct State {
        var events: [DebugInformation] = []
        var dropped: UInt64 = 0
    }

    /// The most events held at once.
    let capacity: Int
    private let state: Mutex<State>

    init(capacity: Int) {
        self.capacity = capacity
        var initial = State()
        initial.events.reserveCapacity(capacity)
        state = Mutex(initial)
    }

    /// Adds an event, or counts it as dropped when the queue is full. Returns the number of
    /// events now queued.
    @inline(__always)
    func enqueue(_ event: DebugInformation) -> Int {
        state.withLock { state in
            guard state.events.count < capacity else {
                state.dropped &+= 1
                return state.events.count
            }
            state.events.append(event)
            return state.events.count
        }
    }

    /// Moves every queued event into `batch` (which must be empty; its storage becomes the
    /// queue's, so that draining allocates nothing) and returns how many were dropped since the
    /// last take.
    func take(into batch: inout [DebugInformation]) -> UInt64 {
        var spare: [DebugInformation] = []
        swap(&spare, &batch)
        let (taken, dropped): ([DebugInformation], UInt64) = state.withLock { state in
            swap(&spare, &state.events)
            let dropped = state.dropped
            state.dropped = 0
            return (spare, dropped)
        }
        batch = taken
        return dropped
    }

    /// Forgets everything queued (on disconnect).
    func clear() {
        state.withLock { state in
            state.events.removeAll(keepingCapacity: true)
            state.dropped = 0
        }
    }

    /// Whether anything is queued.
    var isEmpty: Bool { state.withLock { $0.events.isEmpty && $0.dropped == 0 } }
}
