import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

/// The daemon as a user runs it: real `nodescope` processes, real hosts, one real socket.
@Suite("Daemon end to end", .serialized, .offTheCooperativePool)
struct DaemonEndToEndTests {
    /// Runs `nodescope ARGS` to completion; returns its status and stdout.
    private func nodescope(_ arguments: [String], seconds: Double = 30) throws -> (status: Int32, output: String) {
        let process = try ChildProcess("nodescope", arguments)
        let status = process.waitForExit(seconds: seconds)
        return (status, process.stdout)
    }

    private func startDaemon(_ socket: String, grace: String = "1s") throws -> ChildProcess {
        let daemon = try ChildProcess("nodescope", ["daemon", "--socket", socket, "--grace", grace, "--log-level", "warning"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: socket), (try? nodescope(["ps", "--socket", socket]).status) == 0 {
                return daemon
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Issue.record("the daemon did not start on \(socket)")
        return daemon
    }

    private func treeView(_ process: String, socket: String) throws -> TreeView {
        let (status, output) = try nodescope(["tree", process, "--json", "--socket", socket])
        #expect(status == 0, "nodescope tree \(process) failed")
        return try JSONDecoder().decode(TreeView.self, from: Data(output.utf8))
    }

    /// One line per node, comparable with test-host's canonical lines: state only while
    /// attached (a detached node's status is the collector's verdict, not a host state).
    private func canonical(_ view: TreeView) -> [String] {
        // The host forgets a node once it is detached and fully released; the collector keeps
        // such a node as a placeholder while a ghost hangs under it, and keeps late releases.
        view.nodes.filter { !$0.isPlaceholder && $0.status != .lateRelease }.sorted { $0.id < $1.id }.map { node in
            let detached = [.detached, .leaked, .unverified].contains(node.status)
            let state = detached || node.status == .attached ? "-" : node.status.rawValue
            let alive = node.objects.filter(\.isAlive).map(\.role).joined(separator: ",")
            return "\(node.id) \(node.parent ?? 0) \(node.kind) \(node.name) \(state) "
                + "\(detached ? "detached" : "attached") [\(alive)]"
        }
    }

    /// The host keeps a detached, fully released node while a ghost hangs below it; the
    /// collector shows the same node as a placeholder, which `canonical(_:)` leaves out.
    private func isReleasedAncestor(hostLine line: String) -> Bool {
        line.hasSuffix(" detached []")
    }

    private func canonical(hostLine line: String) -> String {
        var fields = line.split(separator: " ").map(String.init)
        if fields.count >= 6, fields[5] == "detached" { fields[4] = "-" }
        return fields.joined(separator: " ")
    }

    @Test func psTreeAttachAndLeaksShowWhatTheHostHasIncludingItsLeak() throws {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("d.sock").path
        let daemon = try startDaemon(socket)
        defer { daemon.stop() }
        let host = try ChildProcess("test-host", ["serve", "60"], environment: ["NODESCOPE_SOCKET": socket])
        defer { host.stop() }
        #expect(host.waitForLine(prefix: "DETACHED") != nil)
        let pid = "\(host.process.processIdentifier)"
        Thread.sleep(forTimeInterval: 0.3)

        let ps = try nodescope(["ps", "--socket", socket])
        #expect(ps.status == 0)
        #expect(ps.output.contains(pid) && ps.output.contains("test-host"))

        let tree = try nodescope(["tree", pid, "--socket", socket])
        #expect(tree.status == 0)
        for name in ["Root", "A", "A1", "A1x", "A2", "B", "Leaky"] { #expect(tree.output.contains(name), "\(name) in\n\(tree.output)") }

        let attach = try ChildProcess("nodescope", ["attach", pid, "--socket", socket])
        #expect(attach.waitForLine(prefix: "test-host [pid \(pid)]") != nil)

        // The leak is flagged once the grace (1 s) has run out, within 100 ms of it.
        Thread.sleep(forTimeInterval: 1.3)
        let leaksJSON = try nodescope(["leaks", pid, "--format", "json", "--socket", socket])
        let leaks = try JSONDecoder().decode(LeaksJSON.self, from: Data(leaksJSON.output.utf8)).leaks
        let leak = try #require(leaks.first { $0.path.last == "Leaky" })
        #expect(leak.verdict == .leaked)
        #expect(leak.path == ["Root", "Leaky"])
        #expect(leak.aliveObjects.map(\.role).sorted() == ["context", "worker"])
        let delay = Double(leak.flaggedAtNanos - leak.detachedAtNanos) / 1e9
        #expect(delay >= 1.0 && delay <= 1.1, "flagged \(delay) s after detach")
        let leaksText = try nodescope(["leaks", pid, "--socket", socket])
        #expect(leaksText.output.contains("LEAK  Root › Leaky"))
        let junit = try nodescope(["leaks", pid, "--format", "junit", "--socket", socket])
        #expect(junit.output.contains("<failure") && junit.output.contains("Leaky"))
        let sarif = try nodescope(["leaks", pid, "--format", "sarif", "--socket", socket])
        let sarifDocument = try JSONSerialization.jsonObject(with: Data(sarif.output.utf8)) as? [String: Any]
        #expect(sarifDocument?["version"] as? String == "2.1.0")

        // attach shows the tree, then the leak as it is flagged, and ends when the host goes away.
        // (On a loaded machine attach may subscribe after the flag, 1 s after the detach: then
        // the tree it starts from marks the node leaked.)
        host.signal(SIGTERM)
        #expect(host.waitForExit() == 0)
        #expect(attach.waitForExit(seconds: 10) == 0)
        #expect(
            attach.stdout.contains("LEAK  Root › Leaky") || attach.stdout.contains("└─ Leaky Flow  ✖ LEAKED"), "\(attach.stdout)")
        #expect(attach.stdout.contains("the process exited"))
    }

    @Test func aRestartedDaemonGetsTheSameTreeBack() throws {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("d.sock").path
        var daemon = try startDaemon(socket)
        let host = try ChildProcess("test-host", ["serve", "60"], environment: ["NODESCOPE_SOCKET": socket])
        defer { host.stop() }
        #expect(host.waitForLine(prefix: "DETACHED") != nil)
        let pid = "\(host.process.processIdentifier)"
        Thread.sleep(forTimeInterval: 1.3)
        let before = canonical(try treeView(pid, socket: socket))
        #expect(before.count == 7)

        daemon.signal(SIGKILL)
        daemon.waitForExit()
        #expect(FileManager.default.fileExists(atPath: socket), "a killed daemon leaves its socket file behind")
        daemon = try startDaemon(socket)
        defer { daemon.stop() }
        // tree waits (--wait) for the host to reconnect to the new daemon.
        let after = canonical(try treeView(pid, socket: socket))
        #expect(after == before)
        let leaks = try JSONDecoder().decode(
            LeaksJSON.self, from: Data(try nodescope(["leaks", pid, "--format", "json", "--socket", socket]).output.utf8)
        ).leaks
        #expect(leaks.map(\.verdict) == [.leaked], "the new daemon judges the ghost from its original detach time")
    }

    /// The leak's retainer path, once the host has sent it (its analysis runs after the grace).
    private func explainedLeaks(_ pid: String, socket: String, seconds: Double = 30) throws -> [LeakRecord] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let output = try nodescope(["leaks", pid, "--format", "json", "--socket", socket]).output
            let leaks = try JSONDecoder().decode(LeaksJSON.self, from: Data(output.utf8)).leaks
            if !leaks.isEmpty, leaks.allSatisfy({ !$0.retainers.isEmpty }) || Date() > deadline { return leaks }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }

    @Test func aRestartedDaemonLearnsTheRetainerPathsFoundBefore() throws {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("d.sock").path
        var daemon = try startDaemon(socket)
        let host = try ChildProcess("test-host", ["serve", "60"], environment: ["NODESCOPE_SOCKET": socket])
        defer { host.stop() }
        #expect(host.waitForLine(prefix: "DETACHED") != nil)
        let pid = "\(host.process.processIdentifier)"
        let before = try explainedLeaks(pid, socket: socket)
        let paths = before.flatMap(\.retainers)
        try #require(!paths.isEmpty, "the host explained its leak")
        #expect(paths.contains { $0.hops.contains { $0.holder.contains("leakedContexts") } }, "\(paths)")

        daemon.signal(SIGKILL)
        daemon.waitForExit()
        daemon = try startDaemon(socket)
        defer { daemon.stop() }
        // The host analyses each leak once; it sends what it found after its new snapshot.
        let after = try explainedLeaks(pid, socket: socket, seconds: 10)
        #expect(after.flatMap(\.retainers) == paths)
        #expect(after.map(\.fingerprint) == before.map(\.fingerprint))
    }

    @Test func whyAsksTheHostAboutANodeWithinItsGrace() throws {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("d.sock").path
        let daemon = try startDaemon(socket, grace: "120s")
        defer { daemon.stop() }
        let host = try ChildProcess("test-host", ["serve", "60"], environment: ["NODESCOPE_SOCKET": socket])
        defer { host.stop() }
        #expect(host.waitForLine(prefix: "DETACHED") != nil)
        let pid = "\(host.process.processIdentifier)"

        let (status, output) = try nodescope(["why", pid, "Root/Leaky", "--socket", socket], seconds: 60)
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Root › Leaky  (Flow)  ⧗ detached, awaiting release") == true, "\(output)")
        #expect(output.contains("test_host.leakedContexts"), "the holder is named: \(output)")
        // Nothing was flagged: the grace has two minutes to go.
        #expect(
            try JSONDecoder().decode(
                LeaksJSON.self,
                from: Data(try nodescope(["leaks", pid, "--format", "json", "--socket", socket, "--wait", "0"]).output.utf8)
            ).leaks.isEmpty)

        // JSON carries the same path as data.
        let json = try nodescope(["why", pid, "Root/Leaky", "--json", "--socket", socket], seconds: 60)
        #expect(json.status == 0)
        let explanation = try JSONDecoder().decode(ExplanationBody.self, from: Data(json.output.utf8))
        #expect(explanation.outcome == "explained")
        #expect(explanation.nodes.first?.retainers?.isEmpty == false)

        // An attached node, a path that names nothing: a clear error and exit 1.
        let attached = try ChildProcess("nodescope", ["why", pid, "Root", "--socket", socket])
        #expect(attached.waitForExit(seconds: 30) == 1)
        #expect(attached.stderr.contains("is attached"), "\(attached.stderr)")
        let nothing = try ChildProcess("nodescope", ["why", pid, "Root/Nope", "--socket", socket])
        #expect(nothing.waitForExit(seconds: 30) == 1)
        #expect(nothing.stderr.contains("no node at Root/Nope"), "\(nothing.stderr)")
    }

    /// The body of `explain` as the tests read it.
    private struct ExplanationBody: Decodable {
        var outcome: String
        var nodes: [NodeInfo]
    }

    @Test func thirtyTwoHostsWithTenThousandRandomEventsEach() throws {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("d.sock").path
        let daemon = try startDaemon(socket, grace: "60s")
        defer { daemon.stop() }
        let hosts = try (1...32).map { seed in
            try ChildProcess("test-host", ["random", "\(seed)", "10000"], environment: ["NODESCOPE_SOCKET": socket])
        }
        defer { hosts.forEach { $0.stop() } }
        for host in hosts { #expect(host.waitForLine(prefix: "READY", seconds: 120) != nil) }

        for host in hosts {
            let expected = host.lines.filter { $0.hasPrefix("FINAL ") }.map { String($0.dropFirst(6)) }
                .filter { !isReleasedAncestor(hostLine: $0) }.map { canonical(hostLine: $0) }
            let view = try treeView("\(host.process.processIdentifier)", socket: socket)
            #expect(canonical(view) == expected, "host \(host.process.processIdentifier)")
        }
        for host in hosts { host.signal(SIGTERM) }
        for host in hosts { #expect(host.waitForExit() == 0) }
    }

    @Test func hostileBytesCloseOnlyTheirOwnConnection() throws {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("d.sock").path
        let daemon = try startDaemon(socket)
        defer { daemon.stop() }
        let host = try ChildProcess("test-host", ["serve", "60"], environment: ["NODESCOPE_SOCKET": socket])
        defer { host.stop() }
        #expect(host.waitForLine(prefix: "DETACHED") != nil)
        let pid = "\(host.process.processIdentifier)"
        Thread.sleep(forTimeInterval: 0.3)
        let before = canonical(try treeView(pid, socket: socket))

        let helloBytes: [UInt8] =
            [0x1B, 0, 0, 0, 0x01] + Array("NSCP".utf8) + [1, 0, 1, 1, 0, 0, 0]
            + [UInt8](repeating: 0, count: 16) + [1, 0, 0x68]
        var generator = SystemRandomNumberGenerator()
        var attacks: [[UInt8]] = [
            [0xFF, 0xFF, 0xFF, 0xFF, 0x01],  // a frame far over the limit
            [0, 0, 0, 0],  // a zero length
            [0x05, 0, 0, 0, 0x77, 1, 2, 3, 4],  // an unknown type
            helloBytes + [0x02, 0, 0, 0, 0x19, 0x09],  // a host hello, then an invalid goodbye reason
            helloBytes + [0x09, 0, 0, 0, 0x16] + [UInt8](repeating: 0xAB, count: 8),  // a truncated detach
        ]
        for _ in 0..<20 {
            attacks.append((0..<Int.random(in: 1...512, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        let connections = attacks.compactMap { bytes -> RawSocket? in
            let connection = RawSocket(path: socket)
            connection?.send(bytes)
            return connection
        }
        #expect(connections.count == attacks.count)
        // The five crafted attacks are definite violations; random bytes may be an incomplete frame.
        for connection in connections.prefix(5) { #expect(connection.isClosedByPeer(within: 3)) }
        connections.forEach { $0.close() }

        // The daemon is alive, the host untouched, and its tree unchanged.
        #expect(daemon.process.isRunning)
        #expect(canonical(try treeView(pid, socket: socket)) == before)
    }

    /// A client of another user is turned away (SO_PEERCRED, on both sides) even when the
    /// socket's mode lets it connect. Needs root, to run the client as `nobody`.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func aPeerOfAnotherUserIsRefused() throws {
        // Not under /tmp: on some machines /tmp itself is private to root.
        let scratch = URL(fileURLWithPath: "/var/tmp/nsuid-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let socket = scratch.appendingPathComponent("d.sock").path
        let daemon = try startDaemon(socket)
        defer { daemon.stop() }
        // Open the door on purpose: the directory and socket are private by default.
        chmod(scratch.path, 0o755)
        chmod(socket, 0o666)
        let nodescope = ChildProcess.binDirectory.appendingPathComponent("nodescope").path
        let other = try ChildProcess(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", nodescope, "ps", "--socket", socket],
            absolutePath: true)
        // The client refuses first: the collector runs as root, not as nobody (SO_PEERCRED).
        #expect(other.waitForExit() != 0)
        #expect(other.stderr.contains("runs as uid 0, not as you (uid 65534)"), "\(other.stderr)")

        // With the socket's own mode restored, the same user is told whose socket it is.
        chmod(socket, 0o600)
        let denied = try ChildProcess(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", nodescope, "ps", "--socket", socket],
            absolutePath: true)
        #expect(denied.waitForExit() == 1)
        #expect(denied.stderr.contains("belongs to another user"), "\(denied.stderr)")
    }
}
