import NIOCore
import Testing

@testable import NodescopeServer

/// A recording's header pairs the loop's clock at its start with the wall clock at that same
/// instant, however long ago the loop read its clock: `--at` maps wall-clock times through the
/// pair, so an error in it moves every replayed instant. The daemon states every wall-clock time
/// through one pairing (``WallClockMap``), so a tree read live and from its recording agree.
@Suite("Recording clocks")
struct RecordingClockTests {
    @Test func theWallClockAtAnEarlierReadingIsTheWallClockThen() {
        let second: UInt64 = 1_000_000_000
        let monotonic = NIODeadline.now().uptimeNanoseconds
        let earlier = monotonic - 2 * second
        let wall = SessionRecorder.wallNanos()
        let map = WallClockMap()
        let paired = map.wallNanos(atMonotonic: earlier)
        // Two seconds back, give or take the readings' own microseconds (a second of slack for
        // a loaded machine that stalls between them: the old pairing was two seconds off).
        #expect(paired < wall - 2 * second + second)
        #expect(paired > wall - 2 * second - second)
        // A reading of now pairs with the wall clock now; one from the future cannot trap.
        let now = map.wallNanos(atMonotonic: NIODeadline.now().uptimeNanoseconds)
        #expect(now + second / 10 >= wall && now < wall + second)
        #expect(map.wallNanos(atMonotonic: .max) > wall)
        #expect(WallClockMap(offset: -5).wallNanos(atMonotonic: 3) == 0)
    }

    @Test func thePairingStaysPutUntilTheClocksDriftApart() {
        var map = WallClockMap()
        let first = map.offset
        // Read again at once: the same pairing, so two answers a moment apart agree exactly.
        map.refresh()
        #expect(map.pairings.count == 1 && map.offset == first)
        // A pairing a minute off (the wall clock set, or the machine slept) is read again from
        // now on; an instant before keeps the pairing of its time (an ended process's tree
        // keeps its stamp after a sleep).
        let earlier = NIODeadline.now().uptimeNanoseconds
        let stale = first - 60_000_000_000
        var moved = WallClockMap(offset: stale)
        moved.refresh()
        #expect(moved.pairings.count == 2)
        #expect(abs(moved.offset - first) < WallClockMap.tolerance)
        #expect(moved.wallNanos(atMonotonic: earlier) == UInt64(Int64(earlier) + stale))
        let later = NIODeadline.now().uptimeNanoseconds
        #expect(moved.wallNanos(atMonotonic: later) == UInt64(Int64(later) + moved.offset))
        // Bounded: a clock set again and again keeps the latest pairings.
        var many = WallClockMap(offset: stale)
        for step in 1...100 { many.take(.init(from: later + UInt64(step), offset: stale + Int64(step) * 1_000_000_000)) }
        #expect(many.pairings.count == WallClockMap.maxPairings)
        #expect(many.offset == stale + 100 * 1_000_000_000)
        // Before the oldest kept: through the oldest.
        #expect(many.wallNanos(atMonotonic: 0) == UInt64(stale + 37 * 1_000_000_000))
    }
}
