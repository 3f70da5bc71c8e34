import ArgumentParser
import Foundation
import Logging
import NodescopeControl
import NodescopeRecording
import NodescopeServer
import NodescopeWeb

/// `nodescope ui`: the web view of every process's live tree.
struct UICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ui",
        abstract: "Serve a live web view of every process's tree on 127.0.0.1 and print its address.",
        discussion: """
            The page shows the processes, the live tree of the one you choose, its leaks with what \
            holds them, node details and the diagram. It listens on loopback only and needs the \
            token in the printed address (then a cookie). Without a running daemon it starts an \
            embedded collector on the socket, as the other commands do. Ends on Ctrl-C.

            With --from FILE it serves a recording (see `nodescope record`) instead, with a time \
            slider: the tree and leaks at any instant, play and step buttons, and an address that \
            keeps the instant (?at=12.5, ?at=event:N, ?at=end).
            """)

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 0

    @Flag(help: "Open the address in the desktop's browser (xdg-open).")
    var open = false

    @Option(help: "Serve this recording (see `nodescope record`) with a time slider, instead of the live collector.")
    var from: String?

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
    }

    func run() async throws {
        var logger = Logger(label: "nodescope.ui")
        logger.logLevel = .notice
        if let from {
            try await serve(recording: from, logger: logger)
            return
        }
        let socket = connection.socketPath
        try ControlClient.checkPlace(of: socket)
        var embedded: CollectorServer?
        if !CollectorServer.isAnswering(at: socket) {
            let server = CollectorServer(socketPath: socket, settings: .init(), logger: .quiet)
            do {
                try await server.start()
            } catch {
                throw CLIError("no daemon runs on \(socket), and an embedded collector could not start there: \(error)")
            }
            embedded = server
            Terminal.note("no daemon on \(socket); started an embedded collector (it stops with this command)")
        }
        let web = WebViewServer(socketPath: socket, port: port, logger: logger)
        let open = self.open
        do {
            try await web.run { url in UICommand.announce(url, open: open) }
        } catch {
            await embedded?.stop()
            throw CLIError(
                "the web view could not serve on 127.0.0.1:\(port): \(error); choose another port with --port (0 picks a free one)")
        }
        await embedded?.stop()
    }

    /// Opens the recording at `path` (a clear error, exit 1, when it is none), makes its
    /// keyframes, and serves it until Ctrl-C.
    private func serve(recording path: String, logger: Logger) async throws {
        let bytes = try InputFile.read(path)
        let reader: RecordingReader
        do {
            reader = try RecordingReader(bytes: bytes)
        } catch {
            throw CLIError("cannot read \(path): \(error.message)", exitCode: 1)
        }
        for warning in reader.warnings { Terminal.note("\(path): \(warning)") }
        let source = RecordingSource(name: URL(fileURLWithPath: path).lastPathComponent, reader: reader)
        let web = WebViewServer(recording: source, port: port, logger: logger)
        let open = self.open
        do {
            try await web.run { url in UICommand.announce(url, open: open) }
        } catch {
            throw CLIError(
                "the web view could not serve on 127.0.0.1:\(port): \(error); choose another port with --port (0 picks a free one)")
        }
    }

    /// Prints the address (the one line on standard output) and opens it when asked.
    static func announce(_ url: String, open: Bool) {
        Terminal.write(url + "\n")
        Terminal.note("web view on \(url) (loopback only; the token is this session's). Ctrl-C ends it.")
        guard open else { return }
        guard let opener = executable(named: "xdg-open") else {
            Terminal.note("--open: no xdg-open on PATH (apt-get install xdg-utils); open the address above yourself")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [url]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            Terminal.note("--open: could not start \(opener) (\(error)); open the address above yourself")
        }
    }

    /// The first executable file called `name` in the directories of PATH.
    static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
