import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

/// Issue 12, as another local user would try it: real daemons, real hosts, real listeners, and
/// a second account (`nobody`, through setpriv) when the suite runs as root. Each test names
/// the point of the issue that it covers.
@Suite("Nobody else's socket", .serialized, .offTheCooperativePool)
struct SocketTrustEndToEndTests {
    static let canActAsNobody = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    private static let nobody: uid_t = 65534

    /// A directory for one test, open for `nobody` to pass through.
    private func scratch() -> String {
        let url = makeScratchDirectory()
        chmod(url.path, 0o755)
        return url.path
    }

    private func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Runs a product of this package to completion, as us or as nobody.
    private func run(
        _ executable: String, _ arguments: [String], asNobody: Bool = false, environment: [String: String] = [:],
        seconds: Double = 20
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = try start(executable, arguments, asNobody: asNobody, environment: environment)
        let status = process.waitForExit(seconds: seconds)
        return (status, process.stdout, process.stderr)
    }

    private func start(
        _ executable: String, _ arguments: [String], asNobody: Bool = false, environment: [String: String] = [:]
    ) throws -> ChildProcess {
        guard asNobody else { return try ChildProcess(executable, arguments, environment: environment) }
        let path = ChildProcess.binDirectory.appendingPathComponent(executable).path
        return try ChildProcess(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", path] + arguments,
            environment: environment, absolutePath: true)
    }

    private func startDaemon(_ socket: String) throws -> ChildProcess {
        let daemon = try ChildProcess("nodescope", ["daemon", "--socket", socket, "--log-level", "warning"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: socket), (try? run("nodescope", ["ps", "--socket", socket]).status) == 0 {
                return daemon
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Issue.record("the daemon did not start on \(socket): \(daemon.stderr)")
        return daemon
    }

    private func startListener(_ socket: String, output: String, asNobody: Bool) throws -> ChildProcess {
        let listener = try start("test-listener", [socket, output], asNobody: asNobody)
        #expect(listener.waitForLine(prefix: "listening") != nil, "test-listener: \(listener.stderr)")
        return listener
    }

    /// Runs a host that waits 2 s for a collector at `socket`; expects it never connected, said
    /// why in one line (containing `reason`), and sent nothing.
    private func expectHostRefuses(_ socket: String, reason: String) throws {
        let host = try run("test-host", ["wait-connect", "2"], environment: ["NODESCOPE_SOCKET": socket])
        #expect(host.status == 3, "the host connected to \(socket): \(host.stdout)")
        let lines = host.stderr.split(separator: "\n").filter { $0.hasPrefix("[nodescope]") }
        #expect(lines.count == 1, "one line, once, for several attempts: \(host.stderr)")
        #expect(lines.first?.contains("not connecting to \(socket)") == true, "\(host.stderr)")
        #expect(lines.first?.contains(reason) == true, "\(host.stderr)")
    }

    /// Expects `nodescope ps` to refuse the socket in one line with exit 1.
    private func expectClientRefuses(_ socket: String, reason: String) throws {
        let ps = try run("nodescope", ["ps", "--socket", socket])
        #expect(ps.status == 1, "ps on \(socket): \(ps.stdout) \(ps.stderr)")
        #expect(ps.stderr.split(separator: "\n").count == 1, "\(ps.stderr)")
        #expect(ps.stderr.contains(reason), "\(ps.stderr)")
        #expect(!ps.stdout.contains("PID"))
    }

    /// Expects `nodescope daemon` to refuse to listen on `socket` (exit 2, one line).
    private func expectDaemonRefuses(_ socket: String, reason: String) throws {
        let daemon = try run("nodescope", ["daemon", "--socket", socket, "--log-level", "warning"], seconds: 10)
        #expect(daemon.status == 2, "the daemon listened on \(socket)")
        #expect(daemon.stderr.contains("will not listen"), "\(daemon.stderr)")
        #expect(daemon.stderr.contains(reason), "\(daemon.stderr)")
    }

    // MARK: 1. A socket directory of another user, sticky or not

    @Test(.enabled(if: canActAsNobody, "needs root and /usr/bin/setpriv, to act as a second user (nobody): skipped"))
    func point1_aStickySocketDirectoryOfAnotherUserIsRefusedByHostsClientsAndTheDaemon() throws {
        let base = scratch()
        defer { remove(base) }
        for mode: mode_t in [0o1777, 0o1700] {
            let directory = base + "/d" + String(mode, radix: 8)
            mkdir(directory, 0o700)
            chown(directory, Self.nobody, Self.nobody)
            chmod(directory, mode)
            // A collector of ours in it (root may bind there): its owner could swap it any time.
            let socket = directory + "/c.sock"
            let listener = try startListener(socket, output: base, asNobody: false)
            defer { listener.stop() }
            try expectHostRefuses(socket, reason: "belongs to uid 65534")
            #expect(!listener.stdout.contains("accepted"), "a host connected")
            try expectClientRefuses(socket, reason: "belongs to uid 65534")
            try expectDaemonRefuses(directory + "/other.sock", reason: "belongs to uid 65534")
        }
    }

    // MARK: 2. A symbolic link of another user on the way

    @Test(.enabled(if: canActAsNobody, "needs root and /usr/bin/setpriv, to act as a second user (nobody): skipped"))
    func point2_aSymlinkOfAnotherUserOnTheWayIsRefused() throws {
        let base = scratch()
        defer { remove(base) }
        let daemon = try startDaemon(base + "/real/c.sock")
        defer { daemon.stop() }
        symlink(base + "/real", base + "/theirs")
        lchown(base + "/theirs", Self.nobody, Self.nobody)
        try expectHostRefuses(base + "/theirs/c.sock", reason: "symbolic link owned by uid 65534")
        try expectClientRefuses(base + "/theirs/c.sock", reason: "symbolic link owned by uid 65534")
        try expectDaemonRefuses(base + "/theirs/other.sock", reason: "symbolic link owned by uid 65534")
        // The same link, ours: followed.
        symlink(base + "/real", base + "/ours")
        #expect(try run("nodescope", ["ps", "--socket", base + "/ours/c.sock"]).status == 0)
    }

    // MARK: 3. The daemon's private directory inside a directory of another user

    @Test(.enabled(if: canActAsNobody, "needs root and /usr/bin/setpriv, to act as a second user (nobody): skipped"))
    func point3_theDaemonCreatesNoDirectoryInsideADirectoryOfAnotherUser() throws {
        let base = scratch()
        defer { remove(base) }
        let theirs = base + "/theirs"
        mkdir(theirs, 0o755)
        chown(theirs, Self.nobody, Self.nobody)
        try expectDaemonRefuses(theirs + "/nodescope/c.sock", reason: "belongs to uid 65534")
        #expect(!FileManager.default.fileExists(atPath: theirs + "/nodescope"), "created a directory that nobody can rename")

        // In a directory of ours, every missing level is created, the last one private.
        let daemon = try startDaemon(base + "/a/b/c.sock")
        defer { daemon.stop() }
        var info = stat()
        #expect(stat(base + "/a/b", &info) == 0 && info.st_mode & 0o777 == 0o700 && info.st_uid == getuid())
        #expect(stat(base + "/a", &info) == 0 && info.st_mode & 0o022 == 0)
    }

    // MARK: 4. A listener of another user where ours is expected

    @Test(.enabled(if: canActAsNobody, "needs root and /usr/bin/setpriv, to act as a second user (nobody): skipped"))
    func point4_hostsAndClientsSendNothingToAListenerOfAnotherUser() throws {
        let base = scratch()
        defer { remove(base) }
        // As the issue found it: nodescope-$UID made in advance by nobody, mode 777, and its listener.
        let squatted = base + "/nodescope-\(getuid())"
        mkdir(squatted, 0o777)
        chmod(squatted, 0o777)
        chown(squatted, Self.nobody, Self.nobody)
        let socket = squatted + "/collector.sock"
        let listener = try startListener(socket, output: squatted, asNobody: true)
        defer { listener.stop() }
        try expectHostRefuses(socket, reason: "uid 65534")
        try expectClientRefuses(socket, reason: "uid 65534")
        try expectDaemonRefuses(socket, reason: "uid 65534")
        #expect(!listener.stdout.contains("accepted"), "something connected: \(listener.stdout)")

        // Only the peer gives it away: nobody's listener, in a directory of ours that nobody
        // may no longer write, its socket file handed to us. SO_PEERCRED still tells.
        let ours = base + "/ours"
        let output = base + "/out"
        mkdir(ours, 0o777)
        chmod(ours, 0o777)
        mkdir(output, 0o777)
        chown(output, Self.nobody, Self.nobody)
        let peerSocket = ours + "/c.sock"
        let impostor = try startListener(peerSocket, output: output, asNobody: true)
        defer { impostor.stop() }
        chmod(ours, 0o755)
        chown(peerSocket, getuid(), getgid())
        try expectHostRefuses(peerSocket, reason: "runs as uid 65534")
        try expectClientRefuses(peerSocket, reason: "runs as uid 65534")
        let received = (try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []
        for file in received {
            let size = (try? FileManager.default.attributesOfItem(atPath: output + "/" + file)[.size] as? Int) ?? 0
            #expect(size == 0, "\(file): \(size) bytes sent to another user's collector")
        }
    }

    // MARK: 5. A client of another user against our private directory

    @Test(.enabled(if: canActAsNobody, "needs root and /usr/bin/setpriv, to act as a second user (nobody): skipped"))
    func point5_aClientOfAnotherUserIsToldTheSocketBelongsToAnotherUser() throws {
        let base = scratch()
        defer { remove(base) }
        let socket = base + "/private/c.sock"
        let daemon = try startDaemon(socket)
        defer { daemon.stop() }
        for arguments in [["ps"], ["tree", "1", "--wait", "0"], ["leaks"]] {
            let other = try run("nodescope", arguments + ["--socket", socket], asNobody: true)
            #expect(other.status == 1, "\(arguments): \(other.stderr)")
            #expect(other.stderr.contains("belongs to another user"), "\(arguments): \(other.stderr)")
            #expect(!other.stderr.contains("no collector answers") && !other.stderr.contains("no daemon runs"))
            #expect(other.stderr.split(separator: "\n").count == 1, "\(other.stderr)")
        }
        // The same socket in a directory that others may read: the file itself is ours, and
        // commands that would start an embedded collector say so instead of failing to bind.
        chmod(base + "/private", 0o755)
        for arguments in [["why", "1", "A/B"], ["ui"], ["tree", "1", "--wait", "0"]] {
            let other = try run("nodescope", arguments + ["--socket", socket], asNobody: true)
            #expect(other.status == 1, "\(arguments): \(other.stderr)")
            #expect(other.stderr.contains("belongs to another user"), "\(arguments): \(other.stderr)")
            #expect(!other.stderr.contains("Address already in use"), "\(arguments): \(other.stderr)")
        }
    }

    // MARK: 6. Host-supplied names on a terminal

    /// Whether `text` has a character that a terminal would act on, other than line ends.
    private func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            scalar != "\n" && (scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value))
        }
    }

    @Test func point6_namesFromAHostAreEscapedInPsTreeLeaksAndAttach() throws {
        let base = scratch()
        defer { remove(base) }
        let socket = base + "/d.sock"
        let daemon = try startDaemon(socket)
        defer { daemon.stop() }
        // The process name is argv[0]'s last component: a link with a hostile name.
        let hostile = base + "/th\u{1B}]0;pwned\u{07}\nfake"
        try FileManager.default.createSymbolicLink(
            atPath: hostile, withDestinationPath: ChildProcess.binDirectory.appendingPathComponent("test-host").path)
        let host = try ChildProcess(hostile, ["hostile-names", "60"], environment: ["NODESCOPE_SOCKET": socket], absolutePath: true)
        defer { host.stop() }
        #expect(host.waitForLine(prefix: "DETACHED") != nil)
        let pid = "\(host.process.processIdentifier)"
        Thread.sleep(forTimeInterval: 1.3)  // the grace: Leak… is flagged

        let ps = try run("nodescope", ["ps", "--socket", socket])
        #expect(ps.status == 0)
        #expect(!hasControl(ps.stdout), "\(ps.stdout.debugDescription)")
        #expect(ps.stdout.split(separator: "\n").count == 2, "a name made a row of its own: \(ps.stdout)")
        #expect(ps.stdout.contains(#"th\e]0;pwned\x07\nfake"#), "\(ps.stdout)")

        let tree = try run("nodescope", ["tree", pid, "--socket", socket])
        #expect(tree.status == 0)
        #expect(!hasControl(tree.stdout), "\(tree.stdout.debugDescription)")
        #expect(tree.stdout.contains(#"Root\e[2J\e]0;pwned\x07"#), "\(tree.stdout)")
        #expect(tree.stdout.contains(#"Child\n4242 fake-row\u{9b}31m\x7f"#), "\(tree.stdout)")
        #expect(!tree.stdout.split(separator: "\n").contains { $0.hasPrefix("4242") })

        let leaks = try run("nodescope", ["leaks", pid, "--socket", socket])
        #expect(!hasControl(leaks.stdout), "\(leaks.stdout.debugDescription)")
        #expect(leaks.stdout.contains(#"Leak\e[31mRED"#), "\(leaks.stdout)")

        let attach = try ChildProcess("nodescope", ["attach", pid, "--socket", socket])
        #expect(attach.waitForLine(prefix: "th") != nil)
        Thread.sleep(forTimeInterval: 0.2)
        attach.stop()
        #expect(!hasControl(attach.stdout), "\(attach.stdout.debugDescription)")
        #expect(attach.stdout.contains(#"Leak\e[31mRED"#), "\(attach.stdout)")

        // JSON carries the names exactly, escaped as JSON requires.
        let json = try run("nodescope", ["tree", pid, "--json", "--socket", socket])
        let view = try JSONDecoder().decode(TreeView.self, from: Data(json.stdout.utf8))
        #expect(view.processName == "th\u{1B}]0;pwned\u{07}\nfake")
        #expect(view.nodes.contains { $0.name == "Child\n4242 fake-row\u{9B}31m\u{7F}" })
    }
}
