import NodesDebug
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Set by SIGTERM or SIGINT while a sample holds.
private let stopRequested = Atomic<Bool>(false)
/// The write end of the pipe that the signal handler wakes the holding thread through (-1
/// before `Hold.run`); a `write` is safe in a signal handler.
private let wakeDescriptor = Atomic<Int32>(-1)

/// Keeps a sample running after its script, so that a user can `nodescope attach` to it.
public enum Hold {
    /// Makes sure the collector has everything so far, says `holding for N s` (unless quiet),
    /// then sleeps until `seconds` have passed or SIGTERM (or SIGINT) arrives.
    ///
    /// It sleeps without waking in between (a pipe that the signal handler writes to, and
    /// `poll` with the time left), so that an idle sample costs no CPU of its own: `tools/bench
    /// idle` measures what the agent costs a host that does nothing.
    ///
    /// SIGTERM is unblocked first: a parent (a test runner) may have left it blocked in the
    /// signal mask that this process inherited.
    public static func run(seconds: Double, output: SampleOutput) {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
            wakeDescriptor.store(ends[1], ordering: .releasing)
        }
        stopOnSignals()
        CollectorLink.flush()
        output.say("holding for \(formatted(seconds)) s (SIGTERM or Ctrl-C ends it)")
        // Options allow at most a year (``SampleOptions/longestHold``); clamp anyway.
        let end = MonotonicClock.now() &+ UInt64(min(max(seconds, 0), SampleOptions.longestHold) * 1e9)
        while !stopRequested.load(ordering: .relaxed) {
            let now = MonotonicClock.now()
            guard now < end else { break }
            // Whole milliseconds, rounded up, in slices poll's timeout can hold; without a pipe,
            // short slices, so that a signal is still seen.
            let left = Int32(clamping: (end &- now &+ 999_999) / 1_000_000)
            if ends[0] >= 0 {
                var entry = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, min(left, 3_600_000))
            } else {
                usleep(UInt32(min(left, 20)) * 1_000)
            }
        }
        wakeDescriptor.store(-1, ordering: .releasing)
        for end in ends where end >= 0 { close(end) }
        output.say(stopRequested.load(ordering: .relaxed) ? "stopping (signal)" : "stopping (time is up)")
    }

    private static func stopOnSignals() {
        signal(SIGTERM) { _ in Hold.signalled() }
        signal(SIGINT) { _ in Hold.signalled() }
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        sigprocmask(SIG_UNBLOCK, &set, nil)
    }

    /// The handler of SIGTERM and SIGINT: only async-signal-safe calls.
    private static func signalled() {
        stopRequested.store(true, ordering: .relaxed)
        let descriptor = wakeDescriptor.load(ordering: .acquiring)
        if descriptor >= 0 {
            var byte: UInt8 = 1
            _ = write(descriptor, &byte, 1)
        }
    }

    private static func formatted(_ seconds: Double) -> String {
        // At most a year (``SampleOptions/longestHold``): whole numbers print without ".0".
        seconds == seconds.rounded() && seconds < 1e15 ? String(Int(seconds)) : String(seconds)
    }
}
