import ArgumentParser
import Foundation
import Glibc
import NodescopeCollector
import NodescopeControl
import NodescopeSocket

/// `nodescope record PID|NAME -o FILE`: records a process's stream into a file.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a process's stream into a file, until it exits or Ctrl-C.",
        discussion: """
            A running process is recorded from now, beginning with a snapshot of its tree; a name \
            that no process has yet is recorded from the moment such a process connects. Read a \
            recording with `tree`, `leaks` and `export` and their --from FILE --at TIME \
            (docs/RECORDING.md).
            """)

    @Argument(help: "The process: a pid or a process name.")
    var process: String

    @Option(name: [.short, .customLong("output")], help: "The recording file to write (.nsrec by convention).")
    var output: String

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var waiting: WaitOptions

    func validate() throws {
        if process.isEmpty { throw ValidationError("the process is empty: give a pid or a process name") }
        if output.isEmpty || output == "-" { throw ValidationError("-o needs a file: a recording is not written to standard output") }
    }

    func run() async throws {
        let path = URL(fileURLWithPath: output).standardizedFileURL.path
        // Fail now, not when the collector first writes: the file must be creatable.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CLIError("cannot write \(output): \(SystemErrorText.describe(errno))", exitCode: 2)
        }
        close(descriptor)
        // Ctrl-C ends the recording: with a daemon, the connection closes and the daemon
        // finishes the file; an embedded collector ends with this process, and its recording
        // then opens up to its last whole record.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler {
            Terminal.note("stopped recording \(path)")
            Glibc.exit(0)
        }
        interrupt.resume()
        let access = CollectorAccess(socketPath: connection.socketPath, waitSeconds: waiting.wait, settings: .init())
        let outcome = try await access.run(waitingFor: nil) { client in
            try await client.record(process, path: path) { started in
                Terminal.note("recording \(VisibleText.escaped(started.processName)) [pid \(started.pid)] into \(path); Ctrl-C stops")
            }
        }
        interrupt.cancel()
        if let error = outcome.error {
            // The collector stops writing at its first failure, and says so at once: what it
            // wrote is cut short, and is not left where the recording was asked for.
            var info = stat()
            let removed = lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && unlink(path) == 0
            throw CLIError("the recording failed: \(error)" + (removed ? " (the partial recording was removed)" : ""), exitCode: 1)
        }
        let lost = outcome.lostFrames > 0 ? ", \(outcome.lostFrames) frames lost to a slow disk (marked as gaps)" : ""
        Terminal.note("wrote \(path): \(outcome.records) records, \(outcome.bytes) bytes\(lost)")
    }
}
