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
        #expect(map.offset == first)
        // A pairing a minute off (the wall clock set, or the machine slept) is read again.
        var stale = WallClockMap(offset: first - 60_000_000_000)
        stale.refresh()
        #expect(abs(stale.offset - first) < WallClockMap.tolerance)
    }
}
