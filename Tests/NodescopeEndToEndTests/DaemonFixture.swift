import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

/// A real `nodescope daemon` on a scratch socket, and the CLI run against it.
struct DaemonFixture {
    let socket: String
    let daemon: ChildProcess

    /// Starts a daemon on `socket` (a fresh scratch path by default) and waits until it answers.
    init(socket: String? = nil, arguments: [String] = []) throws {
        self.socket = socket ?? makeScratchDirectory().appendingPathComponent("d.sock").path
        daemon = try ChildProcess(
            "nodescope", ["daemon", "--socket", self.socket, "--log-level", "notice"] + arguments)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: self.socket), (try? run(["ps"]).status) == 0 { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Issue.record("the daemon did not start on \(self.socket)")
    }

    /// Runs `nodescope ARGS --socket SOCKET` to completion; its status and standard output.
    func run(_ arguments: [String], seconds: Double = 30) throws -> (status: Int32, output: String) {
        let process = try finished(arguments, seconds: seconds)
        return (process.process.terminationStatus, process.stdout)
    }

    /// Runs `nodescope ARGS --socket SOCKET` to completion and returns it, with both outputs.
    func finished(_ arguments: [String], environment: [String: String] = [:], seconds: Double = 30) throws -> ChildProcess {
        let process = try ChildProcess("nodescope", arguments + ["--socket", socket], environment: environment)
        process.waitForExit(seconds: seconds)
        return process
    }

    /// The processes the daemon lists.
    func processes() throws -> [ProcessSummary] {
        let (status, output) = try run(["ps", "--json"])
        #expect(status == 0)
        return try JSONDecoder().decode([ProcessSummary].self, from: Data(output.utf8))
    }

    /// The leak records of one process.
    func leaks(_ process: String) throws -> [LeakRecord] {
        let (_, output) = try run(["leaks", process, "--format", "json"])
        return (try? JSONDecoder().decode(LeaksJSON.self, from: Data(output.utf8)))?.leaks ?? []
    }

    /// Waits until `condition` holds on the listed processes, at most `seconds`.
    func waitForProcesses(seconds: Double = 10, _ condition: ([ProcessSummary]) -> Bool) throws -> [ProcessSummary] {
        let deadline = Date().addingTimeInterval(seconds)
        var last: [ProcessSummary] = []
        while Date() < deadline {
            last = try processes()
            if condition(last) { return last }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return last
    }

    /// The daemon's resident memory, in bytes (from /proc).
    var residentBytes: Int {
        let status = (try? String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        return kilobytes * 1024
    }

    func stop() { daemon.stop() }
}

/// The part of `nodescope leaks --format json` these tests read: the leak records.
struct LeaksJSON: Decodable {
    /// The records, without the nodes of cut exit flushes.
    var leaks: [LeakRecord]
}
