import Foundation
import ProcessTestSupport
import Testing

/// One source for live and recorded trees (``TreeSource``): every reading command, and the web
/// view's API, answer the same about a process that a daemon still holds and about its
/// recording at the end.
@Suite("One source: live and recorded answers", .serialized, .offTheCooperativePool)
struct OneSourceTests {
    /// A leaking sample recorded by `nodescope record` through a daemon, run to its normal end.
    /// Returns the fixture (its daemon still holding the ended process), the pid and the file.
    static func recordedLeakyRun() throws -> (DaemonFixture, Int32, String) {
        let fixture = try DaemonFixture()
        let file = makeScratchDirectory().appendingPathComponent("run.nsrec").path
        let recorder = try ChildProcess("nodescope", ["record", "sample-nodes", "-o", file, "--socket", fixture.socket])
        defer { recorder.stop() }
        // The recording starts at the hello of the next sample-nodes.
        Thread.sleep(forTimeInterval: 0.3)
        let host = try ChildProcess(
            "sample-nodes", ["--quiet", "--leak", "retain-cycle", "--pace", "20"],
            environment: ["NODESCOPE_SOCKET": fixture.socket, "NODESCOPE_RETAINER_MS": "20000"])
        #expect(host.waitForExit(seconds: 60) == 0, "\(host.stderr)")
        #expect(recorder.waitForExit(seconds: 30) == 0, "\(recorder.stderr)")
        return (fixture, host.process.processIdentifier, file)
    }

    @Test func everyReadingCommandAnswersTheSameLiveAndFromTheRecording() throws {
        let (fixture, pid, file) = try Self.recordedLeakyRun()
        defer { fixture.stop() }
        let root = "LoggedInFlow"
        // Each reading command as it asks a collector, and its arguments after the source.
        let commands: [(name: String, after: [String])] = [
            ("tree", []), ("tree", ["--json"]), ("tree", ["--root", root, "--depth", "1"]),
            ("tree", ["--root", root, "--json"]),
            ("leaks", []), ("leaks", ["--format", "json"]), ("leaks", ["--format", "junit"]),
            ("leaks", ["--format", "sarif"]),
            ("export", ["-o", "-", "--format", "svg"]), ("export", ["-o", "-", "--format", "dot"]),
            ("export", ["-o", "-", "--format", "json"]), ("export", ["-o", "-", "--root", root]),
            ("export", ["-o", "-", "--format", "json", "--root", root, "--depth", "1"]),
        ]
        var leakCount = 0
        for command in commands {
            let live = try fixture.finished([command.name, "\(pid)"] + command.after)
            let recorded = try fixture.finished([command.name, "--from", file] + command.after)
            let shown = ([command.name] + command.after).joined(separator: " ")
            #expect(live.process.terminationStatus == 0, "\(shown) live: \(live.stderr)")
            #expect(recorded.process.terminationStatus == 0, "\(shown) recorded: \(recorded.stderr)")
            #expect(!live.stdout.isEmpty, "\(shown)")
            // Byte for byte: a diagram's title and a tree's `wallNanos` say when the tree stood
            // so, the ended process's end, the same live and recorded.
            let liveOutput = live.stdout
            let recordedAsLive = Self.asLive(recorded.stdout, file: file, pid: pid)
            #expect(
                liveOutput == recordedAsLive,
                "\(shown): live and recorded differ:\n\(Self.firstDifference(liveOutput, recordedAsLive))")
            if command.name == "tree", command.after.contains("--json") {
                #expect(live.stdout.contains("\"wallNanos\":"), "\(shown): the tree says when it stood so")
            }
            if command.name == "export", command.after.contains("svg") {
                #expect(live.stdout.contains("] at "), "the diagram's title says when the tree stood so")
            }
            if command.name == "leaks", command.after.isEmpty {
                leakCount = live.stdout.split(separator: "\n").filter { $0.contains("LEAKED") || $0.contains("leaked") }.count
            }
        }
        #expect(leakCount > 0, "the sample's leak is not in the report, so the comparison shows little")
        // export's JSON of a subtree is tree's JSON of it, byte for byte, not the whole tree's:
        // the closures on retainer paths named in both (export decodes the collector's document,
        // `tree --json` names them as the document streams past).
        let subtree = ["--root", root, "--depth", "1"]
        for operands in [[], subtree] {
            let exported = try fixture.finished(["export", "\(pid)", "-o", "-", "--format", "json"] + operands)
            let treeJSON = try fixture.finished(["tree", "\(pid)", "--json"] + operands)
            #expect(
                exported.stdout == treeJSON.stdout,
                "\(operands): export and tree differ:\n\(Self.firstDifference(exported.stdout, treeJSON.stdout))")
            if operands.isEmpty {
                #expect(
                    treeJSON.stdout.contains("\"symbol\":\"closure #1 in ProfileContextImp.didBecomeActive()\""),
                    "tree --json names the leaking closure: \(treeJSON.stdout.prefix(400))")
            }
        }
        let (subtreeNodes, wholeNodes) = (
            Self.nodeIDs(try fixture.finished(["tree", "\(pid)", "--json"] + subtree).stdout),
            Self.nodeIDs(try fixture.finished(["tree", "\(pid)", "--json"]).stdout)
        )
        #expect(!subtreeNodes.isEmpty, "the subtree has nodes")
        #expect(subtreeNodes.count < wholeNodes.count, "the subtree has fewer nodes than the whole tree: \(wholeNodes)")
        // diff: the live tree and the recording's end are the same tree (exit 0).
        let diff = try fixture.finished(["diff", "\(pid)", file])
        #expect(diff.process.terminationStatus == 0, "\(diff.stdout)\(diff.stderr)")
        // A question the source refuses is refused alike, with the same words.
        let missingLive = try fixture.finished(["tree", "\(pid)", "--root", "NoSuchFlow"])
        let missingRecorded = try fixture.finished(["tree", "--from", file, "--root", "NoSuchFlow"])
        #expect(missingLive.process.terminationStatus == 1)
        #expect(missingRecorded.process.terminationStatus == 1)
        #expect(missingLive.stderr == missingRecorded.stderr, "\(missingLive.stderr) vs \(missingRecorded.stderr)")
    }

    /// What `attach` prints as it comes names the closure as `leaks` does: the "why alive" line
    /// of the leaking node says where the reference to cut is made.
    @Test func attachNamesTheClosureOfTheRetainerPathsItPrints() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let attach = try ChildProcess("nodescope", ["attach", "sample-nodes", "--wait", "30", "--socket", fixture.socket])
        defer { attach.stop() }
        let host = try ChildProcess(
            "sample-nodes", ["--quiet", "--leak", "retain-cycle", "--pace", "20"],
            environment: ["NODESCOPE_SOCKET": fixture.socket, "NODESCOPE_RETAINER_MS": "20000"])
        #expect(host.waitForExit(seconds: 60) == 0, "\(host.stderr)")
        #expect(attach.waitForExit(seconds: 30) == 0, "\(attach.stderr)")
        let sourceLine = try Self.line(of: "session.onChange { user in self.displayName", in: "Samples/sample-nodes/ProfileNode.swift")
        let whyAlive = attach.stdout.split(separator: "\n").filter { $0.contains("why alive") && $0.contains("ProfileFlow") }
        #expect(!whyAlive.isEmpty, "attach printed no why-alive line for ProfileFlow:\n\(attach.stdout)")
        #expect(
            whyAlive.contains { $0.contains(", made at ProfileNode.swift:\(sourceLine)") }, "\(whyAlive.joined(separator: "\n"))")
    }

    /// The 1-based line of `file` (from the package's root) that contains `text`.
    static func line(of text: String, in file: String) throws -> Int {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let lines = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.contains(text) }) + 1
    }

    @Test func theWebViewAnswersTheSameLiveAndFromTheRecording() throws {
        let (fixture, pid, file) = try Self.recordedLeakyRun()
        defer { fixture.stop() }
        let live = try WebViewBoundsEndToEndTests.WebView(socket: fixture.socket)
        defer { live.process.stop() }
        let recorded = try WebViewBoundsEndToEndTests.WebView(socket: fixture.socket, arguments: ["--from", file])
        defer { recorded.process.stop() }
        for path in ["/api/tree", "/api/leaks", "/api/diagram", "/api/diagram?format=dot&root=LoggedInFlow"] {
            let separator = path.contains("?") ? "&" : "?"
            let liveAnswer = Self.get(live, path + separator + "process=\(pid)")
            let recordedAnswer = Self.get(recorded, path)
            #expect(liveAnswer.status == 200, "\(path) live: \(liveAnswer.body.prefix(300))")
            #expect(recordedAnswer.status == 200, "\(path) recorded: \(recordedAnswer.body.prefix(300))")
            #expect(
                liveAnswer.body == recordedAnswer.body,
                "\(path): live and recorded differ:\n\(Self.firstDifference(liveAnswer.body, recordedAnswer.body))")
        }
        // The tree and the recording's instant name the leaking closure, as the leaks do.
        let symbol = "\"symbol\":\"closure #1 in ProfileContextImp.didBecomeActive()\""
        for (name, answer) in [
            ("live /api/tree", Self.get(live, "/api/tree?process=\(pid)")), ("recorded /api/tree", Self.get(recorded, "/api/tree")),
            ("/api/leaks", Self.get(live, "/api/leaks?process=\(pid)")), ("/api/instant", Self.get(recorded, "/api/instant?at=end")),
        ] {
            #expect(answer.body.contains(symbol), "\(name) names the closure: \(answer.body.prefix(300))")
        }
        // The processes: the recording holds the one that the daemon also holds.
        let liveProcesses = Self.get(live, "/api/processes").body
        let recordedProcesses = Self.get(recorded, "/api/processes").body
        #expect(recordedProcesses.hasPrefix("[{") && liveProcesses.contains("\"pid\":\(pid)"))
        #expect(recordedProcesses.contains("\"pid\":\(pid)"))
    }

    /// A GET with the page's cookie: the status and the body (read until the server closes).
    static func get(_ web: WebViewBoundsEndToEndTests.WebView, _ target: String) -> (status: Int, body: String) {
        guard let connection = TCPConnection(port: web.port) else { return (0, "no connection") }
        defer { connection.close() }
        connection.send(web.request("GET", target, extraHeaders: ["Connection: close"]))
        let head = connection.readHead(within: 30)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        var body = connection.readBody(within: 30)
        if head.lowercased().contains("transfer-encoding: chunked") { body = Self.unchunked(body) }
        return (status, body)
    }

    /// A chunked body joined.
    static func unchunked(_ text: String) -> String {
        var rest = Substring(text)
        var joined = ""
        while let lineEnd = rest.range(of: "\r\n") {
            guard let size = Int(rest[..<lineEnd.lowerBound], radix: 16), size > 0 else { break }
            let start = rest.utf8.index(lineEnd.upperBound, offsetBy: 0)
            let end = rest.utf8.index(start, offsetBy: size)
            joined += rest[start..<end]
            rest = rest[end...].dropFirst(2)
        }
        return joined
    }

    /// Reports name the command that made them (JUnit's properties, SARIF's invocation): the
    /// recorded report's command line written as the live one's, `--from FILE` as the pid.
    static func asLive(_ text: String, file: String, pid: Int32) -> String {
        var lines = text.replacingOccurrences(of: "--from \(file)", with: "\(pid)")
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // SARIF's arguments, one a line: "--from", "FILE" becomes "PID".
        var index = 0
        while index + 1 < lines.count {
            let (line, next) = (lines[index], lines[index + 1])
            if line.trimmingCharacters(in: .whitespaces) == "\"--from\",",
                next.trimmingCharacters(in: .whitespaces).hasPrefix("\"\(file)\"")
            {
                lines[index] = next.replacingOccurrences(of: file, with: "\(pid)")
                lines.remove(at: index + 1)
            }
            index += 1
        }
        return lines.joined(separator: "\n")
    }

    /// Where two texts first differ, with a little context.
    /// The ids of the nodes of a tree in JSON, in its order.
    static func nodeIDs(_ json: String) -> [Int] {
        guard let document = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            let nodes = document["nodes"] as? [[String: Any]]
        else { return [] }
        return nodes.compactMap { $0["id"] as? Int }
    }

    static func firstDifference(_ a: String, _ b: String) -> String {
        let (left, right) = (Array(a), Array(b))
        var index = 0
        while index < min(left.count, right.count), left[index] == right[index] { index += 1 }
        let from = max(0, index - 120)
        return
            "live: …\(String(left[from..<min(left.count, index + 120)]))…\nrecorded: …\(String(right[from..<min(right.count, index + 120)]))…"
    }
}
