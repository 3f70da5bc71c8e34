import Foundation
import ProcessTestSupport
import Testing

/// `nodescope … | head -1`: a reader that goes away ends the command quietly, as `git log | head`.
@Suite("A closed pipe ends a command quietly", .serialized, .offTheCooperativePool)
struct ClosedPipeTests {
    @Test(arguments: [["ps"], ["tree", "sample-nodes"], ["tree", "sample-nodes", "--json"]])
    func aCommandWhoseReaderIsGoneExitsZeroWithoutATrap(arguments: [String]) throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let host = try ChildProcess("sample-nodes", ["--quiet", "--hold", "10"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        _ = try fixture.waitForProcesses { $0.contains { $0.processName == "sample-nodes" } }
        let nodescope = ChildProcess.binDirectory.appendingPathComponent("nodescope").path
        let command = ([nodescope] + arguments + ["--socket", fixture.socket]).map { "'\($0)'" }.joined(separator: " ")
        // `true` reads nothing and exits at once: the command's first write meets a closed pipe.
        let shell = try ChildProcess("/bin/bash", ["-c", "\(command) | true; exit ${PIPESTATUS[0]}"], absolutePath: true)
        #expect(shell.waitForExit() == 0, "\(shell.stderr)")
        #expect(!shell.stderr.contains("Fatal error"))
    }

    /// `attach` may wait long for its next write: it ends when its reader goes, not at that write.
    @Test func attachEndsAsSoonAsItsReaderIsGone() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let host = try ChildProcess("sample-nodes", ["--quiet", "--hold", "30"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        _ = try fixture.waitForProcesses { $0.contains { $0.processName == "sample-nodes" && $0.liveNodes == 5 } }
        let nodescope = ChildProcess.binDirectory.appendingPathComponent("nodescope").path
        let started = Date()
        let shell = try ChildProcess(
            "/bin/bash", ["-c", "'\(nodescope)' attach sample-nodes --socket '\(fixture.socket)' | head -1; exit ${PIPESTATUS[0]}"],
            absolutePath: true)
        #expect(shell.waitForExit(seconds: 60) == 0, "\(shell.stderr)")
        #expect(shell.stdout.hasPrefix("sample-nodes [pid"))
        // The host holds for 30 s without a change: attach ended long before its next write.
        #expect(Date().timeIntervalSince(started) < 20)
    }

    /// `check`'s report goes to standard error; sent down a pipe whose reader is gone, it once
    /// trapped (SIGILL, exit 132) in Foundation's write. Its verdict is its exit status still.
    @Test func checkWhoseReaderIsGoneExitsWithItsVerdict() throws {
        let bin = ChildProcess.binDirectory
        let nodescope = bin.appendingPathComponent("nodescope").path
        let sample = bin.appendingPathComponent("sample-nodes").path
        let shell = try ChildProcess(
            "/bin/bash",
            ["-c", "'\(nodescope)' check -- '\(sample)' --quiet --leak retain-cycle 2>&1 | head -1; exit ${PIPESTATUS[0]}"],
            absolutePath: true)
        #expect(shell.waitForExit(seconds: 120) == 1, "\(shell.stdout)\n\(shell.stderr)")
        #expect(shell.stdout.split(separator: "\n").count == 1)
        #expect(!shell.stderr.contains("Fatal error"))
    }

    @Test func theDemoWhoseReaderIsGoneExitsZeroAndLeavesNoScratchDirectory() throws {
        let before = Set((try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []).filter { $0.hasPrefix("nodescope-demo-") }
        let output = makeScratchDirectory().appendingPathComponent("demo.svg").path
        let nodescope = ChildProcess.binDirectory.appendingPathComponent("nodescope").path
        let shell = try ChildProcess(
            "/bin/bash", ["-c", "'\(nodescope)' demo -o '\(output)' | head -1; exit ${PIPESTATUS[0]}"], absolutePath: true)
        #expect(shell.waitForExit() == 0, "\(shell.stderr)")
        #expect(shell.stdout.hasPrefix("nodescope demo"))
        #expect(!shell.stderr.contains("Fatal error"))
        let after = Set((try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []).filter { $0.hasPrefix("nodescope-demo-") }
        #expect(after.subtracting(before).isEmpty, "the demo's private directory is removed")
    }
}
