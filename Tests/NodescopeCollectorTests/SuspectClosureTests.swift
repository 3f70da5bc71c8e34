import NodescopeCollector
import Testing

/// The closure that a suspect reference keeps (``RetainerPath/suspectClosure``): the line a
/// developer changes.
@Suite struct SuspectClosureTests {
    typealias Hop = RetainerPath.Hop

    static func closure(_ symbol: String?, line: Int = 20) -> RetainerPath.Closure {
        RetainerPath.Closure(image: "/app", fileOffset: 0x1000, symbol: symbol, file: "/src/App.swift", line: line)
    }

    @Test func theClosureStoredAtTheSuspectReference() {
        let path = RetainerPath(
            objectIndex: 0, verdict: .holder,
            hops: [
                Hop(
                    holderKind: .object, holder: "Session", reference: ".listeners[0]", isSuspect: true,
                    closure: Self.closure("closure #1 in A.f()")),
                Hop(holderKind: .closureContext, holder: "closure context", reference: "capture"),
            ])
        #expect(path.suspectClosure?.symbol == "closure #1 in A.f()")
    }

    @Test func aThunkStoredThereGivesWayToTheClosureItsContextKeeps() {
        // The thunk is not named (ClosureNaming leaves its symbol out); the capture after it is.
        let path = RetainerPath(
            objectIndex: 0, verdict: .holder,
            hops: [
                Hop(holderKind: .object, holder: "Session", reference: ".listeners[0]", isSuspect: true, closure: Self.closure(nil)),
                Hop(
                    holderKind: .closureContext, holder: "closure context", reference: "capture",
                    closure: Self.closure("closure #1 in A.f()", line: 7)),
            ])
        #expect(path.suspectClosure?.line == 7)
    }

    @Test func aTimersBlockAfterTheSuspectIsWhatItKeeps() {
        let path = RetainerPath(
            objectIndex: 0, verdict: .holder,
            hops: [
                Hop(holderKind: .object, holder: "Ticker", reference: ".timers[0]", isSuspect: true),
                Hop(holderKind: .object, holder: "Timer", reference: ".block", closure: Self.closure("closure #1 in W.didStart()")),
                Hop(holderKind: .closureContext, holder: "closure context", reference: "capture"),
            ])
        #expect(path.suspectClosure?.symbol == "closure #1 in W.didStart()")
    }

    @Test func aSuspectCaptureBelongsToTheClosureBeforeIt() {
        // A cycle whose suspect is the capture of the first hop's context: the closure is the
        // last hop's (the path leads back to its start).
        let path = RetainerPath(
            objectIndex: 0, verdict: .cycle,
            hops: [
                Hop(holderKind: .closureContext, holder: "closure context", reference: "capture", isSuspect: true),
                Hop(holderKind: .object, holder: "Module", reference: ".handler", closure: Self.closure("closure #2 in M.start()")),
            ])
        #expect(path.suspectClosure?.symbol == "closure #2 in M.start()")
    }

    @Test func noNamedClosureNoLine() {
        let path = RetainerPath(
            objectIndex: 0, verdict: .holder,
            hops: [
                Hop(holderKind: .object, holder: "Analytics", reference: ".screens[0]", isSuspect: true),
                Hop(holderKind: .object, holder: "View", reference: ".handler", closure: Self.closure(nil)),
            ])
        #expect(path.suspectClosure == nil)
        // The closure is shown, not compared: equality and fingerprints ignore it.
        var other = path
        other.hops[1].closure = nil
        #expect(path == other)
    }
}
