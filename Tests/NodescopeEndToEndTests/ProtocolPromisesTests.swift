import Foundation
import NodescopeCollector
import NodescopeWire
import ProcessTestSupport
import Testing

/// The promises of docs/PROTOCOL.md that an independent host or client relies on, checked
/// against a real daemon through a real socket with bytes written from the document.
@Suite("Protocol promises, raw bytes against a real daemon", .serialized, .offTheCooperativePool)
struct ProtocolPromisesTests {
    typealias Raw = RawFrames

    /// Connects, sends `bytes`, and returns what the daemon answered before closing.
    private func exchange(_ bytes: [UInt8], on socket: String) throws -> (messages: [WireMessage], closed: Bool) {
        let connection = try #require(RawSocket(path: socket))
        defer { connection.close() }
        connection.send(bytes)
        let reply = connection.read(within: 2)
        return (Raw.decode(reply), connection.isClosedByPeer(within: 2))
    }

    @Test func aHelloOfAnotherVersionIsRefusedWithCode1WhateverItsLength() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        // The example of the conformance report (pid 4242, the layout of version 1), in a version
        // this collector does not speak: 4.
        let reported: [UInt8] =
            [0x20, 0, 0, 0, 0x01, 0x4E, 0x53, 0x43, 0x50, 0x04, 0x00, 0x01, 0x92, 0x10, 0, 0]
            + [UInt8](repeating: 0, count: 16) + [0x02, 0x00, 0x76, 0x34]
        let cases: [(bytes: [UInt8], version: UInt16)] = [
            (reported, 4),
            (Raw.hello(version: 0, pid: 1, monotonic: 1, name: "v0"), 0),
            (Raw.frame(0x01, Raw.magic + Raw.u16(4)), 4),  // a version-4 hello shorter than version 1's
            (Raw.hello(version: 4, pid: 1, monotonic: 1, name: "v4", extra: [1, 2, 3, 4, 5, 6, 7, 8]), 4),
        ]
        for (bytes, version) in cases {
            let (messages, closed) = try exchange(bytes, on: fixture.socket)
            guard case .helloRefused(let refusal)? = messages.first else {
                Issue.record("no helloRefused for version \(version): \(messages)")
                continue
            }
            #expect(refusal.code == .versionUnsupported)
            #expect(refusal.reason == "this collector speaks protocol versions 1 to 3, the peer sent \(version)")
            #expect(closed)
        }
    }

    @Test func aFirstFrameThatIsNotAHelloIsRefusedWithCode3() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let firsts: [[UInt8]] = [
            Raw.attached(1, at: 1, node: 1, kind: 1),
            Raw.defineString(1, "AppFlow"),
            Raw.request(1, command: 1),
            Raw.frame(0x02, Raw.u16(1) + Raw.u64(1_000_000_000) + [0] + Raw.u64(5)),  // helloAccepted
            Raw.frame(0x01, [0x4E, 0x53, 0x43, 0x51] + Raw.u16(1)),  // bad magic
            [0xFF, 0xFF, 0xFF, 0x7F, 0x13],  // cannot be framed
        ]
        for bytes in firsts {
            let (messages, closed) = try exchange(bytes, on: fixture.socket)
            guard case .helloRefused(let refusal)? = messages.first else {
                Issue.record("no helloRefused for \(bytes.prefix(5)): \(messages)")
                continue
            }
            #expect(refusal.code == .badHandshake)
            #expect(closed)
        }
    }

    /// A host that attaches node 1 with one object and detaches it at `detachedAt`.
    private func hostStream(pid: UInt32, name: String, start: UInt64, detachedAt: UInt64) -> [UInt8] {
        Raw.hello(pid: pid, monotonic: start, name: name)
            + Raw.defineString(1, "AppFlow") + Raw.defineString(2, "flow")
            + Raw.snapshotBegin(0, nodes: 0) + Raw.snapshotEnd(0)
            + Raw.attached(1, at: start + 1_000, node: 1, kind: 1)
            + Raw.objectAdded(2, at: start + 1_000, node: 1, index: 0, role: 2, type: 1)
            + Raw.detached(3, at: detachedAt, node: 1)
    }

    @Test func aGoodbyeOfADisabledAgentIsANormalEndWithUnverifiedVerdicts() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let start = Raw.now()
        let connection = try #require(RawSocket(path: fixture.socket))
        connection.send(hostStream(pid: 4301, name: "disabled", start: start, detachedAt: start + 2_000) + Raw.goodbye(2))
        #expect(connection.isClosedByPeer(within: 3), "the collector closes after a goodbye")
        connection.close()
        let processes = try fixture.waitForProcesses { $0.contains { $0.pid == 4301 && $0.endedAtNanos != nil } }
        #expect(processes.first { $0.pid == 4301 }?.endedNormally == true)
        #expect(try fixture.leaks("4301").map(\.verdict) == [.unverified])
    }

    @Test func aGoodbyeInsideASnapshotIsAViolationAndAnAbnormalEnd() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let bytes = Raw.hello(pid: 4302, monotonic: Raw.now(), name: "nested") + Raw.snapshotBegin(0, nodes: 0) + Raw.goodbye(1)
        let (_, closed) = try exchange(bytes, on: fixture.socket)
        #expect(closed)
        let processes = try fixture.waitForProcesses { $0.contains { $0.pid == 4302 && $0.endedAtNanos != nil } }
        #expect(processes.first { $0.pid == 4302 }?.endedNormally == false)
    }

    @Test func aViolationIsLoggedOnOneLineNamingThePeerAndTheReason() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let bytes =
            Raw.hello(pid: 4303, monotonic: Raw.now(), name: "raw-host")
            + Raw.snapshotBegin(0, nodes: 0) + Raw.snapshotEnd(0) + Raw.attached(1, at: 1, node: 1, kind: 9)
        let (_, closed) = try exchange(bytes, on: fixture.socket)
        #expect(closed)
        Thread.sleep(forTimeInterval: 0.3)
        let lines = fixture.daemon.stderr.split(separator: "\n").filter { $0.contains("closing host 4303 (raw-host)") }
        #expect(lines.count == 1, "\(fixture.daemon.stderr)")
        let line = String(lines.first ?? "")
        #expect(line.contains("nodeAttached kind uses string id 9 before its defineString"))
        // This test's pid is not 4303: the socket's own peer pid is named too.
        #expect(line.contains("[socket peer pid \(getpid())]"))
    }

    @Test func aSlowHelloShiftsNoReportedTimeAndNoDeadline() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let start = Raw.now()
        let grace: UInt64 = 1_000_000_000
        let detachedAt = start + 2_000
        let stream =
            hostStream(pid: 4304, name: "slow-hello", start: start, detachedAt: detachedAt)
            + Raw.heartbeat(detachedAt + grace)
        let connection = try #require(RawSocket(path: fixture.socket))
        defer { connection.close() }
        // The hello arrives in three pieces over 500 ms.
        connection.send(Array(stream[0..<7]))
        Thread.sleep(forTimeInterval: 0.25)
        connection.send(Array(stream[7..<20]))
        Thread.sleep(forTimeInterval: 0.25)
        connection.send(Array(stream[20...]))
        let processes = try fixture.waitForProcesses { $0.contains { $0.pid == 4304 && $0.leaks == 1 } }
        #expect(processes.first { $0.pid == 4304 }?.leaks == 1)
        let leak = try #require(try fixture.leaks("4304").first)
        #expect(leak.detachedAtNanos == detachedAt)
        #expect(leak.flaggedAtNanos == detachedAt + grace)
        let (_, treeJSON) = try fixture.run(["tree", "4304", "--json"])
        let tree = try JSONDecoder().decode(TreeView.self, from: Data(treeJSON.utf8))
        #expect(tree.nodes.first?.attachedAtNanos == start + 1_000)
    }

    @Test(arguments: [104, 107])
    func socketPathsUpTo107BytesWork(length: Int) throws {
        let directory = makeScratchDirectory().path
        let name = String(repeating: "s", count: length - directory.utf8.count - 1)
        let socket = directory + "/" + name
        #expect(socket.utf8.count == length)
        let fixture = try DaemonFixture(socket: socket)
        defer { fixture.stop() }
        #expect(fixture.daemon.process.isRunning, "\(fixture.daemon.stderr)")
        let host = try ChildProcess("sample-nodes", ["--quiet"], environment: ["NODESCOPE_SOCKET": socket])
        #expect(host.waitForExit() == 0)
        let processes = try fixture.waitForProcesses { $0.contains { $0.processName == "sample-nodes" && $0.endedAtNanos != nil } }
        #expect(processes.first { $0.processName == "sample-nodes" }?.endedNormally == true)
    }

    @Test func aVersion2HostExplainsItsLeakAndTreeAndLeaksShowIt() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let start = Raw.now() - 5_000_000_000
        let hops: [(kind: UInt8, node: UInt64, holder: String, reference: String, suspect: Bool)] = [
            (1, 1, "AppFlowImp", ".session", false), (3, 0, "Session", ".listeners[0]", true),
            (6, 0, "closure context", "capture", false),
        ]
        let stream =
            Raw.hello(version: 2, pid: 4306, monotonic: start, name: "explains")
            + Raw.defineString(1, "AppFlow") + Raw.defineString(2, "context") + Raw.defineString(3, "ProfileContextImp")
            + Raw.snapshotBegin(0, nodes: 0) + Raw.snapshotEnd(0)
            + Raw.attached(1, at: start, node: 1, kind: 1)
            + Raw.attached(2, at: start, node: 2, parent: 1, kind: 3)
            + Raw.objectAdded(3, at: start, node: 2, index: 0, role: 2, type: 3)
            + Raw.detached(4, at: start + 1_000, node: 2)
            + Raw.heartbeat(start + 2_000_000_000)
            + Raw.retainers(node: 2, object: 0, verdict: 2, hops: hops)
        let connection = try #require(RawSocket(path: fixture.socket))
        defer { connection.close() }
        connection.send(stream)
        guard case .helloAccepted(let accepted)? = Raw.decode(connection.read(upTo: 24, within: 2)).first else {
            Issue.record("no helloAccepted")
            return
        }
        #expect(accepted.protocolVersion == 2)
        var leaks: [LeakRecord] = []
        let deadline = Date().addingTimeInterval(10)
        while leaks.first?.retainers.isEmpty ?? true, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            leaks = try fixture.leaks("4306")
        }
        let hopNames = leaks.first?.retainers.first?.hops.map { "\($0.holder) \($0.reference)" }
        #expect(hopNames == ["AppFlowImp .session", "Session .listeners[0]", "closure context capture"])
        #expect(leaks.first?.retainers.first?.hops.first?.holderKind == .attachedNodeObject)

        let (_, tree) = try fixture.run(["tree", "4306"])
        #expect(tree.contains("◀ held by Session.listeners[0]"), "\(tree)")
        let (_, json) = try fixture.run(["tree", "4306", "--json"])
        let view = try JSONDecoder().decode(TreeView.self, from: Data(json.utf8))
        #expect(view.nodes.first { $0.id == 2 }?.retainers?.first?.suspectIndex == 1)
        #expect(view.nodes.first { $0.id == 1 }?.retainers == nil)
        let (_, report) = try fixture.run(["leaks", "4306"])
        #expect(report.contains("    held by  AppFlowImp (attached node)\n"), "\(report)")
        #expect(report.contains("─ .listeners[0] ─▶ closure context   ◀ suspect: the reference to cut"))
    }

    @Test func aHostThatGaveUpBeforeTheAnswerIsNeverListed() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        fixture.daemon.signal(SIGSTOP)
        let connection = try #require(RawSocket(path: fixture.socket))
        connection.send(Raw.hello(pid: 4305, monotonic: Raw.now(), name: "gave-up"))
        connection.close()
        Thread.sleep(forTimeInterval: 0.2)
        fixture.daemon.signal(SIGCONT)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try fixture.processes().allSatisfy { $0.pid != 4305 })
    }

    /// The collector's own check (SO_PEERCRED): a peer of another user that gets through the
    /// file permissions (opened on purpose here) and skips the client-side checks (a raw socket)
    /// is refused with code 2. Needs root, to speak as `nobody`.
    @Test(
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func aPeerOfAnotherUserIsRefusedByTheCollectorWithCode2() throws {
        let scratch = URL(fileURLWithPath: "/var/tmp/nsuid-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let socket = scratch.appendingPathComponent("d.sock").path
        let fixture = try DaemonFixture(socket: socket)
        defer { fixture.stop() }
        chmod(scratch.path, 0o755)
        chmod(socket, 0o666)
        let hello = Raw.hello(role: 2, pid: 1, monotonic: 1, name: "other").map { String($0) }.joined(separator: ",")
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            s.sendall(bytes([\(hello)]))
            s.settimeout(3)
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk: break
                data += chunk
            print(data.hex())
            """
        let other = try ChildProcess(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, socket],
            absolutePath: true)
        #expect(other.waitForExit() == 0, "\(other.stderr)")
        let hex = other.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let bytes = stride(from: 0, to: hex.count, by: 2).compactMap { offset -> UInt8? in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)
        }
        guard case .helloRefused(let refusal)? = Raw.decode(bytes).first else {
            Issue.record("no refusal for a peer of another user: \(hex)")
            return
        }
        #expect(refusal.code == .wrongUser)
    }
}
