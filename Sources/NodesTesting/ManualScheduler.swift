import Synchronization

/// A ``LeakCheckScheduler`` driven by the test: nothing runs until ``advance(byNanoseconds:)``
/// moves its clock past a deadline.
public final class ManualScheduler: LeakCheckScheduler {
    private struct State {
        var now: UInt64 = 0
        var pending: [(deadline: UInt64, work: @Sendable () -> Void)] = []
    }

    private let state = Mutex(State())

    /// A scheduler at time zero.
    public init() {}

    /// The scheduler's current time, in nanoseconds.
    public var now: UInt64 { state.withLock { $0.now } }

    /// How many scheduled closures have not run yet.
    public var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Keeps `work` until the clock passes `now + nanoseconds`.
    public func schedule(afterNanoseconds nanoseconds: UInt64, _ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.pending.append(($0.now &+ nanoseconds, work)) }
    }

    /// Moves the clock forward and runs, in deadline order, every closure that became due.
    public func advance(byNanoseconds nanoseconds: UInt64) {
        let due: [@Sendable () -> Void] = state.withLock { state in
            state.now &+= nanoseconds
            let now = state.now
            let due = state.pending.enumerated()
                .filter { $0.element.deadline <= now }
                .sorted { ($0.element.deadline, $0.offset) < ($1.element.deadline, $1.offset) }
                .map(\.element.work)
            state.pending.removeAll { $0.deadline <= now }
            return due
        }
        for work in due { work() }
    }
}
