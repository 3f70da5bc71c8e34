import Testing

@testable import NodescopeServer

/// The hub's one timer as a decision: armed at the collector's next deadline, moved only when
/// that moves.
@Suite("RetentionTimer: one timer at the collector's next deadline")
struct RetentionTimerTests {
    @Test func itArmsAtTheDeadlineAndMovesOnlyWhenTheDeadlineMoves() {
        var timer = RetentionTimer()
        #expect(timer.update(nextDeadline: nil, now: 0) == .keep)
        #expect(timer.update(nextDeadline: 600, now: 100) == .arm(delayNanos: 500))
        #expect(timer.update(nextDeadline: 600, now: 200) == .keep)
        #expect(timer.update(nextDeadline: 400, now: 200) == .arm(delayNanos: 200))
        #expect(timer.update(nextDeadline: nil, now: 300) == .cancel)
        #expect(timer.deadline == nil)
    }

    @Test func aDeadlineAlreadyPassedFiresAtOnceAndAFiredTimerIsArmedAgain() {
        var timer = RetentionTimer()
        #expect(timer.update(nextDeadline: 50, now: 80) == .arm(delayNanos: 0))
        timer.fired()
        // The same deadline (the collector had nothing to drop yet) arms the timer again.
        #expect(timer.update(nextDeadline: 50, now: 90) == .arm(delayNanos: 0))
    }
}
