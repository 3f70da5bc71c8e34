import CNodesMemory

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the host's monotonic and wall clocks in nanoseconds.
public enum MonotonicClock {
    /// Nanoseconds of `CLOCK_MONOTONIC`: the timestamps of every event.
    @inline(__always)
    public static func now() -> UInt64 {
        read(CLOCK_MONOTONIC)
    }

    /// `CLOCK_MONOTONIC_COARSE`: the time of the last scheduler tick, never later than ``now()``
    /// and a few milliseconds earlier at most, for a fraction of its cost. For stamps that no
    /// verdict depends on (state changes): a stamp that is early only ever holds a watermark
    /// back.
    @inline(__always)
    public static func coarseNow() -> UInt64 {
        #if os(Linux)
        read(CLOCK_MONOTONIC_COARSE)
        #else
        read(CLOCK_MONOTONIC)
        #endif
    }

    /// Nanoseconds since the Unix epoch, for the handshake.
    public static func wallNow() -> UInt64 {
        read(CLOCK_REALTIME)
    }

    /// In C (``cnm_clock_nanoseconds``): a `timespec` filled here would give every recording
    /// function that inlines this a stack protector (callgrind: about 8 instructions a change).
    @inline(__always)
    private static func read(_ clock: clockid_t) -> UInt64 {
        cnm_clock_nanoseconds(clock)
    }
}
