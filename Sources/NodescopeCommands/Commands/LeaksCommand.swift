import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeReports
import NodescopeSource

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

    @OptionGroup var source: SourceOptions

    func validate() throws {
        if process?.isEmpty == true {
            throw ValidationError("the process is empty: give a pid or a process name, or none for every process")
        }
        try source.check(process: process, needsProcess: false)
    }

    func run() async throws {
        let (process, waitSeconds) = (self.process, source.waiting.wait)
        let (leaks, processes, awaiting, named) = try await source.withSource(for: process, command: "leaks") { source in
            // Nodes detached just before the command get their verdicts first (a collector's
            // hosts give them within a grace; a recording's instant is fixed).
            let awaiting = try await source.awaitingRelease(of: process, settlingWithin: waitSeconds)
            var named: SessionID?
            if let process { named = try await source.session(of: process) }
            return try await (source.leaks(of: process), source.processes(), awaiting, named)
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
}
