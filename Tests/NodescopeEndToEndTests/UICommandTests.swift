import Foundation
import ProcessTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `nodescope ui --open` as a user runs it: a machine without an opener gets a line that says
/// so, the page still served. (What the opener gets: WebViewBoundsEndToEndTests, point 1.)
@Suite("nodescope ui --open", .offTheCooperativePool)
struct UICommandTests {
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
