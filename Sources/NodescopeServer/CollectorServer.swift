import Glibc
import Logging
import NIOCore
import NIOPosix
import NodescopeCollector
import NodescopeControlCodec
import ServiceLifecycle
import Synchronization

/// The collector daemon's socket server: hosts and clients on one Unix socket, told apart by
/// their hello; the collector itself on one event loop.
///
/// Run it as a `Service` (``run()`` serves until graceful shutdown, then removes the socket), or
/// start and stop it by hand (``start()``, ``stop()``) as the CLI's embedded collector does.
package final class CollectorServer: Service, Sendable {
    /// The socket path it serves on.
    package let socketPath: String
    /// The collector's settings (grace, exit hold, retention).
    package let settings: CollectorSettings
    /// The bounds on connections, answers waiting to be read, and slow peers.
    package let limits: ServerLimits
    /// Where every host's stream is recorded, one file per process (`daemon --record-dir`).
    package let recordDirectory: String?
    private let logger: Logger
    private let leakObserver: (@Sendable ([LeakRecord]) -> Void)?
    private let changeObserver: ChangeObserver?
    private let group: MultiThreadedEventLoopGroup
    private let loop: EventLoop
    private let state = Mutex<(hub: NIOLoopBound<CollectorHub>?, channel: Channel?)>((nil, nil))

    /// A server for `socketPath`; nothing happens until it starts. `leakObserver`, when given, is
    /// told of every leak record created or changed (a verdict, a late release, the host's
    /// explanation arriving), on the collector's loop: it must hand them on and return at once.
    /// `changeObserver`, when given, is told of every batch of changes the collector makes, in
    /// order, in bunches handed over at the end of each turn of its loop (or every 256).
    package init(
        socketPath: String, settings: CollectorSettings = .init(), limits: ServerLimits = .init(),
        logger: Logger = Logger(label: "nodescope.collector"), recordDirectory: String? = nil,
        leakObserver: (@Sendable ([LeakRecord]) -> Void)? = nil,
        changeObserver: ChangeObserver? = nil
    ) {
        self.leakObserver = leakObserver
        self.changeObserver = changeObserver
        self.recordDirectory = recordDirectory
        self.socketPath = socketPath
        self.settings = settings
        self.limits = limits
        self.logger = logger
        // One loop: the collector's state is confined to it.
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.loop = group.next()
    }

    deinit {
        try? group.syncShutdownGracefully()
    }

    /// Prepares the socket's place and starts listening.
    package func start() async throws {
        try SocketPlacement.prepare(socketPath)
        let (loop, settings, limits, logger) = (self.loop, self.settings, self.limits, self.logger)
        let (recordDirectory, leakObserver, changeObserver) = (self.recordDirectory, self.leakObserver, self.changeObserver)
        let hub = try await loop.submit {
            NIOLoopBound(
                CollectorHub(
                    settings: settings, limits: limits, eventLoop: loop, logger: logger, recordDirectory: recordDirectory,
                    leakObserver: leakObserver, changeObserver: changeObserver),
                eventLoop: loop)
        }.get()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
            .childChannelOption(.allowRemoteHalfClosure, value: false)
            .childChannelInitializer { channel in
                PeerCredentials.of(channel).flatMapThrowing { credentials in
                    try channel.pipeline.syncOperations.addHandler(
                        WireConnectionHandler(hub: hub, peer: credentials, logger: logger))
                }
            }
        do {
            // NIO's path form stops at 103 bytes; the address built here takes all 107 that Linux allows.
            let bound = try await bootstrap.bind(to: try Self.socketAddress(socketPath)).get()
            state.withLock { $0 = (hub, bound) }
        } catch {
            throw ServerError(.bindFailed, "cannot listen on \(socketPath)", underlying: error)
        }
        SocketPlacement.restrict(socketPath)
        logger.info("collector listening", metadata: ["socket": "\(VisibleText.escaped(socketPath))"])
    }

    /// Stops listening, closes every connection and removes the socket file.
    package func stop() async {
        let (hub, bound) = state.withLock { current in
            defer { current.channel = nil }
            return (current.hub, current.channel)
        }
        try? await bound?.close()
        if let hub {
            try? await loop.submit { hub.value.closeAll() }.get()
            // The closed connections end their sessions on the loop; then the recordings end.
            try? await loop.submit {}.get()
            let pool = try? await loop.submit { [loop] in hub.value.finishRecordings(now: loop.now.uptimeNanoseconds) }.get()
            if let pool { await RecordingSink.shutDown(pool) }
        }
        unlink(socketPath)
        logger.info("collector stopped")
    }

    /// Serves until a graceful shutdown (SIGINT/SIGTERM through a ServiceGroup), then stops.
    package func run() async throws {
        try await start()
        try? await gracefulShutdown()
        await stop()
    }

    /// The socket address of `path`, for paths of up to 107 bytes (NIO's own path form stops
    /// at 103). Throws ``ServerError`` (`pathTooLong`) for a longer path, and (`invalidPath`) for
    /// an empty one or one with a NUL byte, which would name an abstract socket.
    package static func socketAddress(_ path: String) throws -> SocketAddress {
        try SocketPlacement.checkNamesAFile(path)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw ServerError(.pathTooLong, "the socket path \(path) is longer than 107 bytes; choose a shorter --socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return SocketAddress(address)
    }

    /// Whether a collector accepts connections on `path` right now.
    package static func isAnswering(at path: String) -> Bool {
        SocketPlacement.isAnswering(path)
    }

    /// The recordings of ``recordDirectory`` that could not be written (each with its path and
    /// the reason), once they have failed; after ``stop()``, every one that did.
    package func failedRecordings() async -> [ControlBody.RecordingOutcome] {
        guard let hub = state.withLock({ $0.hub }) else { return [] }
        return (try? await loop.submit { hub.value.failedRecordings }.get()) ?? []
    }

    /// The daemon's own counts, at one instant.
    package struct Counts: Sendable, Equatable {
        /// Hosts connected (hello accepted).
        package var hosts: Int
        /// Clients connected, apart from hosts.
        package var clients: Int
        /// Recordings being written.
        package var recordings: Int
        /// Recordings that could not be written, since the start.
        package var failedRecordings: Int
    }

    /// Every process the collector lists (as `ps` lists them) and the daemon's own counts, read
    /// together on the collector's loop (what `daemon --metrics` exports).
    package func processesAndCounts() async throws -> (processes: [ProcessSummary], counts: Counts) {
        guard let hub = state.withLock({ $0.hub }) else {
            throw ServerError(.notStarted, "the collector has not started: start() it first (or it failed to start)")
        }
        return try await loop.submit {
            let hub = hub.value
            let (hosts, clients) = hub.admittedCounts
            return (
                hub.collector.processes(),
                Counts(hosts: hosts, clients: clients, recordings: hub.recordingCount, failedRecordings: hub.failedRecordingCount)
            )
        }.get()
    }

    /// Runs `body` on the collector's loop with the collector and a function that stamps a tree
    /// of it with when it stands so, as the daemon's `tree` answers it; returns its result.
    package func withCollector<T: Sendable>(
        stamping body: @escaping @Sendable (Collector, _ stamp: (TreeView) -> TreeView) -> T
    ) async throws -> T {
        guard let hub = state.withLock({ $0.hub }) else {
            throw ServerError(.notStarted, "the collector has not started: start() it first (or it failed to start)")
        }
        return try await loop.submit { [loop] in
            let stamp = hub.value.stamping(now: loop.now.uptimeNanoseconds)
            return body(hub.value.collector, stamp)
        }.get()
    }

    /// Runs `body` on the collector's loop with the collector, and returns its result.
    package func withCollector<T: Sendable>(_ body: @escaping @Sendable (Collector) -> T) async throws -> T {
        try await withCollector(stamping: { collector, _ in body(collector) })
    }
}
