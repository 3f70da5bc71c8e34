import NIOCore
import NodescopeCollector

/// How the daemon maps its collector clock (the event loop's, `CLOCK_MONOTONIC`) to the wall
/// clock, for every wall-clock time it states: a recording's start, the instant a tree stands at.
///
/// A pairing of the two clocks is read once and kept, so that a tree read live and the same tree
/// replayed from its recording (whose header holds the pairing of its start) carry the same time
/// to the nanosecond. It is read again only when the clocks have drifted apart by more than
/// ``tolerance``: the wall clock was set, or the machine slept (the monotonic clock does not
/// count a suspend). The new pairing holds from then on; instants before it keep the pairing
/// that was in force at them, so an ended process's tree keeps its time after a sleep.
struct WallClockMap {
    /// How far the clocks may drift apart before the pairing is read again.
    static let tolerance: Int64 = 100_000_000
    /// A reading whose two monotonic readings lie further apart than this (the thread was put
    /// off the processor between them) is not taken for a new pairing.
    static let widestReading: UInt64 = 1_000_000
    /// The pairings kept; instants before the oldest are mapped through it.
    static let maxPairings = 64

    /// A pairing: from the monotonic instant `from` on, the wall clock is the monotonic clock
    /// plus `offset`.
    struct Pairing: Equatable {
        var from: UInt64
        var offset: Int64
    }

    /// The pairings in force, oldest first.
    private(set) var pairings: [Pairing]

    /// The pairing in force now: the wall clock less the monotonic clock, in ns.
    var offset: Int64 { pairings[pairings.count - 1].offset }

    /// A pairing read now.
    init() {
        pairings = [Pairing(from: 0, offset: Self.measured().offset)]
    }

    /// A pairing with a given offset (tests).
    init(offset: Int64) {
        pairings = [Pairing(from: 0, offset: offset)]
    }

    /// Reads the clocks again, and takes a new pairing from now on if they have drifted past
    /// ``tolerance``.
    mutating func refresh() {
        let reading = Self.measured()
        guard reading.width <= Self.widestReading else { return }
        let drift = reading.offset > offset ? reading.offset &- offset : offset &- reading.offset
        guard drift > Self.tolerance || drift < 0 else { return }
        take(Pairing(from: reading.middle, offset: reading.offset))
    }

    /// Holds `pairing` from its instant on, keeping the latest ``maxPairings``.
    mutating func take(_ pairing: Pairing) {
        pairings.append(pairing)
        if pairings.count > Self.maxPairings { pairings.removeFirst(pairings.count - Self.maxPairings) }
    }

    /// The wall clock, ns since the Unix epoch, at `monotonic` (a reading of the loop's clock),
    /// through the pairing in force then; never below zero.
    func wallNanos(atMonotonic monotonic: UInt64) -> UInt64 {
        let pairing = pairings.last { $0.from <= monotonic } ?? pairings[0]
        let (sum, overflow) = Int64(clamping: monotonic).addingReportingOverflow(pairing.offset)
        if overflow { return pairing.offset > 0 ? UInt64(Int64.max) : 0 }
        return sum < 0 ? 0 : UInt64(sum)
    }

    /// The wall clock less the monotonic clock now: the wall clock read between two readings of
    /// the monotonic clock, against their middle; the narrowest of three tries.
    static func measured() -> (offset: Int64, middle: UInt64, width: UInt64) {
        var best = reading()
        for _ in 0..<2 {
            let next = reading()
            if next.width < best.width { best = next }
        }
        return best
    }

    /// One reading: the wall clock between two readings of the monotonic clock.
    private static func reading() -> (offset: Int64, middle: UInt64, width: UInt64) {
        let before = NIODeadline.now().uptimeNanoseconds
        let wall = SessionRecorder.wallNanos()
        let after = NIODeadline.now().uptimeNanoseconds
        let middle = before / 2 + after / 2 + (before % 2 + after % 2) / 2
        return (Int64(clamping: wall) &- Int64(clamping: middle), middle, after >= before ? after - before : 0)
    }

    /// `view` stamped with when its tree stands so, ns since the Unix epoch: its session's end
    /// once it ended (its tree changes no more), otherwise `now`, a reading of the loop's clock.
    func stamped(_ view: TreeView, in collector: Collector, now: UInt64) -> TreeView {
        var view = view
        view.wallNanos = wallNanos(atMonotonic: collector.summary(view.session)?.endedAtNanos ?? now)
        return view
    }
}
