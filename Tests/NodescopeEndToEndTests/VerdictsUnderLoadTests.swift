import Foundation
import NodescopeCollector
import NodescopeWire
import ProcessTestSupport
import SeededRandom
import Testing

/// Verdicts that depend only on the hosts' streams, and a daemon that stays up and bounded
/// whatever its peers do: real daemons, real sockets, real hosts.
@Suite("Verdicts under load and bounded resources", .serialized, .offTheCooperativePool)
struct VerdictsUnderLoadTests {
    typealias Raw = RawFrames

    /// Once made the daemon trap (an unsigned subtraction on two clock reads while a timer was
    /// rescheduled): 30 000 nodes whose deadlines are 20–200 µs apart. Half are released within
    /// their grace; the host then vouches for a time past every deadline.
    @Test func deadlinesMicrosecondsApartAreJudgedExactlyWithoutATrap() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        var random = SplitMix64(seed: 11)
        let start = Raw.now()
        var bytes =
            Raw.hello(pid: 4401, monotonic: start, name: "dense") + Raw.defineString(1, "Item") + Raw.defineString(2, "flow")
            + Raw.snapshotBegin(0, nodes: 0) + Raw.snapshotEnd(0)
        var sequence: UInt64 = 0
        var time = start
        let count: UInt64 = 30_000
        for node in 1...count {
            time += UInt64(20_000 + random.below(180_000))
            sequence += 1
            bytes += Raw.attached(sequence, at: time, node: node, kind: 1)
            sequence += 1
            bytes += Raw.objectAdded(sequence, at: time, node: node, index: 0, role: 2, type: 1)
            sequence += 1
            bytes += Raw.detached(sequence, at: time, node: node)
            if node % 2 == 0 {
                sequence += 1
                bytes += Raw.released(sequence, at: time + 900_000_000, node: node, index: 0)
            }
            // Heartbeats as the agent sends them, vouching for the time reached so far.
            if node % 500 == 0 { bytes += Raw.heartbeat(time) }
        }
        bytes += Raw.heartbeat(time + 1_000_000_001)
        let connection = try #require(RawSocket(path: fixture.socket))
        defer { connection.close() }
        connection.send(bytes)
        let processes = try fixture.waitForProcesses(seconds: 30) { $0.first { $0.pid == 4401 }?.leaks == Int(count / 2) }
        let summary = try #require(processes.first { $0.pid == 4401 })
        #expect(summary.leaks == Int(count / 2))
        #expect(fixture.daemon.process.isRunning)
        let late = try fixture.leaks("4401").filter { $0.verdict != .leaked }
        #expect(late.isEmpty, "\(late.count) verdicts other than leaked")
    }

    /// A collector stopped (SIGSTOP) while a clean app runs and exits: once it goes on, it reads
    /// everything late, and judges it in the app's time: no leak, no late release.
    @Test func aStalledCollectorJudgesACleanAppClean() throws {
        // A grace of 2 s: the stop (3 s) outlasts it, and the app's own teardown, on a machine
        // busy with the rest of the suite, stays inside it.
        let fixture = try DaemonFixture(arguments: ["--grace", "2s"])
        defer { fixture.stop() }
        let host = try ChildProcess(
            "sample-nodes", ["--quiet", "--pace", "150", "--nodes", "800"],
            environment: ["NODESCOPE_SOCKET": fixture.socket, "NODESCOPE_EXIT_FLUSH": "20"])
        Thread.sleep(forTimeInterval: 0.5)
        fixture.daemon.signal(SIGSTOP)
        Thread.sleep(forTimeInterval: 3)
        fixture.daemon.signal(SIGCONT)
        #expect(host.waitForExit(seconds: 60) == 0)
        let pid = "\(host.process.processIdentifier)"
        let processes = try fixture.waitForProcesses(seconds: 20) { list in
            list.contains { "\($0.pid)" == pid && $0.endedAtNanos != nil }
        }
        let summary = try #require(processes.first { "\($0.pid)" == pid })
        // A drain that fills the socket just as the collector comes back must still get its
        // goodbye through (it once waited 50 ms for it, and the session ended abnormally).
        let sessions = processes.filter { "\($0.pid)" == pid }.map { "session \($0.session): \($0.end.map(\.rawValue) ?? "open")" }
        #expect(summary.endedNormally == true, "\(sessions)")
        let verdicts = try fixture.leaks(pid).map(\.verdict)
        #expect(verdicts.isEmpty, "a clean app got \(verdicts)")
    }

    /// A collector stopped for the whole of a large app's life and exit: the socket fills, and
    /// the exit flush runs out its bound. The goodbye that says so still goes (the agent makes
    /// room for it in the socket's buffer), so the process reads as exited with its flush cut,
    /// as it was, and not as ended abnormally (a crash), as it did before.
    @Test func aCollectorStoppedAcrossAnExitStillHearsThatTheFlushWasCut() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let host = try ChildProcess(
            "sample-nodes", ["--quiet", "--pace", "300", "--nodes", "20000"],
            environment: ["NODESCOPE_SOCKET": fixture.socket, "NODESCOPE_EXIT_FLUSH": "1"])
        defer { host.stop() }
        let pid = "\(host.process.processIdentifier)"
        _ = try fixture.waitForProcesses(seconds: 30) { list in list.contains { "\($0.pid)" == pid } }
        fixture.daemon.signal(SIGSTOP)
        let status = host.waitForExit(seconds: 120)
        fixture.daemon.signal(SIGCONT)
        #expect(status == 0, "\(host.stderr)")
        let processes = try fixture.waitForProcesses(seconds: 30) { list in
            list.contains { "\($0.pid)" == pid && $0.endedAtNanos != nil }
        }
        let summary = try #require(processes.first { "\($0.pid)" == pid })
        #expect(summary.end == .exitFlushCut, "ended \(summary.end.map(\.rawValue) ?? "open")")
        #expect(summary.endedNormally == true)
        let ps = try fixture.run(["ps"]).output
        #expect(ps.contains("exit flush cut"), "\(ps)")
        #expect(!ps.contains("abnormally"), "\(ps)")
    }

    /// 400 requests for a large tree from a client that never reads: the daemon stops answering
    /// it past its bound and disconnects it, instead of buffering every answer.
    @Test func aClientThatDoesNotReadIsDisconnectedAndMemoryStaysBounded() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let nodes: UInt64 = 20_000
        var bytes =
            Raw.hello(pid: 4402, monotonic: Raw.now(), name: "big") + Raw.defineString(1, "FeedItemFlow")
            + Raw.defineString(2, "flow") + Raw.defineString(3, "FeedItemFlowImp")
            + Raw.snapshotBegin(0, nodes: 0) + Raw.snapshotEnd(0)
        for node in 1...nodes {
            bytes += Raw.attached(node * 2 - 1, at: 1, node: node, parent: node > 1 ? 1 : 0, kind: 1)
            bytes += Raw.objectAdded(node * 2, at: 1, node: node, index: 0, role: 2, type: 3)
        }
        let host = try #require(RawSocket(path: fixture.socket))
        defer { host.close() }
        host.send(bytes)
        _ = try fixture.waitForProcesses { $0.first { $0.pid == 4402 }?.liveNodes == Int(nodes) }
        let before = fixture.residentBytes

        let client = try #require(RawSocket(path: fixture.socket))
        defer { client.close() }
        var requests = Raw.hello(role: 2, pid: 4403, monotonic: Raw.now(), name: "greedy")
        for id in 1...400 { requests += Raw.request(UInt32(id), command: 2, argument: "4402") }
        client.send(requests)
        Thread.sleep(forTimeInterval: 4)
        let after = fixture.residentBytes
        #expect(fixture.daemon.process.isRunning)
        #expect(client.isClosedByPeerUnread(within: 90), "the daemon keeps a client that does not read")
        let growth = after - before
        // Without the bound this grew by 1.6 GB; the bound lets 64 MiB of answers wait.
        #expect(growth < 400 << 20, "the daemon grew by \(growth >> 20) MiB")
        print("daemon memory: \(before >> 20) MiB before, \(after >> 20) MiB with a client that does not read")
    }

    @Test func beyondTheConnectionLimitAHelloIsRefusedAsBusy() throws {
        let fixture = try DaemonFixture(arguments: ["--max-clients", "4"])
        defer { fixture.stop() }
        var open: [RawSocket] = []
        defer { open.forEach { $0.close() } }
        for index in 0..<4 {
            let client = try #require(RawSocket(path: fixture.socket))
            client.send(Raw.hello(role: 2, pid: 100 + UInt32(index), monotonic: Raw.now(), name: "c\(index)"))
            guard case .helloAccepted? = Raw.decode(client.read(upTo: 24, within: 2)).first else {
                Issue.record("client \(index) was not accepted")
                return
            }
            open.append(client)
        }
        let extra = try #require(RawSocket(path: fixture.socket))
        defer { extra.close() }
        extra.send(Raw.hello(role: 2, pid: 200, monotonic: Raw.now(), name: "one-too-many"))
        guard case .helloRefused(let refusal)? = Raw.decode(extra.read(within: 2)).first else {
            Issue.record("no refusal beyond the limit")
            return
        }
        #expect(refusal.code == .busyOrOther)
        #expect(refusal.reason.contains("limit of 4 client connections"))
        // Once one goes, there is room again.
        open.removeFirst().close()
        Thread.sleep(forTimeInterval: 0.3)
        let again = try #require(RawSocket(path: fixture.socket))
        defer { again.close() }
        again.send(Raw.hello(role: 2, pid: 201, monotonic: Raw.now(), name: "room-again"))
        guard case .helloAccepted? = Raw.decode(again.read(upTo: 24, within: 2)).first else {
            Issue.record("no room after a client left")
            return
        }
    }
}
