import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeControl
import NodescopeReports

/// `nodescope ps`: the processes the daemon knows.
struct PsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ps",
        abstract:
            "List host processes (connected, and recently ended): pid, name, uptime, state, and their nodes: attached, leaked, unverified, released late."
    )

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() async throws {
        let processes = try await ControlClient.connect(to: connection.socketPath) { client in
            try await client.request(.listProcesses, as: [ProcessSummary].self)
        }
        if json {
            Terminal.write(Terminal.prettyJSON(processes))
            return
        }
        guard !processes.isEmpty else {
            Terminal.write("no host processes connected\n")
            return
        }
        let now = DispatchTime.now().uptimeNanoseconds
        var rows = [["PID", "NAME", "UPTIME", "STATE", "NODES"]]
        var sinceConnecting = false
        for process in processes {
            // The process's own uptime (until it ended), else the time since it connected.
            let end = process.endedAtNanos ?? now
            let start = process.startedAtNanos ?? process.connectedAtNanos
            sinceConnecting = sinceConnecting || process.startedAtNanos == nil
            rows.append([
                "\(process.pid)", VisibleText.escaped(process.processName),
                Vocabulary.duration(end >= start ? end - start : 0) + (process.startedAtNanos == nil ? "*" : ""),
                Self.state(process), Vocabulary.nodeCounts(process.counts),
            ])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let padded = row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
            Terminal.write(padded.joined(separator: "  ").trimmingCharacters(in: .whitespaces) + "\n")
        }
        let cut = processes.filter { $0.end == .exitFlushCut && $0.counts.exitFlushCut > 0 }
        if !cut.isEmpty {
            Terminal.write(
                "exit flush cut: some nodes are unverified because the exit flush ran out of time; raise "
                    + "NODESCOPE_EXIT_FLUSH=SECONDS, or run the app under `nodescope check` (it holds the exit)\n")
        }
        if sinceConnecting {
            Terminal.write("* since it connected: the collector cannot see when that process started\n")
        }
    }

    /// `connected`, `exited`, `exited, exit flush cut`, `agent off`, `ended abnormally`.
    static func state(_ process: ProcessSummary) -> String {
        switch process.end {
        case nil: "connected"
        case .normalExit?: "exited"
        case .exitFlushCut?: "exited, exit flush cut"
        case .agentDisabled?: "agent off"
        case .abnormal?: "ended abnormally"
        }
    }
}
