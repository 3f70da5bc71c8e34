import Foundation
import ProcessTestSupport
import Testing

/// A recording started while its host runs opens on what the collector knew at that moment,
/// and ends on what the collector knew at the end: the same leak, path, retain path and
/// fingerprint as the live report.
@Suite("A recording started mid-session", .serialized, .offTheCooperativePool)
struct MidSessionRecordingTests {
    @Test func aLeakFlaggedBeforeTheRecordingReplaysWithItsPathAndFingerprint() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let file = makeScratchDirectory().appendingPathComponent("mid.nsrec").path
        let host = try ChildProcess(
            "sample-nodes", ["--quiet", "--leak", "retain-cycle", "--hold", "5"],
            environment: ["NODESCOPE_SOCKET": fixture.socket, "NODESCOPE_RETAINER_MS": "20000"])
        defer { host.stop() }
        // Wait until the leak is flagged and explained live, with the host still running.
        var live = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            live = try fixture.run(["leaks", "sample-nodes"]).output
            if live.contains("LEAK"), live.contains("LoggedInFlow"), live.contains("─▶") { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(live.contains("LoggedInFlow"), "\(live)")
        #expect(host.process.isRunning, "the host ended before the recording could start mid-session")
        let recorder = try ChildProcess("nodescope", ["record", "sample-nodes", "-o", file, "--socket", fixture.socket])
        defer { recorder.stop() }
        #expect(host.waitForExit(seconds: 30) == 0)
        #expect(recorder.waitForExit(seconds: 30) == 0, "\(recorder.stderr)")

        // From its first record on, the replay has the leak the live collector had.
        let first = try fixture.finished(["leaks", "--from", file, "--at", "event:0"])
        #expect(first.process.terminationStatus == 0, "\(first.stderr)")
        let opening = try fixture.finished(["leaks", "--from", file, "--at", "1ms"])
        #expect(opening.stdout.contains("AppFlow › LoggedInFlow › ProfileFlow"), "\(opening.stdout)")
        // At the end, the replay's report is the live one, word for word.
        let ended = try fixture.run(["leaks", "sample-nodes"]).output
        let replayed = try fixture.finished(["leaks", "--from", file, "--at", "end"])
        #expect(replayed.process.terminationStatus == 0, "\(replayed.stderr)")
        #expect(replayed.stdout == ended)
        #expect(ended.contains("AppFlow › LoggedInFlow › ProfileFlow"), "\(ended)")
        let liveJSON = try fixture.run(["leaks", "sample-nodes", "--format", "json"]).output
        let replayedJSON = try fixture.finished(["leaks", "--from", file, "--at", "end", "--format", "json"]).stdout
        #expect(Self.fingerprints(liveJSON) == Self.fingerprints(replayedJSON))
        #expect(!Self.fingerprints(liveJSON).isEmpty)
    }

    /// The fingerprints a JSON report names, in order.
    static func fingerprints(_ json: String) -> [String] {
        json.components(separatedBy: "\"fingerprint\"").dropFirst().compactMap { rest in
            rest.split(separator: "\"").dropFirst().first.map(String.init)
        }
    }

    /// A re-login whose first login left its profile leaked, against a clean run: the new login
    /// is matched with the clean run's, and the leaked remains are the one difference.
    @Test func theDiffOfAReloginIsTheLeakedRemainsOnly() throws {
        let directory = makeScratchDirectory()
        let recordings = directory.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let fixture = try DaemonFixture(arguments: ["--record-dir", recordings.path])
        defer { fixture.stop() }
        let runs = try [[], ["--leak", "retain-cycle"]].map { try DiffPictureEndToEndTests.holdingRun($0, fixture: fixture) }
        _ = try fixture.waitForProcesses { $0.filter { !$0.isConnected }.count == 2 }
        let operands = runs.compactMap { run in
            RecordingEndToEndTests.finishedRecording(of: run.pid, in: recordings, fixture: fixture).map { "\($0)@\(run.instant)" }
        }
        try #require(operands.count == 2)
        let diff = try fixture.finished(["diff", operands[0], operands[1]])
        #expect(diff.process.terminationStatus == 1, "\(diff.stdout)\(diff.stderr)")
        let lines = diff.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(diff.stdout)")
        #expect(lines.first?.hasPrefix("+ AppFlow/LoggedInFlow#1/ProfileFlow  (Flow, ") == true, "\(diff.stdout)")
        #expect(lines.last == "1 added, 0 removed, 0 changed", "\(diff.stdout)")
    }
}
