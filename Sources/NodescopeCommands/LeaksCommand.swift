import ArgumentParser
import Foundation
import NodescopeCollector
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

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var waiting: WaitOptions

    func run() async throws {
        try ControlClient.checkPlace(of: connection.socketPath)
        if process == nil, !CollectorServer.isAnswering(at: connection.socketPath) {
            throw CLIError(
                "no daemon runs on \(connection.socketPath); `nodescope leaks` without a process reports what a "
                    + "daemon has collected: start one with `nodescope daemon`, or name a process to wait for",
                exitCode: 1)
        }
        let access = CollectorAccess(socketPath: connection.socketPath, waitSeconds: waiting.wait, settings: .init())
        let (leaks, processes) = try await access.run(waitingFor: process) { client in
            do {
                return try await (
                    client.request(.leaks, argument: process ?? "", as: [LeakRecord].self),
                    client.request(.listProcesses, as: [ProcessSummary].self))
            } catch let refusal as ControlClient.Refusal {
                throw CLIError(CollectorAccess.explain(refusal), exitCode: 1)
            }
        }
        switch format {
        case .json: Terminal.write(String(decoding: ControlBody.encodePretty(leaks), as: UTF8.self) + "\n")
        case .text: Terminal.write(LeakText.render(leaks, now: DispatchTime.now().uptimeNanoseconds))
        case .junit, .sarif:
            // The same reports as `check`, for a running process: no command, no baseline.
            let sessions = Set(leaks.map(\.session))
            let outcome = CheckOutcome(
                command: ["nodescope", "leaks"] + (process.map { [$0] } ?? []), termination: .exited(0),
                findings: CheckFindings(
                    processes: processes.filter { sessions.contains($0.session) }, leaks: leaks, trees: [:]),
                baseline: nil, baselineFile: nil, baselineOutput: nil, strict: false, graceNanos: 0)
            Terminal.write(format == .junit ? ReportJUnit.render(outcome) : ReportSARIF.render(outcome))
        }
    }
}
