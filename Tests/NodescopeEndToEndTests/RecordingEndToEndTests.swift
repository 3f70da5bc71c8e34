import Foundation
import NodescopeRecording
import ProcessTestSupport
import Testing

/// The flight recorder end to end: real daemons, `nodescope record`, `sample-nodes`, and the
/// reading commands on the recordings.
@Suite("Recordings end to end", .serialized, .offTheCooperativePool)
struct RecordingEndToEndTests {
    /// An ISO 8601 wall-clock time with milliseconds, as `--at` takes it.
    static func instant(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// The recording of process `pid` in `directory` once it opens without a warning (within 10 s).
    static func finishedRecording(of pid: Int32, in directory: URL, fixture: DaemonFixture) -> String? {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let name = (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.first { $0.contains("-\(pid)-") }
            if let name {
                let path = directory.appendingPathComponent(name).path
                if (try? fixture.finished(["tree", "--from", path]).stderr.isEmpty) == true { return path }
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return nil
    }

    @Test func recordReplaysTheTreesTheCollectorHadLiveAndItsLeaks() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let directory = makeScratchDirectory()
        let file = directory.appendingPathComponent("run.nsrec").path
        let recorder = try ChildProcess("nodescope", ["record", "sample-nodes", "-o", file, "--socket", fixture.socket])
        defer { recorder.stop() }
        // The recording starts at the hello of the next sample-nodes; `ps` shows none before.
        Thread.sleep(forTimeInterval: 0.3)
        let host = try ChildProcess(
            "sample-nodes", ["--quiet", "--leak", "retain-cycle", "--pace", "150", "--hold", "1"],
            environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        _ = try fixture.waitForProcesses { $0.contains { $0.processName == "sample-nodes" } }
        // Three instants: each live tree between two clock readings.
        var captures: [(before: Date, live: String, after: Date)] = []
        for pause in [0.2, 0.5, 0.9] {
            Thread.sleep(forTimeInterval: pause)
            let before = Date()
            let (status, live) = try fixture.run(["tree", "sample-nodes"])
            let after = Date()
            #expect(status == 0)
            captures.append((before, live, after))
        }
        #expect(host.waitForExit(seconds: 30) == 0)
        #expect(recorder.waitForExit(seconds: 30) == 0, "\(recorder.stderr)")
        #expect(recorder.stderr.contains("wrote \(file)"), "\(recorder.stderr)")

        // The live answer is the tree at some instant between the two readings. When the replay
        // shows one tree at both ends, it is that one; when the host moved on meanwhile (a
        // loaded machine makes `tree` slow), it is the replay at one of the instants between.
        for capture in captures {
            let early = try fixture.finished(["tree", "--from", file, "--at", Self.instant(capture.before)])
            let late = try fixture.finished(["tree", "--from", file, "--at", Self.instant(capture.after)])
            #expect(early.process.terminationStatus == 0, "\(early.stderr)")
            #expect(late.process.terminationStatus == 0, "\(late.stderr)")
            if early.stdout == late.stdout {
                #expect(capture.live == late.stdout)
                continue
            }
            // The host moved on between the readings: step through every record that arrived
            // between them (`--at event:N`), not through time, so that no state is stepped over
            // however close two records came (the tree that held between the read bringing the
            // leak's explanation and the read starting the teardown lasted a few ms).
            let window = capture.after.timeIntervalSince(capture.before)
            let counts = try Self.recordCounts(in: file, from: capture.before, to: capture.after)
            var matched = capture.live == early.stdout || capture.live == late.stdout
            for count in counts where !matched {
                matched = try fixture.finished(["tree", "--from", file, "--at", "event:\(count)"]).stdout == capture.live
            }
            #expect(
                matched,
                """
                the live tree is not the replay's after any of the records \(counts) that arrived in the \
                \(Int(window * 1_000)) ms between the two readings (\(Self.instant(capture.before)) to \(Self.instant(capture.after))):
                \(capture.live)
                the replay at the first reading:
                \(early.stdout)
                at the second:
                \(late.stdout)
                """)
        }

        let live = try fixture.finished(["leaks", "sample-nodes"])
        let replayed = try fixture.finished(["leaks", "--from", file, "--at", "end"])
        #expect(replayed.process.terminationStatus == 0, "\(replayed.stderr)")
        #expect(live.stdout.contains("LEAK"))
        #expect(replayed.stdout == live.stdout)
        let liveTree = try fixture.run(["tree", "sample-nodes"]).output
        #expect(try fixture.run(["tree", "--from", file]).output == liveTree)

        // A copy cut off mid-record opens up to its last whole record, with a warning.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        let cut = directory.appendingPathComponent("cut.nsrec").path
        try bytes.prefix(bytes.count * 2 / 3 + 1).write(to: URL(fileURLWithPath: cut))
        let opened = try fixture.finished(["tree", "--from", cut])
        #expect(opened.process.terminationStatus == 0, "\(opened.stderr)")
        #expect(opened.stderr.contains("cut off"), "\(opened.stderr)")
        #expect(opened.stdout.contains("AppFlow"))
        // Exports read recordings too.
        let json = directory.appendingPathComponent("tree.json").path
        #expect(try fixture.run(["export", "--from", file, "--at", "end", "-o", json]).status == 0)
        #expect(try fixture.run(["tree", "--from", file, "--at", "event:0"]).output.contains("0 attached"))
    }

    /// The record counts (`event:N`) at which a replay of `file` may stand between two wall-clock
    /// readings: from the records that arrived up to the first (mapped to the recorder's clock as
    /// `--at TIME` maps it, with 20 ms either side for the two clocks' pairing) to those up to the second.
    static func recordCounts(in file: String, from before: Date, to after: Date) throws -> ClosedRange<UInt64> {
        let reader = try RecordingReader(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        let header = reader.header
        func monotonic(_ date: Date, slack: Double) -> UInt64 {
            let wall = UInt64(max(0, (date.timeIntervalSince1970 + slack) * 1e9))
            return wall >= header.startWallNanos ? header.startMonotonicNanos + (wall - header.startWallNanos) : header.startMonotonicNanos
        }
        let (low, high) = (monotonic(before, slack: -0.02), monotonic(after, slack: 0.02))
        var first: UInt64 = 0
        var last: UInt64 = 0
        var records = reader.records()
        while let item = try records.next() {
            if item.arrivalNanos <= low { first = item.number + 1 }
            if item.arrivalNanos <= high { last = item.number + 1 } else { break }
        }
        return first...max(first, last)
    }

    @Test func theDaemonRecordsEveryProcessIntoItsRecordDirectory() throws {
        let directory = makeScratchDirectory()
        let recordings = directory.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let fixture = try DaemonFixture(arguments: ["--record-dir", recordings.path])
        defer { fixture.stop() }
        for _ in 0..<2 {
            let host = try ChildProcess(
                "sample-nodes", ["--quiet", "--leak", "retain-cycle"], environment: ["NODESCOPE_SOCKET": fixture.socket])
            #expect(host.waitForExit(seconds: 30) == 0)
        }
        let ended = try fixture.waitForProcesses { $0.filter { !$0.isConnected }.count == 2 }
        #expect(ended.count == 2)
        var files: [String] = []
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            files = (try? FileManager.default.contentsOfDirectory(atPath: recordings.path))?.filter { $0.hasSuffix(".nsrec") } ?? []
            let finished = files.filter { name in
                let path = recordings.appendingPathComponent(name).path
                return (try? fixture.finished(["tree", "--from", path]).stderr.isEmpty) == true
            }
            if finished.count == 2 { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(files.count == 2)
        for summary in ended {
            guard let name = files.first(where: { $0.contains("-\(summary.pid)-") }) else {
                Issue.record("no recording of pid \(summary.pid) in \(files)")
                continue
            }
            let path = recordings.appendingPathComponent(name).path
            let replayed = try fixture.finished(["leaks", "--from", path])
            #expect(replayed.stderr.isEmpty, "\(replayed.stderr)")
            #expect(replayed.stdout == (try fixture.run(["leaks", "\(summary.pid)"]).output))
        }
    }

    @Test func aForeignFileIsAClearErrorNotACrash() throws {
        let directory = makeScratchDirectory()
        let foreign = directory.appendingPathComponent("tree.json").path
        try Data("{\"nodes\": []}".utf8).write(to: URL(fileURLWithPath: foreign))
        // Neither a recording nor a tree: the reading commands read both (one source, TreeSource).
        for command in [["tree", "--from", foreign], ["leaks", "--from", foreign], ["export", "--from", foreign, "-o", "-"]] {
            let process = try ChildProcess("nodescope", command)
            #expect(process.waitForExit(seconds: 30) == 1)
            #expect(process.stderr.contains("is neither a Nodescope recording nor a tree in JSON"), "\(process.stderr)")
        }
        let badInstant = try ChildProcess("nodescope", ["tree", "--from", foreign, "--at", "yesterday"])
        #expect(badInstant.waitForExit(seconds: 30) == 64 || badInstant.process.terminationStatus == 2)
    }
}

@Suite("diff end to end", .serialized, .offTheCooperativePool)
struct DiffEndToEndTests {
    @Test func twoRunsOfOneSampleAreTheSameAndALeakShowsAsItsNodes() throws {
        let directory = makeScratchDirectory()
        let recordings = directory.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let fixture = try DaemonFixture(arguments: ["--record-dir", recordings.path])
        defer { fixture.stop() }
        var pids: [Int32] = []
        for flags in [[], [], ["--leak", "retain-cycle"]] {
            let host = try ChildProcess("sample-nodes", ["--quiet"] + flags, environment: ["NODESCOPE_SOCKET": fixture.socket])
            pids.append(host.process.processIdentifier)
            #expect(host.waitForExit(seconds: 30) == 0)
        }
        _ = try fixture.waitForProcesses { $0.filter { !$0.isConnected }.count == 3 }
        func recording(_ pid: Int32) -> String? { RecordingEndToEndTests.finishedRecording(of: pid, in: recordings, fixture: fixture) }
        let paths = pids.compactMap(recording)
        try #require(paths.count == 3)
        let same = try fixture.finished(["diff", paths[0] + "@end", paths[1]])
        #expect(same.process.terminationStatus == 0, "\(same.stdout)\(same.stderr)")
        #expect(same.stdout.contains("the trees are the same"))
        // A JSON export against a live (here: ended) process, and a recording mid-run.
        let json = directory.appendingPathComponent("first.json").path
        #expect(try fixture.run(["export", "\(pids[0])", "-o", json]).status == 0)
        #expect(try fixture.finished(["diff", json, "\(pids[1])"]).process.terminationStatus == 0)
        #expect(try fixture.finished(["diff", paths[0] + "@event:60", paths[1] + "@event:60"]).process.terminationStatus == 0)

        let leaky = try fixture.finished(["diff", paths[0], paths[2], "--json"])
        #expect(leaky.process.terminationStatus == 1, "\(leaky.stderr)")
        let text = try fixture.finished(["diff", paths[0], paths[2]]).stdout
        let lines = text.split(separator: "\n").dropLast()
        #expect(lines.contains { $0.hasPrefix("+ ") && $0.contains("ProfileFlow") }, "\(text)")
        for line in lines { #expect(line.contains("ProfileFlow"), "\(text)") }
        let ignored = try fixture.finished(["diff", paths[0], paths[2], "--ignore", "*/ProfileFlow*"])
        #expect(ignored.process.terminationStatus == 0, "\(ignored.stdout)")
    }
}

@Suite("diff and timeline pictures end to end", .serialized, .offTheCooperativePool)
struct DiffPictureEndToEndTests {
    /// Runs sample-nodes with `flags` under `fixture` until it holds (logged in again), and
    /// returns its pid and an instant of its hold (a wall-clock time, as `@TIME` takes it).
    static func holdingRun(_ flags: [String], fixture: DaemonFixture) throws -> (pid: Int32, instant: String) {
        let host = try ChildProcess("sample-nodes", flags + ["--hold", "30"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        #expect(host.waitForLine(prefix: "holding for", seconds: 30) != nil, "\(host.stderr)")
        // The sample flushed everything before saying so: an instant after it is in the hold.
        Thread.sleep(forTimeInterval: 0.2)
        let instant = RecordingEndToEndTests.instant(Date())
        Thread.sleep(forTimeInterval: 0.2)
        host.signal(SIGTERM)
        #expect(host.waitForExit(seconds: 30) == 0)
        return (host.process.processIdentifier, instant)
    }

    @Test func theV2PluginsNodesAreExactlyTheDifferenceAndBothPicturesRender() throws {
        let directory = makeScratchDirectory()
        let recordings = directory.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let fixture = try DaemonFixture(arguments: ["--record-dir", recordings.path])
        defer { fixture.stop() }
        let runs = try [[], [], ["--feed-v2"]].map { try Self.holdingRun($0, fixture: fixture) }
        _ = try fixture.waitForProcesses { $0.filter { !$0.isConnected }.count == 3 }
        func recording(_ pid: Int32) -> String? { RecordingEndToEndTests.finishedRecording(of: pid, in: recordings, fixture: fixture) }
        let operands = runs.compactMap { run in recording(run.pid).map { "\($0)@\(run.instant)" } }
        try #require(operands.count == 3)

        // Two runs of the default: the same tree, exit 0, and the picture still draws.
        let sameSVG = directory.appendingPathComponent("same.svg").path
        let same = try fixture.finished(["diff", operands[0], operands[1], "--svg", sameSVG])
        #expect(same.process.terminationStatus == 0, "\(same.stdout)\(same.stderr)")
        #expect(same.stdout.contains("the trees are the same"), "\(same.stdout)")
        #expect(same.stderr.contains("wrote \(sameSVG)"), "\(same.stderr)")
        #expect(try String(contentsOfFile: sameSVG, encoding: .utf8).contains("</svg>"))

        // The v2 arm against the default: exactly the plugin's nodes, added; exit 1.
        let v2SVG = directory.appendingPathComponent("v2.svg").path
        let v2 = try fixture.finished(["diff", operands[0], operands[2], "-o", v2SVG])
        #expect(v2.process.terminationStatus == 1, "\(v2.stdout)\(v2.stderr)")
        let lines = v2.stdout.split(separator: "\n").map(String.init)
        #expect(lines == ["+ AppFlow/LoggedInFlow/FeedFlow/StoriesFlow  (Flow)", "1 added, 0 removed, 0 changed"], "\(v2.stdout)")
        let svg = try String(contentsOfFile: v2SVG, encoding: .utf8)
        #expect(svg.hasPrefix("<?xml") || svg.hasPrefix("<!--") || svg.contains("<svg"))
        #expect(svg.contains("+ StoriesFlow"), "\(svg.prefix(2000))")
        #expect(svg.contains("only in the second"))
        let json = try fixture.finished(["diff", operands[0], operands[2], "--json"])
        #expect(json.process.terminationStatus == 1)
        let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let added = (decoded?["added"] as? [[String: Any]])?.compactMap { $0["path"] as? String }
        #expect(added == ["AppFlow/LoggedInFlow/FeedFlow/StoriesFlow"], "\(json.stdout)")

        // A picture of when the v2 run's nodes lived.
        guard let v2Recording = recording(runs[2].pid) else { return }
        let timeline = directory.appendingPathComponent("lifetimes.svg").path
        let drawn = try ChildProcess("nodescope", ["timeline", v2Recording, "-o", timeline])
        #expect(drawn.waitForExit(seconds: 30) == 0, "\(drawn.stderr)")
        #expect(drawn.stderr.contains("wrote \(timeline)"), "\(drawn.stderr)")
        let chart = try String(contentsOfFile: timeline, encoding: .utf8)
        #expect(chart.contains("AppFlow/LoggedInFlow/FeedFlow/StoriesFlow"))
        #expect(chart.contains("AppFlow/LoggedInFlow  \u{D7}2"))
        #expect(chart.hasSuffix("</svg>\n"))
        let part = try ChildProcess(
            "nodescope", ["timeline", v2Recording, "-o", "-", "--start", "0.001", "--end", "end", "--max-rows", "2"])
        #expect(part.waitForExit(seconds: 30) == 0, "\(part.stderr)")
        #expect(part.stdout.contains("more rows"), "\(part.stdout.suffix(600))")
    }

    @Test func timelineAndDiffPicturesRefuseWhatTheyCannotUse() throws {
        let directory = makeScratchDirectory()
        let foreign = directory.appendingPathComponent("tree.json").path
        try Data("{\"nodes\": []}".utf8).write(to: URL(fileURLWithPath: foreign))
        let notRecording = try ChildProcess("nodescope", ["timeline", foreign, "-o", directory.appendingPathComponent("t.svg").path])
        #expect(notRecording.waitForExit(seconds: 30) == 1)
        #expect(notRecording.stderr.contains("not a Nodescope recording"), "\(notRecording.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("t.svg").path))
        let missing = try ChildProcess("nodescope", ["timeline", directory.appendingPathComponent("none").path, "-o", "-"])
        #expect(missing.waitForExit(seconds: 30) == 2)
        #expect(missing.stderr.contains("no such file"), "\(missing.stderr)")
        let badWindow = try ChildProcess("nodescope", ["timeline", foreign, "-o", "-", "--start", "event:3"])
        #expect(badWindow.waitForExit(seconds: 30) != 0)
        #expect(badWindow.stderr.contains("not an event number"), "\(badWindow.stderr)")
        let badSVG = try ChildProcess(
            "nodescope", ["diff", foreign, foreign, "--svg", directory.appendingPathComponent("no/such/dir.svg").path])
        #expect(badSVG.waitForExit(seconds: 30) != 0)
        #expect(badSVG.stderr.contains("does not exist"), "\(badSVG.stderr)")
    }
}
