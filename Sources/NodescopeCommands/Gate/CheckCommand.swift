import ArgumentParser
import Foundation
import Glibc
import NodescopeCollector
import NodescopeExport
import NodescopeReports

/// `nodescope check [options] -- CMD …`: runs a command with a private collector, then gates on
/// the leaks of every process it started. See docs/CHECK.md.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Run a command with a private collector, then fail if its processes leaked nodes.",
        usage: "nodescope check [<options>] -- <command> [<argument> ...]",
        discussion: """
            Starts a private collector on a socket of its own and runs the command with \
            NODESCOPE_SOCKET pointing at it, so that every process the command starts reports its \
            node tree (for `swift test`: the test runners). When the command has ended and its \
            processes have said goodbye, every node detached during the run is judged: a node with \
            objects still alive a grace (--grace) after its detach is a leak. Hosts hold a normal \
            exit until their last detaches are judged, so a leak made just before exit is caught. \
            Hosts explain each leak (what holds the node: a retain cycle, or a path of references \
            from a root); a node that only a global or static variable holds is reported apart \
            and does not fail the run unless --count-globals is given.

            Exit status:
              0  the command succeeded and there is no new leak
              1  new leaks (not in the baseline); with --strict, unverified too;
                 with --count-globals, nodes that only a global holds too
              N  the command's status when it failed; 128+S if signal S killed it
              2  usage or internal error: bad option, bad baseline, unwritable
                 report, the collector or the command cannot start

            A summary goes to standard error (not with --quiet); the command's own output passes \
            through untouched. Report formats and the baseline file are described in docs/CHECK.md.

            Examples:
              nodescope check -- swift test
              nodescope check --baseline known-leaks.json --junit leaks.xml -- swift test
              nodescope check --write-baseline known-leaks.json -- swift test
            """)

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How long a detached node may stay alive before it is a leak: 1s (the default), 500ms, 2.5 …", valueName: "duration"))
    var grace: DurationArgument?

    @Option(
        help: ArgumentHelp(
            "Known leaks to accept: a JSON file of fingerprints or path globs, each with a reason. They are reported as known and do not fail.",
            valueName: "file"))
    var baseline: String?

    @Option(
        name: .customLong("write-baseline"),
        help: ArgumentHelp(
            "Write this run's leaks as a baseline (reasons: kept from --baseline, else a TODO placeholder), and pass unless the command failed.",
            valueName: "file"))
    var writeBaseline: String?

    @Option(help: ArgumentHelp("Write the JSON report (schema: docs/check-report.schema.json); - for standard output.", valueName: "file"))
    var json: String?

    @Option(help: ArgumentHelp("Write a JUnit XML report: a failed test case per new leak.", valueName: "file"))
    var junit: String?

    @Option(help: ArgumentHelp("Write a SARIF 2.1.0 report for code-scanning tools.", valueName: "file"))
    var sarif: String?

    @Option(
        name: .customLong("svg-dir"),
        help: ArgumentHelp("Draw each leak in its tree: leak-<fingerprint>.svg in this directory (created if missing).", valueName: "dir"))
    var svgDir: String?

    @Option(
        name: .customLong("record"),
        help: ArgumentHelp(
            "Record each process's stream into this directory (created if missing), one file per process, to replay with tree, leaks and export --from FILE --at TIME.",
            valueName: "dir"))
    var recordDir: String?

    @Flag(help: "Fail on unverified nodes too: alive when their process ended abnormally (crash, kill), within the grace.")
    var strict = false

    @Flag(
        name: .customLong("count-globals"),
        help: ArgumentHelp(
            "Count as leaks the detached nodes that only a global or static variable holds (by default they are reported apart and do not fail)."
        ))
    var countGlobals = false

    @Flag(help: "Print no summary: only errors, and the signal that killed the command.")
    var quiet = false

    @Option(
        name: .customLong("source-root"),
        help: ArgumentHelp(
            "The directory that reports give source files relative to (SARIF's %SRCROOT%); default: the git work tree around the working directory, else the working directory.",
            valueName: "dir"))
    var sourceRoot: String?

    @Option(
        name: .customLong("wait-exit"),
        help: ArgumentHelp(
            "After the command ends, how long to wait for the processes it started to end (default 5s).", valueName: "duration"))
    var waitExit: DurationArgument?

    @OptionGroup var otlp: OTLPOptions

    /// How long a `check` waits for its OTLP export when no timeout variable says otherwise.
    static let otlpWaitMilliseconds = 500

    private var graceNanos: UInt64 { grace?.nanoseconds ?? 1_000_000_000 }
    private var waitExitNanos: UInt64 { waitExit?.nanoseconds ?? 5_000_000_000 }

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command to run and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    init() {}

    func validate() throws {
        guard let executable = command.first, !executable.isEmpty else {
            throw ValidationError("name the command to run after --, as in: nodescope check -- swift test (the -- is required)")
        }
        guard graceNanos > 0 else { throw ValidationError("--grace must be more than 0 (e.g. 1s or 500ms)") }
        for (option, file) in [("--json", json), ("--junit", junit), ("--sarif", sarif), ("--write-baseline", writeBaseline)] {
            guard let file else { continue }
            if file == "-", option == "--json" { continue }
            if let problem = OutputFile.problem(with: file) { throw ValidationError("\(option) \(file): \(problem)") }
        }
        if let svgDir, let problem = OutputFile.directoryProblem(svgDir) { throw ValidationError("--svg-dir \(svgDir): \(problem)") }
        if let recordDir, let problem = OutputFile.directoryProblem(recordDir) {
            throw ValidationError("--record \(recordDir): \(problem)")
        }
        if let sourceRoot {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: sourceRoot, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--source-root \(sourceRoot): no such directory")
            }
        }
        if let baseline {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: baseline, isDirectory: &isDirectory) else {
                throw ValidationError("--baseline \(baseline): no such file (write one with --write-baseline \(baseline))")
            }
            guard !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: baseline) else {
                throw ValidationError("--baseline \(baseline): not a readable file")
            }
        }
    }

    func run() async throws {
        try checkFileConflicts()
        // Read the baseline first: a malformed one is reported before a long command runs.
        let known = try baseline.map { file throws(CLIError) in try Self.loadBaseline(file) }
        if !quiet, let known, let baseline {
            let placeholders = known.entriesWithoutReason
            for entry in placeholders.prefix(ReportText.staleEntriesShown) {
                Terminal.note(
                    "warning: \(baseline):\(entry.line): \(entry.label) has no reason yet (\"\(VisibleText.escaped(entry.reason))\"); "
                        + "say why this leak is accepted, or fix it and remove the entry")
            }
            if placeholders.count > ReportText.staleEntriesShown {
                Terminal.note(
                    "warning: \(baseline): and \(placeholders.count - ReportText.staleEntriesShown) more entries have no reason yet")
            }
        }
        var recordDirectory: String?
        if let recordDir {
            do {
                try FileManager.default.createDirectory(atPath: recordDir, withIntermediateDirectories: true)
            } catch {
                throw CLIError("cannot create --record \(recordDir): \(error.localizedDescription)", exitCode: 2)
            }
            recordDirectory = URL(fileURLWithPath: recordDir).standardizedFileURL.path
        }
        let (otlpConfiguration, otlpNote) = otlp.resolve(defaultTimeoutMilliseconds: Self.otlpWaitMilliseconds)
        if let otlpNote { Terminal.note("check: \(otlpNote)") }
        let trace = otlpConfiguration?.target(.traces) == nil ? nil : TraceStart()
        let collector = try await CheckCollector.start(
            graceNanos: graceNanos, recordDirectory: recordDirectory, keepLifetimes: trace != nil)
        let termination: CheckTermination
        let findings: CheckFindings
        do {
            termination = try await CheckChildProcess.run(
                command, environment: environment(socket: collector.socketPath, trace: trace), directory: collector.directory)
        } catch {
            await collector.stop()
            throw error
        }
        do {
            findings = try await collector.settle(waitExitNanos: waitExitNanos) { CheckChildProcess.signalAfterExit != nil }
        } catch {
            // The command ran: its result and the failure still go into every report asked for.
            findings = CheckFindings(processes: [], leaks: [], trees: [:], collectorFailure: error.message)
        }
        await collector.stop()
        let recordingFailures = await collector.failedRecordings()

        var outcome = CheckOutcome(
            command: command, termination: termination, leaks: findings.leaks, processes: findings.processes,
            collectorFailure: findings.collectorFailure, baseline: known, baselineFile: baseline,
            baselineOutput: writeBaseline, strict: strict, countGlobals: countGlobals, graceNanos: graceNanos)
        outcome.report.sourceRoot = SourceRoot.resolve(sourceRoot)
        outcome.report.tests = findings.tests
        var problems: [String] = []
        func attempt(_ body: () throws -> Void) {
            do { try body() } catch { problems.append(CLIError(error)?.message ?? "\(error)") }
        }
        if let json { attempt { try OutputFile.write(ReportJSON.render(outcome), to: json) } }
        if let junit { attempt { try OutputFile.write(ReportJUnit.render(.check(outcome)), to: junit) } }
        if let sarif { attempt { try OutputFile.write(ReportSARIF.render(.check(outcome)), to: sarif) } }
        if let svgDir { attempt { try Self.writeDiagrams(outcome.report, trees: findings.trees, into: svgDir) } }
        if let writeBaseline { attempt { try OutputFile.write(outcome.baselineDocument, to: writeBaseline) } }
        for failure in recordingFailures { problems.append("--record: \(failure) (the partial recording was removed)") }
        var exportNotes: [String] = []
        if let otlpConfiguration {
            exportNotes = await export(findings, outcome: outcome, configuration: otlpConfiguration, trace: trace)
        }

        if !quiet {
            Terminal.error("\n" + ReportText.render(.check(outcome), colorful: Terminal.isErrorColorful))
        } else if case .signaled = termination {
            Terminal.error("nodescope check: the command was \(termination.phrase); exiting \(outcome.exitCode)\n")
        }
        for note in exportNotes { Terminal.note(note) }
        for problem in problems { Terminal.error("nodescope: \(problem)\n") }
        // The exit code is the result: everything is said above, so no further line.
        throw ExitCode(problems.isEmpty ? outcome.exitCode : 2)
    }

    /// Where a run's trace starts: its id and its span's, made before the command runs so that
    /// the command's own spans can join it (`TRACEPARENT`), under the caller's trace when
    /// `TRACEPARENT` names one.
    struct TraceStart: Sendable {
        var traceID: [UInt8]
        var parentSpanID: [UInt8]?
        var runSpanID: [UInt8]
        var startNanos: UInt64

        init(environment: [String: String] = ProcessInfo.processInfo.environment) {
            #if Export
            let parent = environment["TRACEPARENT"].flatMap(NodeLifeTrace.parse(traceparent:))
            traceID = parent?.traceID ?? NodeLifeTrace.randomTraceID()
            parentSpanID = parent?.spanID
            runSpanID = NodeLifeTrace.randomSpanID()
            #else
            traceID = []
            runSpanID = []
            #endif
            // The collector's clock: CLOCK_MONOTONIC, as its loop reads it.
            startNanos = DispatchTime.now().uptimeNanoseconds
        }

        /// The W3C `traceparent` of the run's span.
        var traceparent: String {
            func hex(_ bytes: [UInt8]) -> String {
                bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            }
            return "00-\(hex(traceID))-\(hex(runSpanID))-01"
        }
    }

    /// Sends the run over OTLP: leak verdicts as log records, node lives as a trace, the
    /// processes' counts as metrics, within the export's bound; what to tell the user about it
    /// (a failure is said even with --quiet: data were lost, but the verdict and the exit code
    /// are the same).
    private func export(
        _ findings: CheckFindings, outcome: CheckOutcome, configuration: OTLPConfiguration, trace: TraceStart?
    ) async -> [String] {
        #if Export
        let environment = ProcessInfo.processInfo.environment
        let resource = OTLPResource(
            serviceName: configuration.serviceName,
            attributes: CheckRunResource.attributes(command: command, environment: environment) + configuration.resourceAttributes)
        let nowNanos = DispatchTime.now().uptimeNanoseconds
        let lifeTrace = trace.map { trace in
            NodeLifeTrace(
                traceID: trace.traceID, parentSpanID: trace.parentSpanID, runSpanID: trace.runSpanID, runName: "nodescope check",
                runAttributes: [
                    ("nodescope.check.command", command.joined(separator: " ")),
                    ("nodescope.check.exit_code", String(outcome.exitCode)),
                ],
                runStartNanos: trace.startNanos, runEndNanos: nowNanos,
                runFailure: outcome.exitCode == 0
                    ? nil : "exit \(outcome.exitCode): " + outcome.verdictLine.dropping(prefix: "nodescope check: "),
                processes: findings.processes.map { process in
                    let lives = findings.lifetimes[process.session]
                    return NodeLifeTrace.Process(summary: process, lifetimes: lives?.lifetimes ?? [], untracked: lives?.untracked ?? 0)
                },
                leaks: findings.leaks)
        }
        let run = OTLPCheckExport.Run(
            leaks: findings.leaks, trace: lifeTrace, snapshot: ExportSnapshot(processes: findings.processes, daemon: .init()),
            snapshotNanos: nowNanos)
        let outcomes = await OTLPCheckExport.export(run, configuration: configuration, resource: resource)
        var notes: [String] = []
        var sent: [String] = []
        for signal in configuration.signals {
            guard let result = outcomes[signal], let target = configuration.target(signal) else { continue }
            let what = Self.otlpItems(signal)
            if let failure = result.failure {
                notes.append(
                    "check: OTLP: \(result.dropped) of \(result.sent + result.dropped) \(what) not sent to \(target.url): \(failure)")
            } else if result.sent > 0 {
                sent.append("\(result.sent) \(what)")
            }
        }
        if !quiet, !sent.isEmpty {
            let base = configuration.signals.compactMap { configuration.target($0)?.url }.first ?? ""
            notes.insert("check: OTLP: sent \(sent.joined(separator: ", ")) to \(Self.endpointBase(base))", at: 0)
        }
        return notes
        #else
        return []
        #endif
    }

    /// What an export of `signal` carries, in words.
    private static func otlpItems(_ signal: OTLPConfiguration.Signal) -> String {
        switch signal {
        case .logs: "leak log records"
        case .traces: "node spans"
        case .metrics: "metric data points"
        }
    }

    /// A signal's URL without its `/v1/<signal>` path: the endpoint as the user gave it.
    private static func endpointBase(_ url: String) -> String {
        for signal in OTLPConfiguration.Signal.allCases where url.hasSuffix("/v1/" + signal.rawValue) {
            return String(url.dropLast(("/v1/" + signal.rawValue).count))
        }
        return url
    }

    /// Reads and checks the baseline, naming the file in every error.
    private static func loadBaseline(_ file: String) throws(CLIError) -> Baseline {
        do {
            return try Baseline.parse(InputFile.read(file, bound: InputFile.Bound.baseline, what: "a baseline"), file: file)
        } catch let error as ReportError {
            throw CLIError(error.message)
        } catch {
            throw CLIError("cannot read the baseline \(file): \(error)")
        }
    }

    /// Writes the diagram of each leak into `directory`, created when missing.
    private static func writeDiagrams(_ report: LeakReport, trees: [SessionID: TreeView], into directory: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CLIError("cannot create the SVG directory \(directory): \(error.localizedDescription)")
        }
        for file in try LeakDiagrams.render(report, trees: trees) {
            try OutputFile.write(file.svg, to: (directory as NSString).appendingPathComponent(file.name))
        }
    }

    /// Refuses, before the command runs, two outputs in one file or an output over an input.
    private func checkFileConflicts() throws(CLIError) {
        var outputs: [OutputConflict.Named] = []
        for (option, file) in [
            ("--json", json), ("--junit", junit), ("--sarif", sarif), ("--svg-dir", svgDir),
            ("--write-baseline", writeBaseline),
        ] {
            guard let file, !(option == "--json" && file == "-") else { continue }
            outputs.append(.init(option: option, path: file))
        }
        let inputs = baseline.map { [OutputConflict.Named(option: "--baseline", path: $0)] } ?? []
        // Rewriting the baseline in place is how it is updated (docs/CHECK.md).
        if let conflict = OutputConflict.find(
            outputs: outputs, inputs: inputs, allowed: [(output: "--write-baseline", input: "--baseline")])
        {
            throw CLIError("check: \(conflict); nothing was run")
        }
    }

    /// The command's environment: ours, with NODESCOPE_SOCKET set to the private collector and
    /// a NODESCOPE switch that would turn the agent off removed.
    /// With a trace, `TRACEPARENT` names the run's span: spans the command makes with an
    /// OpenTelemetry SDK that reads it join the run's trace.
    private func environment(socket: String, trace: TraceStart?) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["NODESCOPE_SOCKET"] = socket
        if let trace { environment["TRACEPARENT"] = trace.traceparent }
        if let value = environment["NODESCOPE"], ["off", "0", "false", "no"].contains(value.lowercased()) {
            environment.removeValue(forKey: "NODESCOPE")
            if !quiet { Terminal.note("check: ignoring NODESCOPE=\(value) for the command: check needs its agent on") }
        }
        return environment
    }
}

extension String {
    fileprivate func dropping(prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self
    }
}
