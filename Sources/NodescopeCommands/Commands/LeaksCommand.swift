import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeControl
import NodescopeReports
import NodescopeServer

/// `nodescope leaks PID|NAME`: the leak report.
struct LeaksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leaks", abstract: "Print the leak report of a process (or of every process).")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, junit, sarif
    }

    @Argument(help: "The process: a pid or a process name. Every process when omitted (needs a daemon).")
    var process: String?

    @Option(help: "Output format: text, json, junit or sarif (the last two as `check` writes them).")
    var format: Format = .text

    @Option(help: "Report the leaks of this recording (see `nodescope record`) at --at, instead of a collector's.")
    var from: String?

    @OptionGroup var replay: ReplayOptions

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var waiting: WaitOptions

    func validate() throws {
        if process?.isEmpty == true {
            throw ValidationError("the process is empty: give a pid or a process name, or none for every process")
        }
        if process != nil, from != nil { throw ValidationError("give either a process or --from, not both") }
        if replay.at != nil, from == nil { throw ValidationError("--at reads a recording: give --from RECORDING") }
        _ = try replay.instant()
    }

    func run() async throws {
        if let from {
            let replayed = try RecordingInput.replay(from, at: try replay.instant())
            let leaks = replayed.collector.leaks(replayed.session)
            let sessions = Set(leaks.map(\.session))
            let processes = replayed.collector.processes().filter { sessions.contains($0.session) }
            render(leaks: leaks, processes: processes)
            return
        }
        try ControlClient.checkPlace(of: connection.socketPath)
        if process == nil, !CollectorServer.isAnswering(at: connection.socketPath) {
            throw CLIError(
                "no daemon runs on \(connection.socketPath); `nodescope leaks` without a process reports what a "
                    + "daemon has collected: start one with `nodescope daemon`, or name a process to wait for",
                exitCode: 1)
        }
        let access = CollectorAccess(socketPath: connection.socketPath, waitSeconds: waiting.wait, settings: .init())
        let waitSeconds = waiting.wait
        let (leaks, processes, (awaiting, named)) = try await access.run(waitingFor: process) { client in
            let settled = try await Self.settle(process, client: &client, waitSeconds: waitSeconds)
            return try await (
                client.request(.leaks, argument: process ?? "", as: [LeakRecord].self),
                client.request(.listProcesses, as: [ProcessSummary].self), settled
            )
        }
        if awaiting > 0 {
            Terminal.note(
                "\(awaiting) detached \(awaiting == 1 ? "node is" : "nodes are") still awaiting release (the grace has "
                    + "not run out by the process's own clock); run again later for \(awaiting == 1 ? "its" : "their") verdict")
        }
        let sessions = Set(leaks.map(\.session))
        // The process named is covered even without a leak (its counts are reported).
        let covered = processes.filter {
            process == nil ? sessions.contains($0.session) || $0.isConnected : sessions.contains($0.session) || $0.session == named
        }
        render(leaks: leaks, processes: covered)
    }

    /// Prints the report of `leaks` about the `covered` processes, in the format asked.
    private func render(leaks: [LeakRecord], processes covered: [ProcessSummary]) {
        // JSON is the collector's own records, with the counts and the cut exit flushes (one
        // entry a process, not one a node) of the processes covered. The other formats: the same report model and
        // writers as `check`, about what the collector holds now; no command ran, so they state
        // no command result and no exit code.
        let graces = Set(covered.map(\.graceNanos))
        var report = LeakReport(leaks: leaks, processes: covered, graceNanos: graces.count == 1 ? graces.first : nil)
        report.sourceRoot = SourceRoot.resolve(nil)
        let subject = ReportSubject.collector(report, commandLine: ["nodescope"] + Array(CommandLine.arguments.dropFirst()))
        switch format {
        case .json: Terminal.write(Terminal.prettyJSON(LeaksDocument(records: leaks, processes: covered)))
        case .text: Terminal.write(ReportText.render(subject, colorful: Terminal.isColorful))
        case .junit: Terminal.write(ReportJUnit.render(subject))
        case .sarif: Terminal.write(ReportSARIF.render(subject))
        }
    }

    /// Waits until no node of the process (of every connected process when nil) is awaiting
    /// release, so that a node detached just before the command is reported with its verdict.
    /// The wait is bounded by one grace and a second (a host vouches for its time every 50 ms
    /// while a grace runs) and by `--wait`. Returns how many nodes still await release, and the
    /// session of the process named.
    private static func settle(
        _ process: String?, client: inout ControlClient, waitSeconds: Double
    ) async throws -> (awaiting: Int, session: SessionID?) {
        var session: SessionID?
        if let process { session = try await client.request(.tree, argument: process, depth: 1, as: TreeView.self).session }
        var deadline: Date?
        while true {
            let summaries = try await client.request(.listProcesses, as: [ProcessSummary].self)
                .filter { session == nil ? $0.isConnected : $0.session == session }
            let awaiting = summaries.reduce(0) { $0 + $1.awaitingRelease }
            guard awaiting > 0 else { return (0, session) }
            let grace = Double(summaries.map(\.graceNanos).max() ?? 0) / 1e9
            let end = deadline ?? Date().addingTimeInterval(min(waitSeconds, grace + 1))
            deadline = end
            guard Date() < end else { return (awaiting, session) }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
