import Foundation
import NodescopeWire
import ProcessTestSupport
import Testing

/// The agent in a real host process, talking to a real listener process over a real socket.
@Suite("Agent end to end", .serialized, .offTheCooperativePool)
struct AgentEndToEndTests {
    /// Decodes a recorded connection; fails the test on any decoding error.
    private func messages(in file: URL) throws -> [WireMessage] {
        var decoder = FrameDecoder()
        decoder.feed(try Data(contentsOf: file))
        var messages: [WireMessage] = []
        while let message = try decoder.next() { messages.append(message) }
        #expect(decoder.bufferedByteCount == 0, "the stream ends on a frame boundary")
        return messages
    }

    /// Replays a recorded stream and returns the tree as it stood at each of `sequences` (the
    /// state after every message up to that host sequence), and the mirror at the end.
    private func replay(_ recorded: [WireMessage], stoppingAt sequences: [UInt64]) -> ([[String]], WireMirror) {
        var mirror = WireMirror()
        var observed: [[String]] = []
        var pending = sequences[...]
        for message in recorded {
            while let next = pending.first, let sequence = message.hostSequence, sequence > next {
                observed.append(mirror.canonicalLines)
                pending = pending.dropFirst()
            }
            mirror.apply(message)
        }
        observed += pending.map { _ in mirror.canonicalLines }
        return (observed, mirror)
    }

    /// The host's STEP blocks: sequence number and canonical lines.
    private func steps(_ lines: [String]) -> [(sequence: UInt64, lines: [String])] {
        var steps: [(UInt64, [String])] = []
        for line in lines {
            if line.hasPrefix("STEP "), let sequence = UInt64(line.split(separator: " ")[3]) {
                steps.append((sequence, []))
            } else if line.hasPrefix("  "), !steps.isEmpty {
                steps[steps.count - 1].1.append(String(line.dropFirst(2)))
            }
        }
        return steps
    }

    /// Runs `test-host` with `arguments` to its exit against a listener that records its one
    /// connection; returns the host and what it sent.
    private func hostRecorded(_ arguments: [String]) throws -> (host: ChildProcess, recorded: [WireMessage]) {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("c.sock").path
        let listener = try ChildProcess("test-listener", [socket, scratch.path])
        #expect(listener.waitForLine(prefix: "listening") != nil)
        let host = try ChildProcess("test-host", arguments, environment: ["NODESCOPE_SOCKET": socket])
        #expect(host.waitForExit() == 0)
        #expect(listener.waitForLine(prefix: "closed 1") != nil)
        listener.stop()
        return (host, try messages(in: scratch.appendingPathComponent("connection-1.bin")))
    }

    @Test func theListenerRebuildsExactlyTheHostsTreeAtEveryStep() throws {
        let (host, recorded) = try hostRecorded(["tree3"])
        guard case .hello(let hello)? = recorded.first else {
            Issue.record("the stream does not begin with hello")
            return
        }
        #expect(hello.role == .host)
        #expect(hello.processName == "test-host")
        #expect(hello.pid == UInt32(host.process.processIdentifier))
        guard case .snapshotBegin? = recorded.dropFirst().first(where: { if case .defineString = $0 { false } else { true } })
        else {
            Issue.record("hello is not followed by a snapshot")
            return
        }

        let expected = steps(host.lines)
        #expect(expected.count == 4)
        let (observed, mirror) = replay(recorded, stoppingAt: expected.map(\.sequence))
        for (index, step) in expected.enumerated() {
            #expect(observed[index] == step.lines, "step \(index + 1)")
        }
        #expect(expected[2].lines.allSatisfy { !$0.contains(" A") }, "the detached branch was released")
        // Step 4 leaves a leaked node: detached, with its context (and the worker it keeps) alive.
        #expect(expected[3].lines.contains { $0.contains(" C ended detached [context,worker]") })
        #expect(mirror.goodbye == .normalExit)
        #expect(mirror.dropMarkers.isEmpty)
    }

    /// The writer names a node's frames by the wire ids it keeps per node descriptor: after the
    /// registry swept 1,500 unused descriptors and gave their ids to new names, the stream still
    /// names every node as the host does.
    @Test func nodesNamedAfterTheRegistrySweptItsNamesAreNamedRightOnTheWire() throws {
        let (host, recorded) = try hostRecorded(["names"])
        let sweeps = host.lines.first { $0.hasPrefix("SWEEPS ") }.flatMap { Int($0.dropFirst(7)) } ?? 0
        #expect(sweeps >= 1, "the host's registry swept its node descriptors")
        let expected = steps(host.lines)
        #expect(expected.count == 3)
        let (observed, mirror) = replay(recorded, stoppingAt: expected.map(\.sequence))
        for (index, step) in expected.enumerated() {
            #expect(observed[index] == step.lines, "step \(index + 1)")
        }
        #expect(expected.last?.lines.filter { $0.contains(" M") }.count == 10)
        #expect(mirror.dropMarkers.isEmpty)
    }

    @Test func aHostRunningBeforeTheCollectorConnectsWhenItAppears() throws {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("c.sock").path
        let host = try ChildProcess("test-host", ["wait-connect", "20"], environment: ["NODESCOPE_SOCKET": socket])
        #expect(host.waitForLine(prefix: "STARTED") != nil)
        Thread.sleep(forTimeInterval: 1.5)
        #expect(host.lines.contains { $0.hasPrefix("CONNECTED") } == false)

        let appeared = Date()
        let listener = try ChildProcess("test-listener", [socket, scratch.path])
        let connected = host.waitForLine(prefix: "CONNECTED", seconds: 10)
        #expect(connected != nil)
        // Generous: the agent looks twice a second; this only catches a missing reconnect loop.
        #expect(Date().timeIntervalSince(appeared) < 3)
        #expect(host.waitForExit() == 0)
        // The recording is complete once the listener saw the connection close.
        #expect(listener.waitForLine(prefix: "closed 1") != nil)
        listener.stop()

        let expected = steps(host.lines)
        let recorded = try messages(in: scratch.appendingPathComponent("connection-1.bin"))
        let (observed, mirror) = replay(recorded, stoppingAt: expected.map(\.sequence))
        #expect(mirror.snapshotCount == 1)
        #expect(mirror.goodbye == .normalExit)
        #expect(observed.first == expected.first?.lines)
        #expect(observed.first?.count == 2, "the snapshot carried the nodes attached before the collector appeared")
    }

    @Test func aStoppedCollectorNeverBlocksTheHostAndIsResyncedAfterward() throws {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("c.sock").path
        let listener = try ChildProcess("test-listener", [socket, scratch.path])
        #expect(listener.waitForLine(prefix: "listening") != nil)
        let host = try ChildProcess("test-host", ["churn", "8"], environment: ["NODESCOPE_SOCKET": socket])
        #expect(listener.waitForLine(prefix: "accepted 1") != nil)
        Thread.sleep(forTimeInterval: 1)
        listener.signal(SIGSTOP)
        Thread.sleep(forTimeInterval: 5)
        listener.signal(SIGCONT)
        #expect(host.waitForExit(seconds: 30) == 0)
        #expect(listener.waitForLine(prefix: "closed") != nil)
        listener.stop()

        // The host kept working while the listener was stopped: progress lines every 100 ms.
        let times = host.lines.filter { $0.hasPrefix("PROGRESS ") }.compactMap { UInt64($0.split(separator: " ")[1]) }
        let longestGap = zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 0
        #expect(times.count > 40)
        #expect(longestGap < 1_000, "the host stalled for \(longestGap) ms")

        let stats = try #require(host.lines.first { $0.hasPrefix("STATS") })
        #expect(!stats.contains("dropped=0"), "a stopped collector makes the queue overflow: \(stats)")

        // After the drops: a dropped marker, then a fresh snapshot, then the stream goes on.
        let recorded = try messages(in: scratch.appendingPathComponent("connection-1.bin"))
        let markerIndex = try #require(recorded.firstIndex { if case .dropped = $0 { true } else { false } })
        let next = recorded[(markerIndex + 1)...].first { if case .defineString = $0 { false } else { true } }
        guard case .snapshotBegin? = next else {
            Issue.record("the dropped marker is not followed by a snapshot")
            return
        }
        var mirror = WireMirror()
        for message in recorded { mirror.apply(message) }
        #expect(mirror.goodbye == .normalExit)
        #expect(mirror.canonicalLines.isEmpty, "the root ended and everything was released")
    }

    @Test func aKilledCollectorIsReplacedAndTheHostReconnects() throws {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("c.sock").path
        let first = try ChildProcess("test-listener", [socket, scratch.path])
        #expect(first.waitForLine(prefix: "listening") != nil)
        // The host churns long enough to outlive the second listener's start on a loaded machine
        // (a loaded run once started it after a 6 s host had ended its churn).
        let host = try ChildProcess("test-host", ["churn", "12"], environment: ["NODESCOPE_SOCKET": socket])
        #expect(first.waitForLine(prefix: "accepted 1") != nil)
        Thread.sleep(forTimeInterval: 1.5)
        first.signal(SIGKILL)
        first.waitForExit()
        Thread.sleep(forTimeInterval: 0.5)

        let secondDirectory = scratch.appendingPathComponent("second")
        try FileManager.default.createDirectory(at: secondDirectory, withIntermediateDirectories: true)
        let second = try ChildProcess("test-listener", [socket, secondDirectory.path])
        #expect(second.waitForLine(prefix: "listening") != nil)
        #expect(second.waitForLine(prefix: "accepted 1", seconds: 15) != nil)
        #expect(host.waitForExit(seconds: 30) == 0)
        second.stop()

        let stats = try #require(host.lines.first { $0.hasPrefix("STATS") })
        #expect(stats.contains("connections=2"), "\(stats)")
        let recorded = try messages(in: secondDirectory.appendingPathComponent("connection-1.bin"))
        guard case .hello? = recorded.first else {
            Issue.record("the new connection does not begin with hello")
            return
        }
        var mirror = WireMirror()
        for message in recorded { mirror.apply(message) }
        #expect(mirror.snapshotCount >= 1)
        #expect(mirror.goodbye == .normalExit)
    }

    /// Runs exit-after-detach against a listener; returns the recorded stream and how long
    /// the host lived after its last detach.
    private func exitAfterDetach(listenerOptions: [String], hostArguments: [String] = []) throws -> (
        mirror: WireMirror, heldSeconds: Double
    ) {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("c.sock").path
        let listener = try ChildProcess("test-listener", [socket, scratch.path] + listenerOptions)
        #expect(listener.waitForLine(prefix: "listening") != nil)
        let host = try ChildProcess("test-host", ["exit-after-detach"] + hostArguments, environment: ["NODESCOPE_SOCKET": socket])
        #expect(host.waitForLine(prefix: "DETACHED") != nil)
        let detached = Date()
        #expect(host.waitForExit() == 0)
        let held = Date().timeIntervalSince(detached)
        #expect(listener.waitForLine(prefix: "closed 1") != nil)
        listener.stop()
        var mirror = WireMirror()
        for message in try messages(in: scratch.appendingPathComponent("connection-1.bin")) { mirror.apply(message) }
        return (mirror, held)
    }

    @Test func whenAskedTheHostHoldsItsExitUntilGracesRunOut() throws {
        let (mirror, held) = try exitAfterDetach(listenerOptions: ["--hold-exit", "--grace-ms", "1000"])
        #expect(mirror.goodbye == .normalExit)
        // "Late" was released 300 ms after detach, before the goodbye: it is gone from the tree.
        #expect(!mirror.canonicalLines.contains { $0.contains(" Late ") })
        // "Leak" is still detached with its context alive: a definite leak.
        #expect(mirror.canonicalLines.contains { $0.contains(" Leak ended detached [context,worker]") })
        #expect(held > 0.8, "the exit was held for the grace (held \(held) s)")
        #expect(held < 5, "the hold is bounded by one grace plus the flush (held \(held) s)")
        // Before its goodbye, the host said what holds the leaked node's objects: its context is
        // held by the global array `leakedContexts` (element 0), its worker through the context:
        // an element of a global collection is a holder (a leak), not a global keeping a node.
        let leak = try #require(mirror.canonicalLines.first { $0.contains(" Leak ") }?.split(separator: " ").first)
        let frames = mirror.retainers.filter { String($0.nodeID) == leak }
        #expect(frames.count == 2, "\(mirror.retainers)")
        let lines = frames.map { frame in
            "\(frame.verdict): " + frame.hops.map { "\($0.holder) \($0.reference)\($0.isSuspect ? " *" : "")" }.joined(separator: " -> ")
        }
        #expect(lines.contains("holder: test_host.leakedContexts [0] *"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("holder: test_host.leakedContexts [0] * -> HostContext .workers[0]") }, "\(lines)")
    }

    @Test func withoutTheHoldTheHostExitsAtOnceAndPendingNodesStayUndecided() throws {
        // "Late" is released 30 s after its detach, and a hold would last the grace (6 s): an
        // exit that takes a loaded machine's seconds still tells the two apart.
        let (mirror, held) = try exitAfterDetach(listenerOptions: ["--grace-ms", "6000"], hostArguments: ["30000"])
        #expect(mirror.goodbye == .normalExit)
        #expect(mirror.canonicalLines.contains { $0.contains(" Late ended detached [context,worker]") })
        #expect(held < 5, "no hold was asked for (held \(held) s)")
    }
}
