import NodesDebug
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Set by SIGTERM or SIGINT while a sample holds.
private let stopRequested = Atomic<Bool>(false)

/// Keeps a sample running after its script, so that a user can `nodescope attach` to it.
public enum Hold {
    /// Makes sure the collector has everything so far, says `holding for N s` (unless quiet),
    /// then sleeps until `seconds` have passed or SIGTERM (or SIGINT) arrives.
    ///
    /// SIGTERM is unblocked first: a parent (a test runner) may have left it blocked in the
    /// signal mask that this process inherited.
    public static func run(seconds: Double, output: SampleOutput) {
        stopOnSignals()
        CollectorLink.flush()
        output.say("holding for \(formatted(seconds)) s (SIGTERM or Ctrl-C ends it)")
        // Options allow at most a year (``SampleOptions/longestHold``); clamp anyway.
        let end = MonotonicClock.now() &+ UInt64(min(max(seconds, 0), SampleOptions.longestHold) * 1e9)
        while !stopRequested.load(ordering: .relaxed), MonotonicClock.now() < end {
            usleep(20_000)
        }
        output.say(stopRequested.load(ordering: .relaxed) ? "stopping (signal)" : "stopping (time is up)")
    }

    private static func stopOnSignals() {
        signal(SIGTERM) { _ in stopRequested.store(true, ordering: .relaxed) }
        signal(SIGINT) { _ in stopRequested.store(true, ordering: .relaxed) }
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        sigprocmask(SIG_UNBLOCK, &set, nil)
    }

    private static func formatted(_ seconds: Double) -> String {
        // At most a year (``SampleOptions/longestHold``): whole numbers print without ".0".
        seconds == seconds.rounded() && seconds < 1e15 ? String(Int(seconds)) : String(seconds)
    }
}
