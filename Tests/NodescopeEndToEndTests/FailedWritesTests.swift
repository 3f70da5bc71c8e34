import Foundation
import ProcessTestSupport
import Testing

/// Every failed write is an error with a non-zero exit that names the file and the reason
/// (issue 32, point 8), with a real daemon and a real host.
@Suite("Failed writes are errors", .serialized, .offTheCooperativePool)
struct FailedWritesTests {
    @Test func aRecordingIntoDevFullFailsAtOnceWhileTheProcessRuns() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let host = try ChildProcess("test-host", ["serve", "60"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        #expect(host.waitForLine(prefix: "DETACHED") != nil)
        let pid = "\(host.process.processIdentifier)"
        // Not when the process ends (in a minute): the first write fails, and the command says so.
        let record = try fixture.finished(["record", pid, "-o", "/dev/full"], seconds: 30)
        #expect(record.process.terminationStatus == 1, "\(record.stderr)")
        #expect(record.stderr.contains("the recording failed: cannot write /dev/full: No space left on device"), "\(record.stderr)")
        #expect(!record.stderr.contains("wrote /dev/full"))
        #expect(host.process.isRunning)
    }

    @Test func outputsToDevFullFailNamingTheFile() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let host = try ChildProcess("test-host", ["serve", "60"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        #expect(host.waitForLine(prefix: "DETACHED") != nil)
        let pid = "\(host.process.processIdentifier)"
        for format in ["svg", "dot", "json"] {
            let export = try fixture.finished(["export", pid, "-o", "/dev/full", "--format", format])
            #expect(export.process.terminationStatus == 2, "\(format): \(export.stderr)")
            #expect(export.stderr.contains("cannot write /dev/full: No space left on device"), "\(format): \(export.stderr)")
        }
        // Standard output on a full device: `nodescope tree app > /dev/full`.
        let nodescope = ChildProcess.binDirectory.appendingPathComponent("nodescope").path
        for json in [false, true] {
            let shell = try ChildProcess(
                "/bin/sh", ["-c", "\"$0\" tree \(pid) \(json ? "--json" : "") --socket \"$1\" > /dev/full", nodescope, fixture.socket],
                absolutePath: true)
            #expect(shell.waitForExit(seconds: 30) == 2, "\(shell.stderr)")
            #expect(shell.stderr.contains("cannot write standard output: No space left on device"), "\(shell.stderr)")
        }
        var info = stat()
        #expect(stat("/dev/full", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
    }
}
