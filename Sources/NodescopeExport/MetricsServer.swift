#if Export
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle
import NIOCore
import NodescopeHTTPGuard
import Synchronization

/// The daemon's `/metrics` endpoint (`daemon --metrics ADDRESS`): Prometheus' text format of
/// what ``snapshot`` returns at each scrape, on its own port, beside the collector's socket.
///
/// Only `GET` and `HEAD` of `/metrics` (and `/`, a line that points there). Bounded like the web
/// view: connections, scrapes at once (one more is answered 503), the time a client may take to
/// send a request, and the time the collector may take to answer (a stopped collector makes the
/// scrape fail with 503 in ``Limits/answerDeadline``, never pile up). On a loopback address,
/// the `Host` header must name this server, so that a web page whose name was rebound to
/// 127.0.0.1 cannot read it (DNS rebinding); on another address, which the user chose, any
/// `Host` is served. With a ``MetricsToken``, every request must carry it as a bearer token.
package struct MetricsServer: Sendable {
    /// The bounds of the endpoint.
    package struct Limits: Sendable, Equatable {
        /// The most connections open at once. Default 16.
        package var maxConnections = 16
        /// The most scrapes answered at once. Default 4.
        package var maxScrapes = 4
        /// How long a connection may wait before sending a whole request. Default 10 s.
        package var requestDeadline = TimeAmount.seconds(10)
        /// How long the collector may take to hand over its counts. Default 5 s.
        package var answerDeadline = Duration.seconds(5)

        /// The defaults.
        package init() {}
    }

    /// Where it listens.
    package let address: MetricsAddress
    /// The token a scraper must send, if any (`--metrics-token-file`).
    package let token: MetricsToken?
    /// Its bounds.
    package let limits: Limits
    private let snapshot: @Sendable () async throws -> ExportSnapshot
    private let logger: Logger

    /// An endpoint on `address` that answers each scrape with `snapshot`'s exposition.
    package init(
        address: MetricsAddress, token: MetricsToken? = nil, limits: Limits = .init(), logger: Logger,
        snapshot: @escaping @Sendable () async throws -> ExportSnapshot
    ) {
        self.address = address
        self.token = token
        self.limits = limits
        self.logger = logger
        self.snapshot = snapshot
    }

    /// The server as a service, to run in the daemon's service group; `onReady` gets the URL of
    /// `/metrics` once the port is bound.
    package func service(onReady: @escaping @Sendable (String) -> Void) -> some Service {
        Endpoint(address: address, application: application(onReady: onReady))
    }

    /// The endpoint as a service: an error (the port taken, an address that is not this
    /// machine's) comes out as a ``MetricsFailure`` that names the address.
    struct Endpoint<Application: ApplicationProtocol>: Service {
        let address: MetricsAddress
        let application: Application

        func run() async throws {
            do {
                try await application.run()
            } catch {
                throw MetricsFailure(address: address, underlying: "\(error)")
            }
        }
    }

    private func application(onReady: @escaping @Sendable (String) -> Void) -> some ApplicationProtocol {
        let port = BoundPort()
        let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: MetricsGate(address: address, token: token, port: port, logger: logger))
        let scrapes = SlotPool(capacity: limits.maxScrapes)
        let (snapshot, deadline, logger) = (self.snapshot, limits.answerDeadline, self.logger)
        router.get("/metrics") { _, _ -> Response in
            guard let slot = scrapes.take() else {
                return Self.plain(.serviceUnavailable, "too many scrapes at once; try again\n")
            }
            defer { withExtendedLifetime(slot) {} }
            do {
                let taken = try await Self.within(deadline) { try await snapshot() }
                return Response(
                    status: .ok, headers: [.contentType: PrometheusExposition.contentType],
                    body: .init(byteBuffer: ByteBuffer(bytes: PrometheusExposition.bytes(of: taken))))
            } catch {
                logger.notice("metrics scrape failed: \(error)")
                return Self.plain(.serviceUnavailable, "the collector did not hand over its counts in time: \(error)\n")
            }
        }
        router.get("/") { _, _ in Self.plain(.ok, "nodescope daemon: metrics at /metrics\n") }
        let address = self.address
        return Application(
            router: router,
            server: .http1(
                configuration: HTTP1Channel.Configuration(
                    additionalChannelHandlers: [RequestDeadlineHandler(deadline: limits.requestDeadline)],
                    idleTimeout: limits.requestDeadline)),
            configuration: .init(
                address: .hostname(address.host, port: address.port), serverName: "nodescope", backlog: 64,
                availableConnectionsDelegate: ConnectionCap(limit: limits.maxConnections)),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? address.port
                port.set(bound)
                var shown = address
                shown.port = bound
                onReady("http://\(shown)/metrics")
            },
            logger: logger)
    }

    static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// `body`'s result, or ``TimedOut`` after `deadline`: the caller is answered at the deadline
    /// even when `body` cannot be cancelled (a question waiting on the collector's loop), and
    /// `body` finishes on its own later. At most ``maxUnfinished`` such bodies are left running;
    /// past that, ``TimedOut`` at once, so that a stuck collector does not gather them.
    static func within<T: Sendable>(_ deadline: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard
            unfinished.withLock({ count in
                guard count < maxUnfinished else { return false }
                count += 1
                return true
            })
        else { throw TimedOut(deadline: deadline) }
        let once = Once<T>()
        return try await withCheckedThrowingContinuation { continuation in
            once.value.withLock { $0 = continuation }
            let timer = Task {
                try await Task.sleep(for: deadline)
                once.value.withLock { $0.take() }?.resume(throwing: TimedOut(deadline: deadline))
            }
            Task {
                let result: Result<T, any Error>
                do {
                    result = .success(try await body())
                } catch {
                    result = .failure(error)
                }
                unfinished.withLock { $0 -= 1 }
                timer.cancel()
                once.value.withLock { $0.take() }?.resume(with: result)
            }
        }
    }

    /// A continuation resumed once, by whichever comes first.
    private final class Once<T: Sendable>: Sendable {
        let value = Mutex<CheckedContinuation<T, any Error>?>(nil)
    }

    /// The questions to the collector still running, the answered and the abandoned ones.
    private static let unfinished = Mutex(0)
    /// How many questions to the collector are running now.
    static var unfinishedCount: Int { unfinished.withLock { $0 } }
    /// The most questions to the collector running at once.
    static let maxUnfinished = 8

    /// The collector did not answer within the deadline.
    struct TimedOut: Error, CustomStringConvertible {
        let deadline: Duration
        var description: String { "no answer within \(deadline)" }
    }
}

/// The port the server is bound to, once it is.
final class BoundPort: Sendable {
    private let value = Mutex(0)

    func set(_ port: Int) { value.withLock { $0 = port } }
    var port: Int { value.withLock { $0 } }
}

/// Refuses what the endpoint does not serve, before any work: a method other than GET and HEAD,
/// on a loopback address a `Host` that is not this server's, and, with a token, a request
/// without it (401).
struct MetricsGate: RouterMiddleware {
    typealias Context = BasicRequestContext
    let address: MetricsAddress
    let token: MetricsToken?
    let port: BoundPort
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else {
            return MetricsServer.plain(.methodNotAllowed, "only GET and HEAD\n")
        }
        if address.isLoopback, let refusal = Self.refusal(authority: request.head.authority, port: port.port) {
            logger.notice("metrics refused a request: \(refusal)")
            return MetricsServer.plain(.misdirectedRequest, refusal + "\n")
        }
        if let token, !token.admits(authorization: request.headers[.authorization]) {
            var response = MetricsServer.plain(.unauthorized, "this endpoint needs its bearer token (Authorization: Bearer …)\n")
            response.headers[.wwwAuthenticate] = "Bearer realm=\"nodescope\""
            return response
        }
        return try await next(request, context)
    }

    /// Why a request with `authority` as its `Host` is refused on a loopback server on `port`,
    /// or nil when it is this server's.
    static func refusal(authority: String?, port: Int) -> String? {
        let allowed = ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"]
        guard let authority, allowed.contains(authority.lowercased()) else {
            let shown = authority.map { "'\($0.prefix(100))'" } ?? "(none)"
            return "the Host header \(shown) is not this server's (127.0.0.1:\(port))"
        }
        return nil
    }
}
#endif
