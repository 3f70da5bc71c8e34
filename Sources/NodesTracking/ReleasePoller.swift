/// Polls the weak references of detached nodes on a background thread, so that the release of
/// an object that cannot report it itself is noticed within one interval.
///
/// The thread starts at the first detach that leaves a weak-watched object behind, and sleeps
/// without a timeout while nothing is pending: an idle host pays nothing for it. While pending
/// objects stay alive (leaks) with nothing changing for 3 s, it backs off from every 20 ms to
/// every second, and speeds up again at the next detach.
final class ReleasePoller: Sendable {
    /// How often pending weak references are checked at first.
    static let interval: UInt64 = 20_000_000
    /// The longest interval, reached while nothing changes.
    static let longestInterval: UInt64 = 1_000_000_000
    /// How long after the last change polling stays at full speed (longer than usual graces).
    static let fullSpeedPeriod: UInt64 = 3_000_000_000

    private let signal = ThreadSignal()
    private let started = AtomicFlag()
    private let stopped = AtomicFlag()

    /// Wakes the poller, starting its thread on first use.
    func wake(_ tracker: NodeTracker) {
        if started.setIfClear() {
            let signal = self.signal
            let stopped = self.stopped
            BackgroundThread.start { [weak tracker] in
                var interval = ReleasePoller.interval
                var lastPending = -1
                var lastChange = MonotonicClock.now()
                while !stopped.isSet {
                    guard let pending = tracker?.pollReleases() else { return }
                    // The poll held each watched object for a moment: leave no copy of it on
                    // this thread's stack for the retainer analysis to take for a holder.
                    ThreadStack.scrub()
                    let now = MonotonicClock.now()
                    if pending != lastPending { lastChange = now }
                    lastPending = pending
                    // Full speed while a recent detach may still be released within its grace
                    // (a late notice would read as a leak); slower once only old leaks remain.
                    interval =
                        now &- lastChange < ReleasePoller.fullSpeedPeriod
                        ? ReleasePoller.interval : min(interval * 2, ReleasePoller.longestInterval)
                    if signal.wait(nanoseconds: pending > 0 ? interval : nil) {
                        lastChange = MonotonicClock.now()
                        interval = ReleasePoller.interval
                    }
                }
            }
        }
        signal.signal()
    }

    /// Ends the thread; called when the tracker goes away.
    func stop() {
        stopped.set()
        signal.signal()
    }
}
