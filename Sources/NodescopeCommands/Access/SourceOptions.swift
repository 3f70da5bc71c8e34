import ArgumentParser
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeReplay
import NodescopeServer
import NodescopeSource

/// Where a reading command's trees come from: a process of a collector (the daemon's, or an
/// embedded one started for the command), or `--from` a recording at `--at` (or a tree in JSON).
/// The commands are written once against ``TreeSource``; these options only choose which.
struct SourceOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Read from this recording (see `nodescope record`) at --at, or from a tree in JSON (`export --format json`), instead of a collector.",
            valueName: "FILE"))
    var from: String?

    @OptionGroup var replay: ReplayOptions
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var waiting: WaitOptions

    /// Checks the choice: a process or `--from`, not both (a process is needed from a collector
    /// when `needsProcess`); `--at` only with `--from`.
    func check(process: String?, needsProcess: Bool) throws {
        if process?.isEmpty == true { throw ValidationError("the process is empty: give a pid or a process name") }
        if needsProcess, process == nil, from == nil {
            throw ValidationError("name a process (pid or name), or give --from RECORDING")
        }
        if process != nil, from != nil { throw ValidationError("give either a process or --from, not both") }
        if replay.at != nil, from == nil { throw ValidationError("--at reads a recording: give --from RECORDING") }
        _ = try replay.instant()
    }

    /// Runs `body` with the source chosen: the file of `--from` (a recording replayed to `--at`,
    /// or a tree in JSON), else a collector to which `process` is connected (waiting up to
    /// `--wait` for it). Without a process, a collector's answers are about every process it
    /// has collected, which only a running daemon has: `command` names the command in the
    /// message that says so.
    func withSource<T: Sendable>(
        for process: String?, command: String, _ body: (any TreeSource) async throws -> T
    ) async throws -> T {
        // Every source names the closures on its retainer paths (ClosureNaming).
        if let from { return try await body(NamedClosures(Self.open(from, at: replay.at == nil ? nil : try replay.instant()))) }
        let socket = connection.socketPath
        if process == nil {
            try ControlClient.checkPlace(of: socket)
            guard CollectorServer.isAnswering(at: socket) else {
                throw CLIError(
                    "no daemon runs on \(socket); `nodescope \(command)` without a process reads what a daemon has "
                        + "collected: start one with `nodescope daemon`, or name a process to wait for",
                    exitCode: 1)
            }
        }
        let access = CollectorAccess(socketPath: socket, waitSeconds: waiting.wait, settings: .init())
        return try await access.run(waitingFor: process) { _ in try await body(NamedClosures(CollectorSource(socketPath: socket))) }
    }

    /// The source a file holds: a recording replayed to `instant` (its end when nil; its
    /// warnings on standard error), or a tree in JSON (which has no instants). A clear error for
    /// anything else: exit 1 for a file that is neither, 2 for what is no file to read.
    static func open(_ path: String, at instant: ReplayInstant?) throws -> any TreeSource {
        if try RecordingInput.isRecording(path) {
            return RecordedInstant(try RecordingInput.replay(path, at: instant ?? .end))
        }
        if instant != nil { throw CLIError("--at needs a recording, and \(path) is not one (it is read as a tree in JSON)") }
        let data = try InputFile.read(path, bound: InputFile.Bound.treeJSON, what: "a tree in JSON")
        guard !data.isEmpty else {
            throw CLIError(
                "\(path) is empty: neither a Nodescope recording nor a tree in JSON (as `nodescope export --format json` writes)",
                exitCode: 1)
        }
        do {
            return TreeFileSource(try TreeJSONReader.decode(data))
        } catch {
            throw CLIError(
                "\(path) is neither a Nodescope recording nor a tree in JSON (as `nodescope export --format json` writes): "
                    + "\(error)", exitCode: 1)
        }
    }
}
