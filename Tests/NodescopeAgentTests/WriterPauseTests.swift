import NodesDebug
import Testing

@testable import NodesAgent
@testable import NodesTracking

/// The writer's wait between rounds, decided without a thread: a backlog yields, changes that
/// came in gather for a short pause that never passes the link's deadline, nothing to do sleeps
/// until there is work, and a link that waits for its deadline alone gets a timed sleep.
@Suite("How the agent's writer waits")
struct WriterPauseTests {
    @Test func aBacklogYieldsTheCoreAndGoesOnWhateverElseHolds() {
        for wakeOnEvent in [true, false] {
            for changesWaiting in [true, false] {
                #expect(
                    WriterPause.choose(
                        until: 5_000_000, wakeOnEvent: wakeOnEvent, now: 0, backlog: true, changesWaiting: changesWaiting)
                        == .yieldThenRound)
            }
        }
    }

    @Test func changesThatCameInGatherForAShortPauseNeverPastTheDeadline() {
        let far = WriterPause.choose(until: 10_000_000, wakeOnEvent: true, now: 0, backlog: false, changesWaiting: true)
        #expect(far == .gather(nanoseconds: WriterPause.gatherNanoseconds))
        let near = WriterPause.choose(until: 1_100_000, wakeOnEvent: true, now: 1_000_000, backlog: false, changesWaiting: true)
        #expect(near == .gather(nanoseconds: 100_000))
        let past = WriterPause.choose(until: 1_000, wakeOnEvent: true, now: 2_000, backlog: false, changesWaiting: true)
        #expect(past == .gather(nanoseconds: 0))
    }

    @Test func nothingToDoSleepsUntilThereIsWorkOrTheDeadline() {
        #expect(
            WriterPause.choose(until: 3_000_000, wakeOnEvent: true, now: 1_000_000, backlog: false, changesWaiting: false)
                == .untilWork(nanoseconds: 2_000_000))
        #expect(
            WriterPause.choose(until: 1_000_000, wakeOnEvent: true, now: 3_000_000, backlog: false, changesWaiting: false)
                == .untilWork(nanoseconds: 0))
    }

    @Test func aLinkThatWaitsForItsDeadlineAloneGetsATimedSleep() {
        #expect(
            WriterPause.choose(until: 7_000, wakeOnEvent: false, now: 2_000, backlog: false, changesWaiting: true)
                == .timed(nanoseconds: 5_000))
        #expect(
            WriterPause.choose(until: 2_000, wakeOnEvent: false, now: 7_000, backlog: false, changesWaiting: false)
                == .timed(nanoseconds: 0))
    }
}
