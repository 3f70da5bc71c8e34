import NodescopeHTTPGuard
import Testing

@testable import NodescopeWeb

/// The web view's bounds as plain values: when a connection's request deadline runs, and the
/// places of event streams and questions to the collector.
@Suite struct WebLimitsTests {
    @Test func theDeadlineRunsWhileARequestIsAwaitedOrHalfReadAndStopsWhileOneIsAnswered() {
        var deadline = RequestDeadline()
        #expect(deadline.isRunning, "a new connection must send a request in time")
        #expect(deadline.readHead() == .none, "half a request is still on the clock")
        #expect(deadline.readEnd() == .cancel, "a whole request stops it while it is answered")
        #expect(deadline.wroteEnd() == .start, "once answered, the next request is awaited afresh")
        // An answer written before the request's body ended: the clock runs on for the body.
        #expect(deadline.readHead() == .none)
        #expect(deadline.wroteEnd() == .none)
        #expect(deadline.isRunning)
        #expect(deadline.readEnd() == .none, "answered and read: idle, still on the clock")
        #expect(deadline.isRunning)
    }

    @Test func aPipelinedRequestIsOnTheClockUntilItIsWholeAndTheLastAnswerRestartsIt() {
        var deadline = RequestDeadline()
        let actions = [
            deadline.readHead(), deadline.readEnd(),  // the first request, whole: answered off the clock
            deadline.readHead(),  // half of a second one while the first is answered: on the clock
            deadline.readEnd(),  // whole: off again
            deadline.wroteEnd(), deadline.wroteEnd(),  // both answered: a third is awaited afresh
        ]
        #expect(actions == [.none, .cancel, .start, .cancel, .none, .start])
    }

    @Test func placesAreGivenBackWhenTheirHolderGoes() {
        let pool = SlotPool(capacity: 2)
        var first: Slot? = pool.take()
        let second = pool.take()
        #expect(first != nil && second != nil)
        #expect(pool.take() == nil, "a third place beyond a capacity of 2")
        #expect(pool.inUse == 2)
        first = nil
        #expect(pool.inUse == 1)
        let third = pool.take()
        #expect(third != nil)
        #expect(pool.inUse == 2)
        _ = (first, second, third)
    }

    @Test func aWebViewHoldsFewOfTheCollectorsClientPlaces() {
        let limits = WebLimits()
        #expect(limits.maxCollectorConnections == 32)
        #expect(limits.maxConnections > limits.maxEventStreams + limits.maxCollectorRequests, "refusals can still be answered")
    }
}
