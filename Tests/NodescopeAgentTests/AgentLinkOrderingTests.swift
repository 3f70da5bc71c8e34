import NodesDebug
import NodescopeWire
import Testing

@testable import NodesAgent
@testable import NodesTracking

/// Every stream the agent's link writes keeps the protocol's ordering rules, whatever the timing
/// of the hello's answer, the exit and a stalled collector: checked on scripted worlds and on
/// randomized ones (a fixed seed each, so a failure is reproduced by its seed).
@Suite("The agent's link keeps the protocol's order")
struct AgentLinkOrderingTests {
    typealias Simulation = LinkSimulation
    let ms = LinkSimulation.millisecond
    let second = LinkSimulation.second

    func at(_ offset: UInt64) -> UInt64 { Simulation.start(plus: offset) }

    /// Issue 31, point 7: the collector was stopped while the host started; it answers the hello
    /// only once the host is exiting with a leak whose grace has run out. The snapshot goes out
    /// before the leak's explanation, and the stream ends with a goodbye.
    @Test func aHelloAnsweredDuringTheExitSendsTheSnapshotBeforeTheRetainers() throws {
        var simulation = Simulation(exitFlushNanos: 10 * second)
        simulation.answer = .accepted(graceNanos: second, holdsExit: false, version: WireLimits.protocolVersion)
        simulation.answerDelay = 8_500 * ms
        simulation.detach(at: at(200 * ms), releasedAt: nil)
        simulation.exitAt = at(1_500 * ms)
        simulation.run(until: at(30 * second))
        #expect(simulation.protocolViolations == [])
        let frames = try #require(simulation.connections.last)
        let snapshot = try #require(frames.firstIndex { if case .snapshot = $0 { true } else { false } })
        let retainers = try #require(frames.firstIndex { if case .retainers = $0 { true } else { false } })
        #expect(snapshot < retainers)
        #expect(simulation.goodbye?.reason == .normalExit)
    }

    /// The same with the collector's exit hold asked for and a snapshot the socket takes in part.
    @Test func aHeldExitAnsweredLateWithAStalledSocketKeepsTheOrder() throws {
        var simulation = Simulation(exitFlushNanos: 10 * second)
        simulation.answer = .accepted(graceNanos: second, holdsExit: true, version: WireLimits.protocolVersion)
        simulation.answerDelay = 3 * second
        simulation.detach(at: at(100 * ms), releasedAt: nil)
        simulation.exitAt = at(1_200 * ms)
        simulation.partialWritesDuring = at(3 * second)..<at(3_400 * ms)
        simulation.run(until: at(30 * second))
        #expect(simulation.protocolViolations == [])
        #expect(simulation.explanations.count == 1)
        #expect(simulation.finishedAt != nil)
    }

    /// Issue 31 review, point 2: the exit's settlement encodes `retainers` frames after the
    /// drain; a collector that reads slowly just then takes them in part. The link writes on
    /// until nothing is unsent before its goodbye `normalExit`, which therefore is not lost
    /// behind a frame cut short (the session would end abnormally).
    @Test func theSettlementsFramesAreWrittenBeforeTheGoodbye() throws {
        var simulation = Simulation(exitFlushNanos: 2 * second)
        simulation.answer = .accepted(graceNanos: second, holdsExit: false, version: WireLimits.protocolVersion)
        simulation.detach(at: at(500 * ms), releasedAt: nil)
        simulation.exitAt = at(1_000 * ms)
        simulation.explainDuration = 100 * ms
        // The collector stalls while the settlement runs, and reads again 400 ms after the exit.
        simulation.partialWritesDuring = at(1_050 * ms)..<at(1_400 * ms)
        simulation.run(until: at(30 * second))
        #expect(simulation.protocolViolations == [])
        let settled = try #require(simulation.connections.last?.contains { if case .retainers = $0 { true } else { false } })
        #expect(settled)
        #expect(simulation.goodbye?.reason == .normalExit)
        #expect(!simulation.unsentAtGoodbye)
        #expect(!simulation.goodbyeLost)
        #expect(simulation.finishedAt != nil)
    }

    /// The same when the collector stalls past the exit's flush bound: the goodbye says the
    /// flush was cut (`flushIncomplete`), never `normalExit`.
    @Test func aSettlementCutByTheFlushBoundSaysFlushIncomplete() throws {
        var simulation = Simulation(exitFlushNanos: 2 * second)
        simulation.answer = .accepted(graceNanos: second, holdsExit: false, version: WireLimits.protocolVersion)
        simulation.detach(at: at(500 * ms), releasedAt: nil)
        simulation.exitAt = at(1_000 * ms)
        simulation.explainDuration = 100 * ms
        simulation.partialWritesDuring = at(1_050 * ms)..<at(20 * second)
        simulation.run(until: at(30 * second))
        #expect(simulation.protocolViolations == [])
        #expect(simulation.goodbye?.reason == .flushIncomplete)
        #expect(simulation.finishedAt != nil)
    }

    /// Randomized worlds: the answer early, late or never; the exit before, during or after the
    /// handshake; detaches released in time, late or never; the collector stalling (writes taken
    /// in part), going away (a failed write), dropping events and asking to explain nodes.
    @Test(arguments: 0..<8)
    func everyStreamKeepsTheOrderWhateverTheTiming(batch: Int) {
        var explainedWorlds = 0
        var lateAnswers = 0
        for trial in 0..<100 {
            let seed = UInt64(batch * 100 + trial)
            var random = SeededRandom(seed: seed)
            var simulation = world(&random)
            simulation.run(until: at(40 * second))
            let violations = simulation.protocolViolations
            if !simulation.explanations.isEmpty { explainedWorlds += 1 }
            if let exit = simulation.exitAt, let answer = simulation.firstTime(of: { $0 == .announceConnected }),
                answer > exit
            {
                lateAnswers += 1
            }
            #expect(violations.isEmpty, "seed \(seed): \(violations)")
            // A goodbye `normalExit` says that everything was written: nothing waits behind it.
            let unsentBehindNormalExit = simulation.goodbye?.reason == .normalExit && simulation.unsentAtGoodbye
            #expect(!unsentBehindNormalExit, "seed \(seed): normalExit with frames unsent")
            if simulation.link.exitDeadline != nil {
                #expect(simulation.finishedAt != nil, "seed \(seed): the writer did not finish after the exit")
            }
        }
        // The worlds do reach the cases that matter: leaks explained, hellos answered after the exit.
        #expect(explainedWorlds >= 10)
        #expect(lateAnswers >= 3)
    }

    /// A world drawn from `random`.
    private func world(_ random: inout SeededRandom) -> Simulation {
        let exitFlush: UInt64? = random.chance(0.5) ? nil : random.next(in: 0...(12 * second))
        var simulation = Simulation(exitFlushNanos: exitFlush)
        let grace = random.next(in: (100 * ms)...(2 * second))
        let version: UInt16 = random.chance(0.2) ? 1 : WireLimits.protocolVersion
        simulation.answer = .accepted(graceNanos: grace, holdsExit: random.chance(0.5), version: version)
        simulation.answerDelay = random.chance(0.1) ? nil : random.next(in: ms...(12 * second))
        simulation.socketAppearsAt = random.chance(0.8) ? 0 : at(random.next(in: 0...(3 * second)))
        simulation.explainDuration = random.next(in: ms...(300 * ms))
        for _ in 0..<random.next(in: 0...6) {
            let detached = at(random.next(in: 0...(8 * second)))
            let released: UInt64? = random.chance(0.4) ? nil : detached + random.next(in: 0...(3 * second))
            simulation.detach(at: detached, releasedAt: released)
        }
        for _ in 0..<random.next(in: 0...5) { simulation.otherEvent(at: at(random.next(in: 0...(8 * second)))) }
        if random.chance(0.5) {
            // The collector stops reading for a while (SIGSTOP), possibly mid-snapshot.
            let from = at(random.next(in: 0...(10 * second)))
            simulation.partialWritesDuring = from..<(from + random.next(in: (10 * ms)...(5 * second)))
        }
        if random.chance(0.15) { simulation.failingWrites = 1 }
        if random.chance(0.15) { simulation.dropsAtNextTake = random.next(in: 1...100) }
        if random.chance(0.3) {
            let frame = ExplainFrame(requestID: 1, nodeIDs: [1])
            simulation.requests = [(at(random.next(in: 0...(10 * second))), frame)]
        }
        if random.chance(0.85) { simulation.exitAt = at(random.next(in: 0...(12 * second))) }
        if random.chance(0.1) { simulation.stopAt = at(random.next(in: 0...(12 * second))) }
        return simulation
    }
}

/// A small deterministic generator (SplitMix64), so that a failing world is found again by its seed.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A value in `range` (close enough to uniform for a test's choices).
    mutating func next(in range: ClosedRange<UInt64>) -> UInt64 {
        let span = range.upperBound - range.lowerBound
        return span == .max ? next() : range.lowerBound + next() % (span + 1)
    }

    /// A value in `range`, as an Int.
    mutating func next(in range: ClosedRange<Int>) -> Int {
        Int(next(in: UInt64(range.lowerBound)...UInt64(range.upperBound)))
    }

    /// True with probability `probability`.
    mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) / Double(1 << 53) < probability
    }
}
