import NodesDebug
import NodescopeWire
import Testing

@testable import NodesAgent
@testable import NodesTracking

/// The agent's rules, on a manual clock: simulated seconds, real microseconds.
@Suite("The agent's link on a manual clock")
struct AgentLinkTests {
    typealias Simulation = LinkSimulation
    let ms = LinkSimulation.millisecond
    let second = LinkSimulation.second

    func at(_ offset: UInt64) -> UInt64 { Simulation.start(plus: offset) }

    /// A simulation whose collector accepts with a grace of 1 s, holding the exit if asked.
    func connected(holdsExit: Bool, exitFlushNanos: UInt64? = nil) -> Simulation {
        var simulation = Simulation(exitFlushNanos: exitFlushNanos)
        simulation.answer = .accepted(graceNanos: second, holdsExit: holdsExit, version: WireLimits.protocolVersion)
        return simulation
    }

    // MARK: Finding the collector

    @Test func aCollectorThatAppearsIsJoinedWithinASecond() throws {
        var simulation = Simulation()
        let appears = at(2_300 * ms)
        simulation.socketAppearsAt = appears
        simulation.run(until: at(10 * second))
        let connect = try #require(simulation.firstTime(of: \.isConnect))
        #expect(connect >= appears && connect - appears <= second)
        // Meanwhile it looks at the path twice a second: never slower, and no busier.
        let looks = simulation.times(of: \.isExamine).filter { $0 < appears }
        #expect(looks.count >= 4)
        #expect(zip(looks, looks.dropFirst()).allSatisfy { $1 - $0 >= 500 * ms && $1 - $0 <= second })
    }

    @Test func aRefusalIsLoggedOnceAndTheCollectorAskedAgainEveryTenSeconds() {
        var simulation = Simulation()
        simulation.answer = .refused("this collector refuses this host", versionUnsupported: false)
        simulation.run(until: at(61 * second))
        #expect(
            simulation.logs == [
                "the collector at /run/nodescope/c.sock refused this process: this collector refuses this host"
            ])
        let attempts = simulation.times(of: \.isConnect)
        #expect(attempts.count == 7)
        #expect(zip(attempts, attempts.dropFirst()).allSatisfy { $1 - $0 >= 10 * second && $1 - $0 < 11 * second })
    }

    @Test func anOlderCollectorIsGreetedAgainAtOnceOneVersionLower() {
        var link = AgentLink(settings: AgentSettings(mode: .explicit, socketPath: "/run/nodescope/c.sock"))
        #expect(link.helloVersion == 3)
        var now: UInt64 = 0
        // A collector of version 1: refused in 3, then in 2, then accepted in 1, each at once.
        for refusedVersion in [UInt16(3), 2] {
            #expect(link.tick(now: now) == .examineSocket)
            _ = link.socketExamined(AgentLink.SocketFile(inode: 1, modified: 1), now: now)
            _ = link.connectFinished(.connected, now: now)
            _ = link.helloSent(complete: true, now: now)
            now += ms
            let action = link.answerRead(.refused("speaks version 1", versionUnsupported: true), now: now)
            // Closed without a log line, and the next attempt comes at once, one version lower.
            #expect(action == .close(log: nil))
            #expect(link.helloVersion == refusedVersion - 1)
        }
        #expect(link.tick(now: now) == .examineSocket)
        _ = link.socketExamined(AgentLink.SocketFile(inode: 1, modified: 1), now: now)
        _ = link.connectFinished(.connected, now: now)
        _ = link.helloSent(complete: true, now: now)
        _ = link.answerRead(.accepted(graceNanos: second, holdsExit: false, version: 1), now: now + ms)
        #expect(link.stream.protocolVersion == 1)
        // A refusal of version 1 itself is an ordinary refusal: logged once, retried later.
        var old = AgentLink(settings: AgentSettings(mode: .explicit, socketPath: "/run/nodescope/c.sock"))
        _ = old.tick(now: 0)
        _ = old.socketExamined(AgentLink.SocketFile(inode: 1, modified: 1), now: 0)
        _ = old.connectFinished(.connected, now: 0)
        _ = old.helloSent(complete: true, now: 0)
        #expect(old.answerRead(.accepted(graceNanos: second, holdsExit: false, version: 2), now: ms) == .announceConnected)
        #expect(old.stream.protocolVersion == 2)
    }

    @Test func anUntrustedSocketIsLoggedOnceAndNothingIsSent() {
        var simulation = Simulation()
        simulation.connectOutcome = .untrusted("/run/nodescope is writable by others")
        simulation.run(until: at(30 * second))
        #expect(
            simulation.logs == [
                "not connecting to /run/nodescope/c.sock: /run/nodescope is writable by others; "
                    + "start your own collector (nodescope daemon)"
            ])
        #expect(simulation.times { if case .sendHello = $0 { true } else { false } }.isEmpty)
        // The same file is tried again every 5 s, in case its owner fixes it.
        let attempts = simulation.times(of: \.isConnect)
        #expect(attempts.count == 6)
        #expect(zip(attempts, attempts.dropFirst()).allSatisfy { $1 - $0 >= 5 * second && $1 - $0 < 6 * second })
    }

    @Test func aSocketFileThatFailedIsTriedAgainAtOnceWhenItChanges() throws {
        var simulation = Simulation()
        simulation.connectOutcome = .failed
        simulation.run(until: at(3 * second))
        #expect(simulation.times(of: \.isConnect).count == 1, "a stale file is left alone for 5 s")
        let replaced = simulation.now
        simulation.socketFile = .init(inode: 2, modified: 9)
        simulation.connectOutcome = .connected
        simulation.run(until: at(4 * second))
        let connect = try #require(simulation.firstTime(from: replaced, of: \.isConnect))
        #expect(connect - replaced <= 500 * ms)
        #expect(simulation.link.phase == .streaming)
    }

    @Test func aSocketPathTooLongIsLoggedOnceAndNeverUsed() {
        var simulation = Simulation(socketPath: "/" + String(repeating: "d", count: 120) + "/c.sock")
        simulation.run(until: at(300 * second))
        #expect(simulation.logs.count == 1)
        #expect(simulation.logs.first?.hasSuffix("set NODESCOPE_SOCKET to a shorter path") == true)
        #expect(simulation.times(of: \.isExamine).isEmpty)
    }

    @Test func aCollectorThatNeverAnswersIsGivenThirtySecondsThenLeftAloneUntilItsFileChanges() throws {
        var simulation = Simulation()
        simulation.answerDelay = nil
        simulation.run(until: at(50 * second))
        let hello = try #require(simulation.firstTime { if case .sendHello = $0 { true } else { false } })
        let closed = try #require(simulation.firstTime { if case .close = $0 { true } else { false } })
        #expect(closed - hello >= 30 * second && closed - hello < 30 * second + 200 * ms)
        let retry = try #require(simulation.firstTime(from: closed, of: \.isConnect))
        #expect(retry - closed >= 5 * second && retry - closed < 6 * second)
        #expect(simulation.logs.isEmpty)
    }

    @Test func aCollectorThatAnswersLateIsStillJoined() throws {
        var simulation = Simulation()
        simulation.answerDelay = 3 * second
        simulation.run(until: at(5 * second))
        let accepted = try #require(simulation.firstTime { $0 == .announceConnected })
        #expect(accepted >= at(3 * second) && accepted < at(3 * second + 200 * ms))
        #expect(simulation.times(of: \.isConnect).count == 1)
    }

    // MARK: The stream

    @Test func everyConnectionOpensWithASnapshotThatAHeartbeatVouchesFor() throws {
        var simulation = Simulation()
        simulation.run(until: at(50 * ms))
        let opened = try #require(simulation.firstTime { $0 == .announceConnected })
        // The time to vouch for is read (and the weak references polled) before the queue is
        // taken, so every event stamped before it is in the snapshot or the events after it.
        #expect(
            simulation.actions(from: opened).prefix(8).map(\.name) == [
                "announceConnected", "pollReleases", "takeEvents", "sendSnapshot", "sendHeartbeat", "sendEvents",
                "write", "readIncoming",
            ])
        let polled = try #require(simulation.firstTime { $0 == .pollReleases })
        #expect(simulation.heartbeats.first?.vouched == polled)
    }

    @Test func eventsLostToAFullQueueAreCountedAndFollowedByASnapshot() {
        var simulation = Simulation()
        simulation.run(until: at(200 * ms))
        simulation.dropsAtNextTake = 3
        simulation.otherEvent(at: at(210 * ms))
        simulation.run(until: at(400 * ms))
        #expect(simulation.trace.map(\.action).filter(\.isSnapshot) == [.sendSnapshot(dropped: 0), .sendSnapshot(dropped: 3)])
    }

    @Test func aLostConnectionIsReplacedAtOnceAndStartsWithASnapshot() throws {
        var simulation = Simulation()
        simulation.run(until: at(300 * ms))
        simulation.failingWrites = 1
        simulation.otherEvent(at: at(310 * ms))
        simulation.run(until: at(second))
        let lost = try #require(simulation.firstTime { if case .close = $0 { true } else { false } })
        let reconnect = try #require(simulation.firstTime(from: lost, of: \.isConnect))
        #expect(reconnect - lost < ms)
        #expect(simulation.times { $0 == .announceConnected }.count == 2)
        #expect(simulation.times(of: \.isSnapshot).count == 2)
    }

    @Test func heartbeatsGoOutEvery50msWhileAGraceIsPendingAndOnlyThen() throws {
        var simulation = Simulation()
        simulation.run(until: at(2 * second))
        #expect(simulation.heartbeats.count == 1, "only the one after the opening snapshot")
        let detached = at(2 * second + 10 * ms)
        simulation.detach(at: detached, releasedAt: nil)
        simulation.run(until: at(6 * second))
        let beats = simulation.heartbeats.dropFirst().map(\.time)
        #expect(beats.count == 20)
        #expect(zip(beats, beats.dropFirst()).allSatisfy { $1 - $0 >= 50 * ms && $1 - $0 < 51 * ms })
        // The last one vouches past the grace's end; then nothing is pending and it is quiet.
        let last = try #require(simulation.heartbeats.last)
        #expect(last.vouched >= detached + second && last.time < detached + second + 60 * ms)
    }

    /// A heartbeat's poll applies the whole log at once: while the writer is behind, a due
    /// heartbeat waits for rounds of events to catch up, but never longer than the
    /// postponement, so a leak's verdict comes at most that much later.
    @Test func aHeartbeatWaitsForAWriterThatIsBehindButNotForLong() throws {
        var simulation = Simulation()
        simulation.run(until: at(2 * second))
        simulation.detach(at: at(2 * second + 10 * ms), releasedAt: nil)
        let behind = at(2 * second + 200 * ms)..<at(2 * second + 700 * ms)
        simulation.writerBehindDuring = behind
        simulation.run(until: at(3 * second))
        let beats = simulation.heartbeats.dropFirst().map(\.time)
        let gaps = zip(beats, beats.dropFirst()).map { (at: $0, gap: $1 - $0) }
        let limit = AgentLink.heartbeatInterval + AgentLink.heartbeatPostponement
        #expect(gaps.allSatisfy { $0.gap < limit + ms }, "never put off past the postponement")
        let during = gaps.filter { behind.contains($0.at) && $0.at + $0.gap < behind.upperBound }
        #expect(!during.isEmpty && during.allSatisfy { $0.gap >= limit }, "put off while behind")
        let outside = gaps.filter { $0.at + $0.gap < behind.lowerBound || $0.at >= behind.upperBound }
        #expect(outside.count >= 5 && outside.allSatisfy { $0.gap < AgentLink.heartbeatInterval + ms })
        // Meanwhile the writer went on taking events round after round.
        let rounds = simulation.times { $0 == .takeEvents }.filter { behind.contains($0) }
        #expect(rounds.count > during.count)
    }

    /// Behind means more of the log than one round applies: the link judges it from the backlog
    /// the writer passes in, and a backlog of one round puts no heartbeat off.
    @Test func aBacklogOfOneRoundIsNotBehind() {
        var simulation = Simulation()
        simulation.run(until: at(2 * second))
        simulation.detach(at: at(2 * second + 10 * ms), releasedAt: nil)
        let busy = at(2 * second + 200 * ms)..<at(2 * second + 700 * ms)
        simulation.writerBehindDuring = busy
        simulation.backlogUnits = AgentLink.roundUnits
        simulation.run(until: at(3 * second))
        let beats = simulation.heartbeats.dropFirst().map(\.time)
        let gaps = zip(beats, beats.dropFirst()).map { $1 - $0 }
        #expect(gaps.count >= 10)
        #expect(gaps.allSatisfy { $0 < AgentLink.heartbeatInterval + ms }, "no heartbeat put off")
    }

    // MARK: Exit

    /// A connected host that detaches one node (released at `releasedAt`, or never) and exits
    /// normally at `exit`, run until it has said goodbye.
    func exiting(holdsExit: Bool, detachedAt: UInt64, releasedAt: UInt64?, exit: UInt64) -> Simulation {
        var simulation = connected(holdsExit: holdsExit)
        simulation.detach(at: detachedAt, releasedAt: releasedAt)
        simulation.exitAt = exit
        simulation.run(until: exit + 5 * second)
        return simulation
    }

    @Test func theExitHoldEndsAtOnceWhenNothingAwaitsRelease() throws {
        let exit = at(500 * ms)
        let simulation = exiting(holdsExit: true, detachedAt: at(100 * ms), releasedAt: at(150 * ms), exit: exit)
        let goodbye = try #require(simulation.goodbye)
        #expect(goodbye.reason == .normalExit && goodbye.time - exit < 2 * ms)
        #expect(simulation.times(of: \.isInspect).count == 1, "one look, no wait")
    }

    @Test func theExitHoldWaitsForARecentDetachUntilItIsReleased() throws {
        let released = at(800 * ms)
        let simulation = exiting(holdsExit: true, detachedAt: at(300 * ms), releasedAt: released, exit: at(500 * ms))
        let goodbye = try #require(simulation.goodbye)
        #expect(goodbye.reason == .normalExit)
        #expect(goodbye.time >= released && goodbye.time - released < 5 * ms)
    }

    @Test func theExitHoldLastsOneGraceAtMost() throws {
        let exit = at(500 * ms)
        let simulation = exiting(holdsExit: true, detachedAt: exit - ms, releasedAt: nil, exit: exit)
        let goodbye = try #require(simulation.goodbye)
        #expect(goodbye.reason == .normalExit)
        // Then the leak is explained before the drain.
        #expect(simulation.explanations.count == 1)
        #expect(
            goodbye.time >= exit - ms + second && goodbye.time < exit + second + 5 * ms + simulation.explainDuration)
    }

    @Test func aGraceThatHasRunOutHoldsNothing() throws {
        let exit = at(3 * second)
        let simulation = exiting(holdsExit: true, detachedAt: at(100 * ms), releasedAt: nil, exit: exit)
        let goodbye = try #require(simulation.goodbye)
        #expect(goodbye.time - exit < 2 * ms)
    }

    @Test func withoutTheCollectorsAskingAnExitIsNotHeld() throws {
        let exit = at(500 * ms)
        let simulation = exiting(holdsExit: false, detachedAt: exit - 10 * ms, releasedAt: nil, exit: exit)
        let goodbye = try #require(simulation.goodbye)
        // No hold: only the settlement's analysis of the node awaiting release comes between.
        #expect(goodbye.reason == .normalExit && goodbye.time - exit < 2 * ms + simulation.explainDuration)
    }

    /// A drain that sent everything may still find the socket full for its goodbye (a collector
    /// stopped meanwhile reads its backlog first): the goodbye may wait for what is left of the
    /// flush's bound, and the exit hook is told so, so that the session does not end abnormally.
    /// One cut by the bound waits only a little.
    @Test func theGoodbyeOfADrainWaitsForWhatIsLeftOfTheFlushsBound() throws {
        let exit = at(500 * ms)
        let simulation = exiting(holdsExit: false, detachedAt: at(100 * ms), releasedAt: at(150 * ms), exit: exit)
        let goodbye = try #require(simulation.goodbye)
        let wait = try #require(simulation.goodbyeWaitMilliseconds)
        #expect(goodbye.reason == .normalExit)
        // The flush's bound is 1 s by default; the drain took a few milliseconds of it.
        #expect(wait > 900 && wait <= 1_000, "waits \(wait) ms")
        let exitDeadline = try #require(simulation.link.exitDeadline)
        #expect(exitDeadline >= goodbye.time + UInt64(wait) * ms)

        var cut = connected(holdsExit: false)
        cut.writeOutcome = .partly
        cut.exitAt = exit
        cut.run(until: exit + 5 * second)
        #expect(cut.goodbye?.reason == .flushIncomplete)
        #expect(cut.goodbyeWaitMilliseconds == AgentLink.exitGoodbyeMilliseconds)
    }

    @Test func anUnheldExitExplainsTheNodesAwaitingReleaseAfterItsDrainAndThenSaysGoodbye() throws {
        let exit = at(500 * ms)
        let simulation = exiting(holdsExit: false, detachedAt: exit - 10 * ms, releasedAt: nil, exit: exit)
        let goodbye = try #require(simulation.goodbye)
        #expect(goodbye.reason == .normalExit)
        // Within its grace, so only the settlement explains it: after the drain, bounded by what
        // is left of the flush (1 s by default), and its frames go out with the goodbye.
        let settle = try #require(simulation.trace.first { if case .settleLeaks = $0.action { true } else { false } })
        guard case .settleLeaks(let detachedBy, let graceRanOutBy, let bound) = settle.action else { return }
        #expect(detachedBy >= exit - 10 * ms)
        // Its grace had not run out: it is settled, not explained as a leak.
        #expect(graceRanOutBy < exit - 10 * ms)
        #expect(bound > 0 && bound <= second)
        #expect(simulation.explanations.map(\.nodes) == [[0]])
        #expect(simulation.protocolViolations == [])
        // Once per exit.
        #expect(simulation.trace.filter { if case .settleLeaks = $0.action { true } else { false } }.count == 1)
    }

    /// Once the settlement has drawn its line between leaks and nodes within their grace, the
    /// stream vouches no further than the line plus the grace: the collector then judges leaked
    /// only nodes that the settlement explained as leaks. (A later vouch flagged a node that had
    /// been settled stacks first, and a stale stack word keyed its fingerprint: one CI run in
    /// five of sample-ribs.)
    @Test func afterTheSettlementNoVouchPassesItsLine() throws {
        let exit = at(500 * ms)
        let simulation = exiting(holdsExit: false, detachedAt: exit - 10 * ms, releasedAt: nil, exit: exit)
        #expect(simulation.goodbye?.reason == .normalExit)
        let index = try #require(simulation.trace.firstIndex { if case .settleLeaks = $0.action { true } else { false } })
        guard case .settleLeaks(_, let graceRanOutBy, _) = simulation.trace[index].action else { return }
        let settledAt = simulation.trace[index].time
        let after = simulation.heartbeats.filter { $0.time >= settledAt }
        #expect(after.allSatisfy { $0.vouched <= graceRanOutBy + second }, "\(after) past \(graceRanOutBy + second)")
        // So the node detached 10 ms before the exit is not judged leaked by any vouch.
        #expect(simulation.heartbeats.allSatisfy { $0.vouched < exit - 10 * ms + second })
    }

    @Test func anExitWithNothingAwaitingReleaseSettlesNothing() throws {
        let exit = at(500 * ms)
        let simulation = exiting(holdsExit: false, detachedAt: exit - 10 * ms, releasedAt: exit - 5 * ms, exit: exit)
        #expect(simulation.goodbye?.reason == .normalExit)
        #expect(!simulation.trace.contains { if case .settleLeaks = $0.action { true } else { false } })
    }

    @Test func aFlushThatCompletesVouchesForTheExitAndSaysNormalExit() throws {
        var simulation = connected(holdsExit: false)
        simulation.run(until: at(300 * ms))
        let exit = at(400 * ms)
        for offset: UInt64 in [1, 2, 3] { simulation.otherEvent(at: exit - offset * ms) }
        simulation.exitAt = exit
        simulation.run(until: at(5 * second))
        let goodbye = try #require(simulation.goodbye)
        #expect(goodbye.reason == .normalExit)
        let lastBeat = try #require(simulation.heartbeats.last)
        #expect(lastBeat.vouched >= exit && lastBeat.time <= goodbye.time)
        #expect(simulation.finishedAt != nil)
    }

    /// A stalled collector: the flush runs out at its bound (`NODESCOPE_EXIT_FLUSH`, else 1 s,
    /// or 10 s when the exit is held), and the goodbye says that the stream was cut.
    @Test(arguments: [(false, 200 * LinkSimulation.millisecond), (false, nil), (true, nil)])
    func aStalledCollectorCutsTheFlushAtItsBoundAndTheGoodbyeSaysSo(holdsExit: Bool, exitFlushNanos: UInt64?) throws {
        var simulation = connected(holdsExit: holdsExit, exitFlushNanos: exitFlushNanos)
        simulation.run(until: at(300 * ms))
        simulation.writeOutcome = .partly
        simulation.otherEvent(at: at(310 * ms))
        let exit = at(400 * ms)
        simulation.exitAt = exit
        simulation.run(until: at(30 * second))
        let goodbye = try #require(simulation.goodbye)
        #expect(goodbye.reason == .flushIncomplete)
        let bound = exitFlushNanos ?? (holdsExit ? 10 * second : second)
        #expect(goodbye.time >= exit + bound && goodbye.time < exit + bound + 60 * ms)
    }

    /// A socket that took part of a frame: the rest is tried again soon, also when nothing
    /// else happens (the collector closes a connection whose frame stays incomplete for 10 s).
    @Test func aFrameLeftHalfWrittenIsFinishedWithoutWaitingForWork() throws {
        var simulation = connected(holdsExit: false)
        // One event, whose frame the socket takes only in part; then nothing else happens.
        simulation.otherEvent(at: at(400 * ms))
        simulation.partialWritesDuring = at(400 * ms)..<at(500 * ms)
        simulation.run(until: at(5 * second))
        let writable = at(500 * ms)
        let finished = try #require(simulation.completeWrites.first { $0 >= at(400 * ms) })
        #expect(finished >= writable && finished < writable + 2 * AgentLink.heartbeatInterval)
    }

    @Test func theExitSaysByWhenItWillBeOver() throws {
        var simulation = connected(holdsExit: true)
        simulation.detach(at: at(450 * ms), releasedAt: nil)
        simulation.exitAt = at(500 * ms)
        simulation.run(until: at(600 * ms))
        // One grace of hold, the held exit's flush bound, and the goodbye's wait.
        let deadline = try #require(simulation.link.exitDeadline)
        #expect(deadline >= at(11_550 * ms) && deadline < at(11_552 * ms))
    }

    @Test func anExitRightAfterTheStartWaitsForTheFirstConnectionWhenASocketWasNamed() throws {
        var simulation = Simulation()
        simulation.answerDelay = 20 * ms
        simulation.exitAt = at(0)
        simulation.run(until: at(5 * second))
        #expect(simulation.goodbye?.reason == .normalExit)
        #expect(simulation.times(of: \.isSnapshot).count == 1, "the nodes are judged")
    }

    @Test func theFirstConnectionIsWaitedForOnlyWithinTheFlushBound() throws {
        var simulation = Simulation()
        simulation.answerDelay = 5 * second
        simulation.exitAt = at(0)
        simulation.run(until: at(10 * second))
        let finished = try #require(simulation.finishedAt)
        #expect(finished >= at(second) && finished < at(second + 200 * ms))
        #expect(simulation.goodbye == nil)
    }

    @Test func aHostWatchingTheDefaultPathDoesNotWaitAtExit() throws {
        var simulation = Simulation(mode: .watchDefault)
        simulation.answerDelay = 20 * ms
        simulation.exitAt = at(0)
        simulation.run(until: at(5 * second))
        let finished = try #require(simulation.finishedAt)
        #expect(finished < at(ms))
        #expect(simulation.times { $0 == .announceConnected }.isEmpty)
    }

    // MARK: Explaining leaks

    @Test func aLeakIsExplainedOnceWhenItsGraceRunsOut() throws {
        var simulation = connected(holdsExit: false)
        let detached = at(2 * second)
        simulation.detach(at: detached, releasedAt: nil)
        simulation.run(until: at(10 * second))
        try #require(simulation.explanations.count == 1)
        let explanation = simulation.explanations[0]
        #expect(explanation.nodes == [0])
        // At the round whose poll finds the grace over: within a heartbeat of its end.
        #expect(explanation.time >= detached + second && explanation.time < detached + second + 60 * ms)
        // Its frames are written by the next round.
        #expect(simulation.completeWrites.contains { $0 > explanation.time && $0 < explanation.time + 10 * ms })
    }

    @Test func aNodeReleasedWithinItsGraceIsNeverExplained() {
        var simulation = connected(holdsExit: false)
        simulation.detach(at: at(2 * second), releasedAt: at(2_500 * ms))
        simulation.run(until: at(10 * second))
        #expect(simulation.explanations.isEmpty)
        #expect(simulation.times(of: \.isExplain).isEmpty)
    }

    @Test func aVersionOneConnectionIsNeverAskedToExplain() {
        var simulation = Simulation()
        simulation.answer = .accepted(graceNanos: second, holdsExit: true, version: 1)
        simulation.detach(at: at(2 * second), releasedAt: nil)
        simulation.detach(at: at(5 * second), releasedAt: nil)
        simulation.exitAt = at(5_500 * ms)
        simulation.run(until: at(20 * second))
        #expect(simulation.times(of: \.isExplain).isEmpty)
        #expect(simulation.goodbye?.reason == .normalExit)
    }

    @Test func eachLeakedNodeIsExplainedOnceAfterItsOwnGrace() throws {
        var simulation = connected(holdsExit: false)
        simulation.detach(at: at(2 * second), releasedAt: nil)
        simulation.detach(at: at(2_300 * ms), releasedAt: nil)
        simulation.detach(at: at(2_400 * ms), releasedAt: at(2_600 * ms))
        simulation.run(until: at(10 * second))
        try #require(simulation.explanations.count == 2)
        #expect(simulation.explanations.map(\.nodes) == [[0], [1]])
        #expect(simulation.explanations[0].time >= at(3 * second) && simulation.explanations[0].time < at(3_060 * ms))
        #expect(simulation.explanations[1].time >= at(3_300 * ms) && simulation.explanations[1].time < at(3_360 * ms))
        #expect(simulation.times(of: \.isExplain).count == 2)
    }

    @Test func anExitHoldExplainsTheLeakBeforeItsDrainAndWaitsForIt() throws {
        var simulation = connected(holdsExit: true)
        let detached = at(450 * ms)
        simulation.detach(at: detached, releasedAt: nil)
        simulation.exitAt = at(500 * ms)
        simulation.run(until: at(20 * second))
        try #require(simulation.explanations.count == 1)
        let explanation = simulation.explanations[0]
        let goodbye = try #require(simulation.goodbye)
        #expect(goodbye.reason == .normalExit)
        #expect(explanation.time >= detached + second && explanation.time < goodbye.time)
        // The frames are written before the goodbye, by a round of the drain or of the hold.
        #expect(simulation.completeWrites.contains { $0 > explanation.time && $0 <= goodbye.time })
        // The exit waits for the analysis: its deadline covers the analysis's bound.
        let deadline = try #require(simulation.link.exitDeadline)
        #expect(deadline >= explanation.time + simulation.link.explainAllowance)
    }

    @Test func aLeakAlreadyExplainedIsNotExplainedAgainAtExit() throws {
        var simulation = connected(holdsExit: true)
        simulation.detach(at: at(100 * ms), releasedAt: nil)
        simulation.exitAt = at(3 * second)
        simulation.run(until: at(20 * second))
        #expect(simulation.explanations.count == 1)
        #expect(simulation.explanations.first.map { $0.time < at(3 * second) } == true)
        #expect(simulation.goodbye?.reason == .normalExit)
    }

    @Test func aLeakWhoseGraceRanOutBeforeAnUnheldExitIsExplainedBeforeTheGoodbye() throws {
        var simulation = connected(holdsExit: false)
        simulation.detach(at: at(100 * ms), releasedAt: nil)
        // The exit comes before the round that would have explained it.
        simulation.exitAt = at(1_101 * ms)
        simulation.run(until: at(20 * second))
        try #require(simulation.explanations.count == 1)
        let goodbye = try #require(simulation.goodbye)
        #expect(simulation.explanations[0].time < goodbye.time)
    }

    // MARK: Explain requests

    @Test func aRequestIsAnsweredWithinAnIdleWakeWhateverTheGrace() throws {
        var simulation = connected(holdsExit: false)
        simulation.detach(at: at(2 * second), releasedAt: nil)
        let asked = at(2_200 * ms)
        simulation.requests = [(asked, ExplainFrame(requestID: 1, nodeIDs: [7]))]
        simulation.run(until: at(2_800 * ms))
        let answer = try #require(simulation.answers.first)
        #expect(answer.frame.requestID == 1)
        // The writer reads the socket at least every heartbeat while a grace is pending, and
        // an idle writer wakes on the request itself.
        #expect(
            answer.time >= asked && answer.time <= asked + AgentLink.heartbeatInterval + simulation.explainDuration + ms)
        // The answer is written in the round after it, not held until the next event.
        #expect(simulation.completeWrites.contains { $0 >= answer.time && $0 < answer.time + ms })
        // Its grace had not run out: the leak is not explained on its own yet.
        #expect(simulation.explanations.isEmpty)
    }

    @Test func anIdleWriterSleepsWithoutATimerAndWakesOnARequest() throws {
        var simulation = connected(holdsExit: false)
        simulation.run(until: at(2 * second))
        // Idle, the writer's sleep is long: only work (an event, the socket) ends it.
        #expect(AgentLink.idleInterval >= 10 * second)
        let asked = at(5 * second)
        simulation.requests = [(asked, ExplainFrame(requestID: 1, nodeIDs: [7]))]
        simulation.run(until: at(6 * second))
        let answer = try #require(simulation.answers.first)
        #expect(answer.time >= asked && answer.time <= asked + simulation.explainDuration + ms)
    }

    @Test func requestsBeyondFourWaitingAreLetGo() {
        var simulation = connected(holdsExit: false)
        let asked = at(1 * second)
        simulation.requests = (1...6).map { (asked, ExplainFrame(requestID: UInt32($0), nodeIDs: [7])) }
        simulation.run(until: at(3 * second))
        #expect(simulation.answers.map(\.frame.requestID) == [1, 2, 3, 4])
    }

    @Test func aVersion1ConnectionAnswersNoRequest() {
        var simulation = Simulation()
        simulation.answer = .accepted(graceNanos: second, holdsExit: false, version: 1)
        simulation.requests = [(at(1 * second), ExplainFrame(requestID: 1, nodeIDs: [7]))]
        simulation.run(until: at(3 * second))
        #expect(simulation.answers.isEmpty)
    }

    // MARK: Stop

    @Test func aStoppedAgentSaysGoodbyeAgentDisabledAndEnds() throws {
        var simulation = Simulation()
        simulation.stopAt = at(300 * ms)
        simulation.run(until: at(5 * second))
        let goodbye = try #require(simulation.goodbye)
        #expect(goodbye.reason == .agentDisabled)
        #expect(goodbye.time - at(300 * ms) < ms)
        #expect(simulation.finishedAt != nil)
    }

    @Test func anAgentStoppedWhileDisconnectedEndsWithoutAGoodbye() {
        var simulation = Simulation()
        simulation.socketAppearsAt = nil
        simulation.stopAt = at(1_200 * ms)
        simulation.run(until: at(5 * second))
        #expect(simulation.goodbye == nil)
        #expect(simulation.finishedAt.map { $0 - at(1_200 * ms) < ms } == true)
    }
}

extension AgentLink.Action {
    /// The action's case name, such as `sendHeartbeat`.
    var name: String { String(String(describing: self).prefix { $0 != "(" }) }
}
