import Foundation
import ProcessTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `nodescope ui --open` as a user runs it: the address goes to the desktop's opener, and a
/// machine without one gets a line that says so, the page still served.
@Suite("nodescope ui --open")
struct UICommandTests {
    @Test func openHandsThePrintedAddressToXdgOpen() throws {
        let scratch = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let opened = scratch.appendingPathComponent("opened").path
        let opener = scratch.appendingPathComponent("xdg-open").path
        try "#!/bin/sh\nprintf '%s' \"$1\" > '\(opened)'\n".write(toFile: opener, atomically: true, encoding: .utf8)
        chmod(opener, 0o755)
        let path = scratch.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let ui = try ChildProcess(
            "nodescope", ["ui", "--open", "--socket", scratch.appendingPathComponent("c.sock").path],
            environment: ["PATH": path])
        let url = try #require(ui.waitForLine(prefix: "http://127.0.0.1:", seconds: 30))
        #expect(url.contains("/?token="))
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !FileManager.default.fileExists(atPath: opened) { Thread.sleep(forTimeInterval: 0.05) }
        #expect((try? String(contentsOfFile: opened, encoding: .utf8)) == url, "xdg-open got the printed address")
        ui.signal(SIGINT)
        #expect(ui.waitForExit() == 0, "\(ui.stderr)")
    }

    @Test func withoutAnOpenerItSaysSoAndStillServes() throws {
        let scratch = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ui = try ChildProcess(
            "nodescope", ["ui", "--open", "--socket", scratch.appendingPathComponent("c.sock").path],
            environment: ["PATH": scratch.path])
        #expect(ui.waitForLine(prefix: "http://127.0.0.1:", seconds: 30) != nil)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !ui.stderr.contains("no xdg-open") { Thread.sleep(forTimeInterval: 0.05) }
        #expect(ui.stderr.contains("no xdg-open on PATH"), "\(ui.stderr)")
        #expect(ui.process.isRunning, "a missing opener is no reason to stop serving")
        ui.signal(SIGINT)
        #expect(ui.waitForExit() == 0, "\(ui.stderr)")
    }

    @Test func uiFromAFileThatIsNoRecordingIsAClearError() throws {
        let scratch = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let foreign = scratch.appendingPathComponent("notes.txt").path
        try "not a recording at all\n".write(toFile: foreign, atomically: true, encoding: .utf8)
        let cases = [
            (foreign, Int32(1), "not a Nodescope recording"),
            (scratch.appendingPathComponent("missing.nsrec").path, Int32(2), "no such file"),
        ]
        for (path, status, words) in cases {
            let ui = try ChildProcess("nodescope", ["ui", "--from", path])
            #expect(ui.waitForExit() == status, "\(ui.stderr)")
            #expect(ui.stderr.contains(words), "\(ui.stderr)")
        }
    }
}
