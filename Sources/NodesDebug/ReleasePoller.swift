/// Polls the weak references of detached nodes on a background thread, so that the release of
/// an object that cannot report it itself is noticed within one interval.
///
/// The thread starts at the first detach that leaves a weak-watched object behind, and sleeps
/// without a timeout while nothing is pending: an idle host pays nothing for it.
final class ReleasePoller: Sendable {
    /// How often pending weak references are checked.
    static let interval: UInt64 = 20_000_000

    private let signal = ThreadSignal()
    private let started = AtomicFlag()
    private let stopped = AtomicFlag()

    /// Wakes the poller, starting its thread on first use.
    func wake(_ tracker: NodeTracker) {
        if started.setIfClear() {
            let signal = self.signal
            let stopped = self.stopped
            BackgroundThread.start { [weak tracker] in
                while !stopped.isSet {
                    guard let pending = tracker?.pollReleases() else { return }
                    signal.wait(nanoseconds: pending > 0 ? ReleasePoller.interval : nil)
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
