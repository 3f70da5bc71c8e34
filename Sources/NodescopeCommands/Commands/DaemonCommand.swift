import ArgumentParser
import Foundation
import Logging
import NodescopeCollector
import NodescopeExport
import NodescopeServer
import NodescopeWeb
import ServiceLifecycle
import Synchronization

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
        parsing: .unconditional,
        help: "How many hosts are served at once; a host's hello beyond it is refused as busy. Clients are counted apart.")
    var maxConnections: Int = ServerLimits().maxConnections

    @Option(
        parsing: .unconditional,
        help: "How many clients (commands, attach, web views) are served at once, apart from hosts; one beyond it is refused as busy.")
    var maxClients: Int = ServerLimits().maxClientConnections

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How many bytes of strings all processes' trees may hold together (e.g. 512M, 1G); past it, ended processes are dropped first, then the host that would pass it is disconnected.",
            valueName: "size"))
    var maxStringMemory: ByteCountArgument = ByteCountArgument(bytes: CollectorSettings().maxStringBytesTotal)

    @Flag(help: "Also serve the web view on 127.0.0.1 (its address is printed; see `nodescope ui`).")
    var ui = false

    @Option(help: "The web view's port with --ui (0 picks a free one).")
    var uiPort: Int = 0

    @Option(
        help: ArgumentHelp(
            "Serve the daemon's counts for Prometheus at http://ADDRESS/metrics: PORT (on 127.0.0.1), HOST:PORT or [IPv6]:PORT; port 0 picks a free one (logged). Loopback unless you name another address (see docs/FLEET.md).",
            valueName: "address"))
    var metrics: MetricsAddress?

    @Option(
        help: ArgumentHelp(
            "With --metrics: every scrape must send this file's token (Authorization: Bearer; Prometheus' authorization.credentials_file). The file must be yours and mode 600.",
            valueName: "file"))
    var metricsTokenFile: String?

    @Option(help: "Record every process's stream into this directory, one file per process (see `nodescope record`).")
    var recordDir: String?

    @OptionGroup var otlp: OTLPOptions

    /// How long one OTLP request of the daemon may take when no timeout variable says otherwise
    /// (the SDKs' default).
    static let otlpTimeoutMilliseconds = 10_000

    func validate() throws {
        guard grace.nanoseconds > 0 else { throw ValidationError("--grace must be more than 0 (e.g. 1s or 500ms)") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError(
                "--log-level \(logLevel) is not a level; use one of trace, debug, info, notice, warning, error, critical")
        }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1") }
        guard maxClients >= 1 else { throw ValidationError("--max-clients must be at least 1") }
        guard maxStringMemory.bytes >= 1 << 20 else { throw ValidationError("--max-string-memory must be at least 1M") }
        guard keepEnded >= 0 else { throw ValidationError("--keep-ended must be 0 or more") }
        guard (0...65_535).contains(uiPort) else { throw ValidationError("--ui-port must be from 0 to 65535") }
        if metricsTokenFile != nil, metrics == nil {
            throw ValidationError("--metrics-token-file needs --metrics")
        }
        #if !Export
        if metrics != nil {
            throw ValidationError("--metrics: this nodescope was built without the Export trait, so it serves no metrics")
        }
        #endif
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
        Self.raiseDescriptorLimit(toHold: maxConnections + maxClients + (ui ? WebLimits().maxConnections : 0), logger: logger)
        let (otlpConfiguration, otlpNote) = otlp.resolve(defaultTimeoutMilliseconds: Self.otlpTimeoutMilliseconds)
        if let otlpNote { logger.warning("\(otlpNote)") }
        #if Export
        var leakStream: OTLPLeakStream?
        var leakObserver: (@Sendable ([LeakRecord]) -> Void)?
        let otlpResource = otlpConfiguration.map { OTLPResource(serviceName: $0.serviceName, attributes: $0.resourceAttributes) }
        if let target = otlpConfiguration?.target(.logs), let otlpResource {
            let stream = OTLPLeakStream(target: target, resource: otlpResource, logger: logger)
            leakStream = stream
            leakObserver = { records in stream.offer(records) }
        }
        // The daemon's processes, for the names of the spans' resources; bound once the server is made.
        let serverBox = Mutex<CollectorServer?>(nil)
        var spanStream: OTLPSpanStream?
        var changeObserver: ChangeObserver?
        if let target = otlpConfiguration?.target(.traces), let otlpResource {
            let stream = OTLPSpanStream(target: target, resource: otlpResource, logger: logger) {
                guard let server = serverBox.withLock({ $0 }) else { return [] }
                return try await server.processesAndCounts().processes
            }
            spanStream = stream
            changeObserver = { batches in
                stream.offer(
                    batches.map { .init(session: $0.session, changes: $0.changes, arrivalNanos: $0.arrivalNanos, tree: $0.treeAfterResync) }
                )
            }
        }
        #else
        let leakObserver: (@Sendable ([LeakRecord]) -> Void)? = nil
        let changeObserver: ChangeObserver? = nil
        #endif
        let server = CollectorServer(
            socketPath: connection.socketPath,
            settings: CollectorSettings(
                graceNanos: grace.nanoseconds, endedSessionRetentionNanos: retention.nanoseconds,
                maxEndedSessions: max(keepEnded, 0), maxStringBytesTotal: maxStringMemory.bytes),
            limits: ServerLimits(maxConnections: maxConnections, maxClientConnections: maxClients),
            logger: logger, recordDirectory: recordDirectory, leakObserver: leakObserver, changeObserver: changeObserver)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: server)]
        if ui {
            let web = WebViewServer(socketPath: connection.socketPath, port: uiPort, logger: logger)
            services.append(.init(service: web.service { url in UICommand.announce(url, open: false) }))
        }
        #if Export
        // What /metrics serves and the OTLP metrics carry: the collector's counts, read on its
        // loop, and what the OTLP export sent and dropped of each signal.
        let metricBox = Mutex<OTLPMetricStream?>(nil)
        let (logs, spans) = (leakStream, spanStream)
        let snapshot: @Sendable () async throws -> ExportSnapshot = {
            let (processes, counts) = try await server.processesAndCounts()
            var otlp: [ExportSnapshot.OTLPCount] = []
            if let logs { otlp.append(.init(signal: "logs", sent: logs.counts.sent, dropped: logs.counts.dropped)) }
            if let spans {
                let (sent, dropped) = spans.sentAndDropped
                otlp.append(.init(signal: "traces", sent: sent, dropped: dropped))
            }
            if let metrics = metricBox.withLock({ $0 }) {
                let (sent, dropped) = metrics.sentAndDropped
                otlp.append(.init(signal: "metrics", sent: sent, dropped: dropped))
            }
            return ExportSnapshot(
                processes: processes,
                daemon: .init(
                    hosts: counts.hosts, clients: counts.clients, recordings: counts.recordings,
                    failedRecordings: counts.failedRecordings, otlp: otlp))
        }
        if let leakStream, let target = otlpConfiguration?.target(.logs) {
            services.append(.init(service: leakStream))
            logger.notice("leak verdicts as OTLP log records to \(target.url)")
        }
        if let configuration = otlpConfiguration, let target = configuration.target(.metrics), let otlpResource {
            let stream = OTLPMetricStream(
                target: target, intervalMilliseconds: configuration.metricIntervalMilliseconds, resource: otlpResource,
                logger: logger, snapshot: snapshot)
            metricBox.withLock { $0 = stream }
            services.append(.init(service: stream))
            logger.notice(
                "counts as OTLP metrics to \(target.url) every \(configuration.metricIntervalMilliseconds) ms")
        }
        if let spanStream, let target = otlpConfiguration?.target(.traces) {
            serverBox.withLock { $0 = server }
            services.append(.init(service: spanStream))
            logger.notice("node lives as OTLP spans to \(target.url), one trace per process")
        }
        if let metrics {
            if !metrics.isLoopback {
                logger.warning(
                    "--metrics \(metrics) is reachable from other machines: process names and counts are served to anyone who can connect (docs/FLEET.md)"
                )
            }
            var token: MetricsToken?
            if let metricsTokenFile {
                do {
                    token = try MetricsToken(contentsOfFile: metricsTokenFile)
                } catch {
                    throw CLIError(error.description, exitCode: 2)
                }
            }
            let endpoint = MetricsServer(address: metrics, token: token, logger: logger, snapshot: snapshot)
            services.append(.init(service: endpoint.service { [logger] url in logger.notice("metrics at \(url)") }))
        }
        #endif
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as ServerError {
            throw CLIError(error.description, exitCode: error.code == .alreadyRunning ? 1 : 2)
        } catch let error as MetricsFailure {
            throw CLIError(error.description, exitCode: 2)
        }
    }
}

extension DaemonCommand {
    /// Descriptors the daemon keeps for itself besides connections: its socket, logs, event
    /// loops, recordings being written.
    static let reservedDescriptors = 64

    /// Raises the soft limit on open files to the hard one, so that the connection limits
    /// (hosts apart from clients) hold before the process runs out of descriptors; says so when
    /// even the hard limit is below what the limits need (a host could then be refused by the
    /// kernel, not by a count).
    static func raiseDescriptorLimit(toHold connections: Int, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let needed = rlim_t(connections + reservedDescriptors)
        if limit.rlim_cur < needed, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = min(limit.rlim_max, max(needed, limit.rlim_cur))
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        if limit.rlim_cur < needed {
            logger.warning(
                "the open-file limit (\(limit.rlim_cur)) is below what the connection limits need (\(needed)); lower --max-connections or --max-clients, or raise the limit (ulimit -n)"
            )
        }
    }
}

/// A number of bytes such as `512M`, `1G`, `64K` or `1048576` (K, M and G are powers of 1 024;
/// `KiB`, `MiB` and `GiB` are the same).
struct ByteCountArgument: ExpressibleByArgument, Sendable {
    /// The number of bytes.
    let bytes: Int

    /// A count of `bytes`.
    init(bytes: Int) {
        self.bytes = bytes
    }

    /// Parses `512M`, `1G`, `64KiB` or a plain number of bytes.
    init?(argument: String) {
        var text = argument.trimmingCharacters(in: .whitespaces).uppercased()
        if text.hasSuffix("IB") { text.removeLast(2) } else if text.hasSuffix("B") { text.removeLast() }
        var shift = 0
        if let unit = text.last, let power = ["K": 10, "M": 20, "G": 30][String(unit)] {
            shift = power
            text.removeLast()
        }
        guard let value = Int(text), value >= 0, value <= Int.max >> shift else { return nil }
        bytes = value << shift
    }

    /// How `--help` shows a default: `512M`.
    var defaultValueDescription: String {
        for (unit, shift) in [("G", 30), ("M", 20), ("K", 10)] where bytes > 0 && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift)\(unit)"
        }
        return "\(bytes)"
    }
}

extension MetricsAddress: ExpressibleByArgument {
    /// `--metrics 9464`, `--metrics 127.0.0.1:9464`, `--metrics [::1]:9464`.
    public init?(argument: String) {
        self.init(parsing: argument)
    }
}
