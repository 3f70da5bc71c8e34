import Foundation
import Glibc
import NodescopeCollector
import ProcessTestSupport
import Testing

/// The CLI as a user drives it, with the real binary: absurd numbers, a collector that goes
/// quiet or away, processes that have ended, paths that cannot be written. Every case ends with
/// a message and an exit code of DESIGN.md, never a trap or a hang.
@Suite("The CLI never traps or hangs", .serialized, .offTheCooperativePool)
struct CLIRobustnessTests {
    /// A status that a trap or a signal gives (SIGILL is 132 through a shell, or a signal here).
    private static func isCrash(_ process: ChildProcess) -> Bool {
        process.process.terminationReason == .uncaughtSignal || process.stderr.contains("Fatal error")
            || process.stderr.contains("Swift runtime failure")
    }

    @Test func hugeAndNegativeDepthsAreAnswersNotTraps() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let host = try ChildProcess("sample-nodes", ["--quiet", "--hold", "20"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        _ = try fixture.waitForProcesses { $0.contains { $0.processName == "sample-nodes" && $0.liveNodes == 5 } }

        let deepest = try fixture.finished(["tree", "sample-nodes", "--depth", "9223372036854775807"])
        #expect(deepest.process.terminationStatus == 0, "\(deepest.stderr)")
        #expect(!Self.isCrash(deepest))
        #expect(deepest.stdout.contains("SettingsFlow"))

        let negative = try fixture.finished(["tree", "sample-nodes", "--depth", "-1"])
        #expect(negative.process.terminationStatus == 2)
        #expect(negative.stderr.contains("--depth must be 0 or more"), "\(negative.stderr)")

        let exported = try fixture.finished(["export", "sample-nodes", "-o", "-", "--depth", "9223372036854775807"])
        #expect(exported.process.terminationStatus == 0, "\(exported.stderr)")
        // To a pipe without --format: SVG.
        #expect(exported.stdout.contains("<svg"))

        let noSuchRoot = try fixture.finished(["tree", "sample-nodes", "--root", "no/such"])
        #expect(noSuchRoot.process.terminationStatus == 1)
        #expect(noSuchRoot.stderr.contains("no/such"), "\(noSuchRoot.stderr)")
    }

    @Test(arguments: [["--hold", "1e20"], ["--pace", "9223372036854775807"], ["--nodes", "99999999999999"]])
    func theSamplesRefuseAbsurdNumbersWithUsage(arguments: [String]) throws {
        let sample = try ChildProcess("sample-nodes", arguments + ["--quiet"])
        #expect(sample.waitForExit(seconds: 20) == 2)
        #expect(!Self.isCrash(sample))
        #expect(sample.stderr.contains(arguments[0]), "\(sample.stderr)")
    }

    /// test-listener accepts the hello and then never answers a request: a collector that went
    /// quiet (stopped after the handshake, or wedged).
    @Test func aCollectorThatGoesQuietAfterTheHandshakeEndsTheRequestWithItsName() throws {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("q.sock").path
        let listener = try ChildProcess("test-listener", [socket, scratch.path])
        defer { listener.stop() }
        #expect(listener.waitForLine(prefix: "listening") != nil)
        for arguments in [["ps"], ["tree", "sample-nodes"], ["leaks", "sample-nodes"]] {
            let started = Date()
            let command = try ChildProcess(
                "nodescope", arguments + ["--socket", socket], environment: ["NODESCOPE_ANSWER_TIMEOUT": "1"])
            #expect(command.waitForExit(seconds: 30) == 1, "\(arguments): \(command.stderr)")
            #expect(command.stderr.contains("did not answer within 1 s"), "\(command.stderr)")
            #expect(command.stderr.contains(socket))
            // Far from the 30 s at which the test would kill it: the deadline ended it.
            #expect(Date().timeIntervalSince(started) < 20)
        }
    }

    @Test func attachSaysSoAndExitsOneWhenTheCollectorIsKilled() throws {
        let fixture = try DaemonFixture()
        let host = try ChildProcess("sample-nodes", ["--quiet", "--hold", "20"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        _ = try fixture.waitForProcesses { $0.contains { $0.processName == "sample-nodes" && $0.liveNodes == 5 } }
        let attach = try ChildProcess("nodescope", ["attach", "sample-nodes", "--socket", fixture.socket])
        #expect(attach.waitForLine(prefix: "AppFlow") != nil)
        fixture.daemon.signal(SIGKILL)
        #expect(attach.waitForExit(seconds: 20) == 1)
        #expect(attach.stderr.contains("went away"), "\(attach.stderr)")
        #expect(attach.stderr.contains(fixture.socket))
    }

    @Test func attachByNameWaitsForALiveProcessInsteadOfAnEndedOne() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let first = try ChildProcess("sample-nodes", ["--quiet"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        #expect(first.waitForExit() == 0)
        _ = try fixture.waitForProcesses { $0.contains { $0.processName == "sample-nodes" && !$0.isConnected } }

        // Only the ended one matches, and no other comes: a message naming it, exit 1.
        let alone = try fixture.finished(["attach", "sample-nodes", "--wait", "1"])
        #expect(alone.process.terminationStatus == 1)
        #expect(alone.stderr.contains("matches only a process that has ended"), "\(alone.stderr)")

        // A live one that connects while attach waits is the one it watches, until it ends.
        let attach = try ChildProcess("nodescope", ["attach", "sample-nodes", "--wait", "20", "--socket", fixture.socket])
        Thread.sleep(forTimeInterval: 0.5)
        let second = try ChildProcess("sample-nodes", ["--quiet", "--hold", "1"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        #expect(attach.waitForExit(seconds: 30) == 0, "\(attach.stderr)")
        #expect(second.waitForExit() == 0)
        #expect(attach.stdout.contains("[pid \(second.process.processIdentifier)]"), "\(attach.stdout)")
    }

    @Test func leaksWaitsForAGraceThatIsStillRunningAndSaysWhenItCannot() throws {
        let fixture = try DaemonFixture(arguments: ["--grace", "1s"])
        defer { fixture.stop() }
        // The leak's node detaches at the end of the script; right after, its grace is running.
        let host = try ChildProcess(
            "sample-nodes", ["--leak", "retain-cycle", "--quiet", "--hold", "20"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        _ = try fixture.waitForProcesses { $0.contains { $0.processName == "sample-nodes" && $0.awaitingRelease > 0 } }
        let report = try fixture.finished(["leaks", "sample-nodes"])
        #expect(report.process.terminationStatus == 0)
        #expect(report.stdout.contains("ProfileFlow"), "\(report.stdout)\(report.stderr)")

        // A host that is stopped vouches for nothing: the node stays awaiting release, and
        // `leaks` says so instead of "no leaks".
        let stopped = try ChildProcess(
            "sample-nodes", ["--leak", "worker", "--quiet", "--hold", "20"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { stopped.stop() }
        let pid = stopped.process.processIdentifier
        _ = try fixture.waitForProcesses { $0.contains { $0.pid == pid && $0.awaitingRelease > 0 } }
        stopped.signal(SIGSTOP)
        defer { stopped.signal(SIGCONT) }
        let pending = try fixture.finished(["leaks", "\(pid)", "--wait", "1"])
        #expect(pending.process.terminationStatus == 0)
        #expect(pending.stderr.contains("still awaiting release"), "\(pending.stderr)")
    }

    @Test func psShowsTheProcessesOwnUptime() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let host = try ChildProcess("sample-nodes", ["--quiet", "--hold", "20"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        let listed = try fixture.waitForProcesses { $0.contains { $0.processName == "sample-nodes" } }
        let summary = try #require(listed.first { $0.pid == UInt32(host.process.processIdentifier) })
        let started = try #require(summary.startedAtNanos)
        #expect(started <= summary.connectedAtNanos)
        // Not something absurd: the sample started at most a minute before it connected.
        #expect(summary.connectedAtNanos - started < 60_000_000_000)
        let table = try fixture.finished(["ps"])
        #expect(table.stdout.contains("UPTIME"))
        #expect(!table.stdout.contains("*"), "every process here is visible to the collector")
    }

    @Test func outputsThatCannotBeWrittenFailAtOnceWithTheReason() throws {
        let scratch = makeScratchDirectory()
        let export = try ChildProcess("nodescope", ["export", "sample-nodes", "-o", scratch.path, "--format", "svg"])
        #expect(export.waitForExit() == 2)
        #expect(export.stderr.contains("is a directory"), "\(export.stderr)")
        #expect(!export.stderr.contains("NSCocoaErrorDomain"))

        let started = Date()
        let demo = try ChildProcess("nodescope", ["demo", "-o", "/nonexistent/x.svg"])
        #expect(demo.waitForExit() == 2)
        #expect(demo.stderr.contains("/nonexistent does not exist"), "\(demo.stderr)")
        #expect(Date().timeIntervalSince(started) < 3, "the demo (about 4 s) should not have run")

        let leak = try ChildProcess("nodescope", ["demo", "--leak", "bogus"])
        #expect(leak.waitForExit() == 2)
        #expect(leak.stderr.contains("retain-cycle"), "\(leak.stderr)")

        let longPath = "/tmp/" + String(repeating: "a", count: 120)
        let ps = try ChildProcess("nodescope", ["ps", "--socket", longPath])
        #expect(ps.waitForExit() == 2)
        #expect(ps.stderr.contains("longer than a Unix socket allows"), "\(ps.stderr)")
    }

    @Test func exportSaysHowMuchItDrewAndDrawsEverythingWhenAsked() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let host = try ChildProcess(
            "sample-nodes", ["--quiet", "--nodes", "300", "--hold", "20"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        _ = try fixture.waitForProcesses { $0.contains { $0.processName == "sample-nodes" && $0.liveNodes > 300 } }
        let scratch = makeScratchDirectory()
        let folded = try fixture.finished(["export", "sample-nodes", "-o", scratch.appendingPathComponent("t.svg").path])
        #expect(folded.process.terminationStatus == 0, "\(folded.stderr)")
        let foldedLine = try #require(folded.stderr.split(separator: "\n").last.map(String.init))
        #expect(foldedLine.contains("folded into placeholders"), "\(foldedLine)")
        #expect(foldedLine.contains("--expand"))

        let expanded = try fixture.finished(["export", "sample-nodes", "--expand", "-o", scratch.appendingPathComponent("all.svg").path])
        #expect(expanded.stderr.contains("all "), "\(expanded.stderr)")
        #expect(!expanded.stderr.contains("folded"))
        let svg = try String(contentsOf: scratch.appendingPathComponent("all.svg"), encoding: .utf8)
        #expect(!svg.contains("more FeedItemFlow"))
        // The whole real tree, 300 items under one feed, is drawn near a page's shape.
        let size = try #require(Self.rootSize(of: svg))
        #expect(size.width / size.height <= 4 && size.width / size.height >= 0.25, "\(size)")

        // A page it cannot fit at 8 pt: drawn at the smallest readable scale, and said so.
        let page = try fixture.finished([
            "export", "sample-nodes", "--expand", "--fit", "a4", "-o", scratch.appendingPathComponent("a4.svg").path,
        ])
        #expect(page.process.terminationStatus == 0, "\(page.stderr)")
        #expect(page.stderr.contains("does not fit a4 (595 × 842 pt) at a readable size"), "\(page.stderr)")
        #expect(page.stderr.contains("--root") && page.stderr.contains("--depth"))
        let bad = try ChildProcess(
            "nodescope", ["export", "sample-nodes", "--fit", "huge", "-o", scratch.appendingPathComponent("x.svg").path])
        #expect(bad.waitForExit() == 2)
        #expect(bad.stderr.contains("--fit takes a page name"), "\(bad.stderr)")

        // DOT is data: whole by default.
        let dot = try fixture.finished(["export", "sample-nodes", "-o", scratch.appendingPathComponent("t.dot").path])
        #expect(dot.stderr.contains("all "), "\(dot.stderr)")
        let dotText = try String(contentsOf: scratch.appendingPathComponent("t.dot"), encoding: .utf8)
        #expect(!dotText.contains("more FeedItemFlow"))
    }

    @Test func everySamplesDefaultExportIsNearAPagesShape() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let scratch = makeScratchDirectory()
        // Each sample at rest, with the nodes it then has (SamplesTests has their trees).
        for (sample, nodes) in [("sample-nodes", 5), ("sample-ribs", 3), ("sample-viper", 5), ("sample-bfg", 4), ("sample-modules", 3)] {
            let host = try ChildProcess(sample, ["--quiet", "--hold", "20"], environment: ["NODESCOPE_SOCKET": fixture.socket])
            defer { host.stop() }
            _ = try fixture.waitForProcesses { $0.contains { $0.processName == sample && $0.isConnected && $0.liveNodes >= nodes } }
            let file = scratch.appendingPathComponent("\(sample).svg")
            let export = try fixture.finished(["export", sample, "-o", file.path])
            #expect(export.process.terminationStatus == 0, "\(export.stderr)")
            let size = try #require(Self.rootSize(of: try String(contentsOf: file, encoding: .utf8)))
            #expect(size.width / size.height <= 4 && size.width / size.height >= 0.25, "\(sample): \(size)")
        }
    }

    @Test func aHostThatExitsIsNotAWarningInTheDaemonsLog() throws {
        let fixture = try DaemonFixture()
        let host = try ChildProcess("sample-nodes", ["--quiet"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        #expect(host.waitForExit() == 0)
        _ = try fixture.waitForProcesses { $0.contains { $0.processName == "sample-nodes" && !$0.isConnected } }
        fixture.daemon.signal(SIGTERM)
        fixture.daemon.waitForExit()
        #expect(!fixture.daemon.stderr.contains("warning"), "\(fixture.daemon.stderr)")
        #expect(!fixture.daemon.stderr.contains("reset by peer"))
    }

    /// The root `<svg>` element's width and height in points.
    static func rootSize(of svg: String) -> (width: Double, height: Double)? {
        func value(_ name: String) -> Double? {
            guard let start = svg.range(of: " \(name)=\""), let end = svg[start.upperBound...].range(of: "pt\"") else { return nil }
            return Double(svg[start.upperBound..<end.lowerBound])
        }
        guard let width = value("width"), let height = value("height") else { return nil }
        return (width, height)
    }
}
