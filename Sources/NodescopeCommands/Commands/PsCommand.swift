import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeControl
import NodescopeReports

/// `nodescope ps`: the processes the daemon knows.
struct PsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ps", abstract: "List host processes (connected, and recently ended): pid, name, uptime, live nodes, leaks, state.")

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
        var rows = [["PID", "NAME", "UPTIME", "NODES", "LEAKS", "STATE"]]
        var sinceConnecting = false
        for process in processes {
            // The process's own uptime (until it ended), else the time since it connected.
            let end = process.endedAtNanos ?? now
            let start = process.startedAtNanos ?? process.connectedAtNanos
            sinceConnecting = sinceConnecting || process.startedAtNanos == nil
            let state = process.endedAtNanos == nil ? "connected" : (process.endedNormally == true ? "exited" : "ended abnormally")
            rows.append([
                "\(process.pid)", VisibleText.escaped(process.processName),
                Vocabulary.duration(end >= start ? end - start : 0) + (process.startedAtNanos == nil ? "*" : ""),
                "\(process.liveNodes)", "\(process.leaks)", state,
            ])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let padded = row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
            Terminal.write(padded.joined(separator: "  ").trimmingCharacters(in: .whitespaces) + "\n")
        }
        if sinceConnecting {
            Terminal.write("* since it connected: the collector cannot see when that process started\n")
        }
    }
}
