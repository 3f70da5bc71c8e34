import NIOCore
import NodescopeCollector

/// The daemon's one pairing of its collector clock (the event loop's, `CLOCK_MONOTONIC`) with the
/// wall clock, through which it states every wall-clock time: a recording's start, the instant
/// a tree stands at. One offset for all, so that a tree read live and the same tree replayed
/// from its recording carry the same time to the nanosecond. It is read again and replaced only
/// when the two clocks have drifted apart by more than ``tolerance``: the wall clock was set, or
/// the machine slept (the monotonic clock does not count a suspend).
struct WallClockMap {
    /// How far the clocks may drift apart before the pairing is read again.
    static let tolerance: Int64 = 100_000_000

    /// The wall clock less the monotonic clock, both in ns.
    private(set) var offset: Int64

    /// A pairing read now.
    init() {
        offset = Self.measured()
    }

    /// A pairing with a given offset (tests).
    init(offset: Int64) {
        self.offset = offset
    }

    /// Reads the clocks again, and takes the new pairing if they have drifted past ``tolerance``.
    mutating func refresh() {
        let now = Self.measured()
        let drift = now > offset ? now &- offset : offset &- now
        if drift > Self.tolerance || drift < 0 { offset = now }
    }

    /// The wall clock, ns since the Unix epoch, at `monotonic` (a reading of the loop's clock),
    /// never below zero.
    func wallNanos(atMonotonic monotonic: UInt64) -> UInt64 {
        let (sum, overflow) = Int64(clamping: monotonic).addingReportingOverflow(offset)
        if overflow { return offset > 0 ? UInt64(Int64.max) : 0 }
        return sum < 0 ? 0 : UInt64(sum)
    }

    /// The wall clock less the monotonic clock now: the wall clock read between two readings of
    /// the monotonic clock, against their middle.
    static func measured() -> Int64 {
        let before = NIODeadline.now().uptimeNanoseconds
        let wall = SessionRecorder.wallNanos()
        let after = NIODeadline.now().uptimeNanoseconds
        let middle = before / 2 + after / 2 + (before % 2 + after % 2) / 2
        return Int64(clamping: wall) &- Int64(clamping: middle)
    }

    /// `view` stamped with when its tree stands so, ns since the Unix epoch: its session's end
    /// once it ended (its tree changes no more), otherwise `now`, a reading of the loop's clock.
    func stamped(_ view: TreeView, in collector: Collector, now: UInt64) -> TreeView {
        var view = view
        view.wallNanos = wallNanos(atMonotonic: collector.summary(view.session)?.endedAtNanos ?? now)
        return view
    }
}
