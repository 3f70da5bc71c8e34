import ArgumentParser
import Foundation
import Logging
import NodescopeCollector
import NodescopeServer
import NodescopeWeb
import ServiceLifecycle

/// `nodescope daemon`: runs the collector until SIGINT or SIGTERM.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the collector on the socket until SIGINT/SIGTERM.",
        discussion: "Refuses to start when another collector answers on the socket; replaces a stale socket file.")

    @OptionGroup var connection: ConnectionOptions

    @Option(parsing: .unconditional, help: "How long a detached node may stay alive before it is flagged as leaked (e.g. 1s, 500ms).")
    var grace: DurationArgument = DurationArgument(argument: "1s")!

    @Option(parsing: .unconditional, help: "How long a process that has ended stays listed with its last tree and leaks (e.g. 10m, 30s).")
    var retention: DurationArgument = DurationArgument(argument: "10m")!

    @Option(parsing: .unconditional, help: "How many ended processes are kept at most; the oldest go first.")
    var keepEnded: Int = 64

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(
        parsing: .unconditional, help: "How many connections (hosts and clients) are served at once; a hello beyond it is refused as busy.")
    var maxConnections: Int = ServerLimits().maxConnections

    @Flag(help: "Also serve the web view on 127.0.0.1 (its address is printed; see `nodescope ui`).")
    var ui = false

    @Option(help: "The web view's port with --ui (0 picks a free one).")
    var uiPort: Int = 0

    @Option(help: "Record every process's stream into this directory, one file per process (see `nodescope record`).")
    var recordDir: String?

    func validate() throws {
        guard grace.nanoseconds > 0 else { throw ValidationError("--grace must be more than 0 (e.g. 1s or 500ms)") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError(
                "--log-level \(logLevel) is not a level; use one of trace, debug, info, notice, warning, error, critical")
        }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1") }
        guard keepEnded >= 0 else { throw ValidationError("--keep-ended must be 0 or more") }
        guard (0...65_535).contains(uiPort) else { throw ValidationError("--ui-port must be from 0 to 65535") }
    }

    func run() async throws {
        var recordDirectory: String?
        if let recordDir {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: recordDir, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CLIError("--record-dir \(recordDir) is not a directory; create it first", exitCode: 2)
            }
            recordDirectory = URL(fileURLWithPath: recordDir).standardizedFileURL.path
        }
        var logger = Logger(label: "nodescope.daemon")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let server = CollectorServer(
            socketPath: connection.socketPath,
            settings: CollectorSettings(
                graceNanos: grace.nanoseconds, endedSessionRetentionNanos: retention.nanoseconds,
                maxEndedSessions: max(keepEnded, 0)),
            limits: ServerLimits(maxConnections: maxConnections),
            logger: logger, recordDirectory: recordDirectory)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: server)]
        if ui {
            let web = WebViewServer(socketPath: connection.socketPath, port: uiPort, logger: logger)
            services.append(.init(service: web.service { url in UICommand.announce(url, open: false) }))
        }
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as ServerError {
            throw CLIError(error.description, exitCode: error.code == .alreadyRunning ? 1 : 2)
        }
    }
}
