import Foundation
import ProcessTestSupport
import Testing

/// A socket path names a file: an empty `--socket` is a usage error (bound as is it would be an
/// abstract socket, which any user may reach), an empty `NODESCOPE_SOCKET` is no setting, and a
/// relative path is taken from the working directory.
@Suite("Socket paths given to the daemon and clients", .serialized, .offTheCooperativePool)
struct SocketPathArgumentTests {
    @Test func anEmptySocketIsAUsageError() throws {
        for command in [["daemon"], ["ps"], ["tree", "1"], ["leaks"]] {
            let run = try ChildProcess("nodescope", command + ["--socket", ""])
            #expect(run.waitForExit(seconds: 20) == 2, "\(command)")
            #expect(run.stderr.contains("--socket is empty; name the socket file"), "\(command): \(run.stderr)")
        }
    }

    @Test func anEmptyEnvironmentVariableIsNoSetting() throws {
        let runtime = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: runtime) }
        let daemon = try ChildProcess(
            "nodescope", ["daemon"], environment: ["NODESCOPE_SOCKET": "", "XDG_RUNTIME_DIR": runtime.path])
        defer { daemon.stop() }
        let expected = runtime.appendingPathComponent("nodescope/collector.sock").path
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !FileManager.default.fileExists(atPath: expected) { Thread.sleep(forTimeInterval: 0.05) }
        #expect(FileManager.default.fileExists(atPath: expected), "\(daemon.stderr)")
        let ps = try ChildProcess("nodescope", ["ps"], environment: ["NODESCOPE_SOCKET": "", "XDG_RUNTIME_DIR": runtime.path])
        #expect(ps.waitForExit(seconds: 20) == 0, "\(ps.stderr)")
    }

    @Test func aRelativeSocketIsTakenFromTheWorkingDirectory() throws {
        let directory = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = ChildProcess.binDirectory.appendingPathComponent("nodescope").path
        let daemon = try ChildProcess(
            "/bin/sh", ["-c", "cd \"$0\" && exec \"$1\" daemon --socket run/d.sock", directory.path, binary], absolutePath: true)
        defer { daemon.stop() }
        let absolute = directory.appendingPathComponent("run/d.sock").path
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !FileManager.default.fileExists(atPath: absolute) { Thread.sleep(forTimeInterval: 0.05) }
        let ps = try ChildProcess("nodescope", ["ps", "--socket", absolute])
        #expect(ps.waitForExit(seconds: 20) == 0, "\(ps.stderr)")
        #expect(daemon.stderr.contains("socket=\(absolute)"), "the log names the absolute path: \(daemon.stderr)")
    }
}
