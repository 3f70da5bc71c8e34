import Foundation
import ProcessTestSupport
import Testing

/// A real daemon against hostile hosts that intern hundreds of megabytes of strings that no node
/// uses: an ended host gives them back, the strings of all hosts stay within
/// `--max-string-memory`, and the hosts' names reach the daemon's log escaped.
@Suite("The daemon's memory bound, end to end", .serialized, .offTheCooperativePool)
struct DaemonMemoryBoundTests {
    static let megabyte = 1 << 20

    /// Sends a host's hello, an empty snapshot and one node, then `count` strings of `size`
    /// bytes that nothing names (ids from 2), in chunks of about a megabyte.
    static func internUnusedStrings(_ socket: RawSocket, pid: UInt32, name: String, count: Int, size: Int) {
        let now = RawFrames.now()
        socket.send(
            RawFrames.hello(pid: pid, monotonic: now, name: name) + RawFrames.snapshotBegin(0, nodes: 0) + RawFrames.snapshotEnd(0)
                + RawFrames.defineString(1, "Root") + RawFrames.attached(1, at: now, node: 1, kind: 1))
        var chunk: [UInt8] = []
        for index in 0..<count {
            let suffix = "-\(index)"
            chunk += RawFrames.defineString(UInt32(index + 2), String(repeating: "s", count: size - suffix.utf8.count) + suffix)
            if chunk.count >= megabyte {
                socket.send(chunk)
                chunk = []
            }
        }
        socket.send(chunk)
    }

    /// Waits until `condition` holds, at most `seconds`; whether it did.
    static func wait(seconds: Double, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return condition()
    }

    @Test func anEndedHostGivesBackTheStringsItsTreeDoesNotUse() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let baseline = fixture.residentBytes
        let socket = try #require(RawSocket(path: fixture.socket))
        defer { socket.close() }
        // 60 000 strings of 4 000 bytes: 240 MB, within the 256 MiB a session may intern.
        Self.internUnusedStrings(socket, pid: 71_001, name: "hog", count: 60_000, size: 4_000)
        #expect(Self.wait(seconds: 60) { fixture.residentBytes > baseline + 200 * Self.megabyte })
        let peak = fixture.residentBytes
        socket.send(RawFrames.goodbye(1))
        let ended = try fixture.waitForProcesses(seconds: 30) { $0.first { $0.pid == 71_001 }?.endedNormally == true }
        #expect(ended.contains { $0.pid == 71_001 && $0.endedNormally == true }, "the ended host stays listed with its tree")
        #expect(Self.wait(seconds: 30) { fixture.residentBytes < baseline + 64 * Self.megabyte })
        let after = fixture.residentBytes
        print(
            "daemon RSS: baseline \(baseline / Self.megabyte) MiB, peak \(peak / Self.megabyte) MiB, after the end \(after / Self.megabyte) MiB"
        )
        let (status, tree) = try fixture.run(["tree", "71001"])
        #expect(status == 0)
        #expect(tree.contains("Root"), "\(tree)")
    }

    @Test func theStringsOfAllHostsStayWithinTheBoundAndTheRefusalIsLoggedEscaped() throws {
        let fixture = try DaemonFixture(arguments: ["--max-string-memory", "64M"])
        defer { fixture.stop() }
        let baseline = fixture.residentBytes
        let first = try #require(RawSocket(path: fixture.socket))
        defer { first.close() }
        Self.internUnusedStrings(first, pid: 71_002, name: "first", count: 10_000, size: 4_000)
        // A second host, named to forge a log line and colour the terminal, passes the bound.
        let second = try #require(RawSocket(path: fixture.socket))
        defer { second.close() }
        Self.internUnusedStrings(second, pid: 71_003, name: "hog\nforged line \u{1B}[31mred", count: 10_000, size: 4_000)
        #expect(second.isClosedByPeer(within: 30))
        let peak = fixture.residentBytes
        let processes = try fixture.processes()
        #expect(processes.first { $0.pid == 71_002 }?.isConnected == true, "the first host is not affected")
        #expect(processes.first { $0.pid == 71_003 }?.endedNormally == false)
        print(
            "daemon RSS with --max-string-memory 64M: baseline \(baseline / Self.megabyte) MiB, both hosts in \(peak / Self.megabyte) MiB")
        #expect(peak < baseline + 160 * Self.megabyte)

        fixture.daemon.signal(SIGTERM)
        fixture.daemon.waitForExit(seconds: 20)
        let log = fixture.daemon.stderr
        let closing = try #require(log.split(separator: "\n").first { $0.contains("closing host 71003") }, "\(log)")
        #expect(closing.contains(#"(hog\nforged line \e[31mred)"#), "\(closing)")
        #expect(closing.contains("limit of 67108864 bytes of strings over all processes"), "\(closing)")
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix("forged line") }, "\(log)")
        #expect(!log.contains("\u{1B}"), "no ESC reaches the terminal")
    }
}
