import Synchronization

/// Runs closures after a delay on one background thread, in deadline order.
///
/// The runtime's `LeakDetector` uses it to look at weakly watched objects once their grace has
/// run out. The thread starts with the first scheduled closure and sleeps while nothing is due.
public final class GraceTimer: Sendable {
    /// The process-wide timer.
    public static let shared = GraceTimer()

    private struct Entry {
        var deadline: UInt64
        var order: UInt64
        var work: @Sendable () -> Void
    }

    private struct Queue {
        var entries: [Entry] = []
        var counter: UInt64 = 0
    }

    private let queue = Mutex(Queue())
    private let signal = ThreadSignal()
    private let started = AtomicFlag()

    /// Creates a timer; its thread starts on first use.
    public init() {}

    /// Runs `work` on the timer's thread once `nanoseconds` have passed.
    public func schedule(afterNanoseconds nanoseconds: UInt64, _ work: @escaping @Sendable () -> Void) {
        let deadline = MonotonicClock.now() &+ nanoseconds
        let isEarliest = queue.withLock { queue in
            queue.counter &+= 1
            let entry = Entry(deadline: deadline, order: queue.counter, work: work)
            // Keep entries sorted by deadline, then by scheduling order.
            var low = 0
            var high = queue.entries.count
            while low < high {
                let mid = (low + high) / 2
                if queue.entries[mid].deadline <= deadline { low = mid + 1 } else { high = mid }
            }
            queue.entries.insert(entry, at: low)
            return low == 0
        }
        if started.setIfClear() {
            BackgroundThread.start { [self] in run() }
        }
        if isEarliest { signal.signal() }
    }

    private func run() {
        while true {
            let now = MonotonicClock.now()
            let (due, nextDeadline): ([Entry], UInt64?) = queue.withLock { queue in
                let split = queue.entries.firstIndex { $0.deadline > now } ?? queue.entries.count
                let due = Array(queue.entries[..<split])
                queue.entries.removeFirst(split)
                return (due, queue.entries.first?.deadline)
            }
            for entry in due { entry.work() }
            // A leak check held the watched objects for a moment: leave no copy of them on this
            // thread's stack for the retainer analysis to take for a holder.
            if !due.isEmpty { ThreadStack.scrub() }
            signal.wait(nanoseconds: nextDeadline.map { $0 > now ? $0 - now : 0 })
        }
    }
}
