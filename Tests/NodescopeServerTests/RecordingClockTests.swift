import NIOCore
import Testing

@testable import NodescopeServer

/// A recording's header pairs the loop's clock at its start with the wall clock at that same
/// instant, however long ago the loop read its clock: `--at` maps wall-clock times through the
/// pair, so an error in it moves every replayed instant.
@Suite("Recording clocks")
struct RecordingClockTests {
    @Test func theWallClockAtAnEarlierReadingIsTheWallClockThen() {
        let second: UInt64 = 1_000_000_000
        let monotonic = NIODeadline.now().uptimeNanoseconds
        let earlier = monotonic - 2 * second
        let wall = SessionRecorder.wallNanos()
        let paired = SessionRecorder.wallNanos(atMonotonic: earlier)
        // Two seconds back, give or take the readings' own microseconds (a second of slack for
        // a loaded machine that stalls between them: the old pairing was two seconds off).
        #expect(paired < wall - 2 * second + second)
        #expect(paired > wall - 2 * second - second)
        // A reading of now pairs with the wall clock now; one from the future cannot trap.
        let now = SessionRecorder.wallNanos(atMonotonic: NIODeadline.now().uptimeNanoseconds)
        #expect(now >= wall && now < wall + second)
        #expect(SessionRecorder.wallNanos(atMonotonic: .max) > wall)
    }
}
