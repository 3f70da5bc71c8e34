import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeGraphviz
import NodescopeHTTPGuard
import NodescopeReplay
import NodescopeReports
import NodescopeSource
import Synchronization

/// The web view: a page and a small read-only HTTP API on loopback, served from what a
/// collector answers on its Unix socket (the daemon's, or an embedded one), as a control client
/// like the CLI's. The collector stays as it is: this module is an edge.
///
/// Endpoints (all `GET`, and `HEAD` as `GET` without the body; all behind ``WebGate``):
/// - `/` the page, `/app.js`, `/app.css` (compiled into the binary);
/// - `/api/processes`: the processes, as `nodescope ps --json`;
/// - `/api/tree?process=P`, `/api/leaks?process=P`: as `tree --json`, `leaks --format json`;
/// - `/api/events?process=P`: server-sent events, `tree` (the tree now) then `change` (each
///   change), as `attach` receives them; the stream ends when the process ends;
/// - `/api/diagram?process=P&root=PATH&format=svg|dot[&download=1]`: the diagram that `export`
///   draws, with the same renderer.
///
/// Serving a recording instead (``init(recording:port:token:logger:)``, `nodescope ui --from`),
/// the same endpoints answer at the instant of an `at` parameter (`end` when none; the process
/// parameter is not needed), `/api/info` describes the recording, `/api/instant?at=T` answers
/// the tree, leaks and process at T in one body (the page's time slider), and there is no
/// `/api/events`. Both are one route table over a ``TreeSource`` (``Feed/source(at:)``): a
/// collector's, or the recording's at the request's instant.
///
/// What a browser or another local user can make it hold is bounded by ``WebLimits``:
/// connections, event streams, questions to the collector at once, and a deadline for each request.
package struct WebViewServer: Sendable {
    /// What the page shows: a collector's processes now, or a recording over time.
    package enum Feed: Sendable {
        /// The collector on this socket.
        case collector(socketPath: String)
        /// A recording, at the instant each request asks for.
        case recording(RecordingSource)

        /// The source that answers a request: the collector, or the recording at the request's
        /// `at` (its end when there is none).
        func source(at request: Request) throws -> NamedClosures {
            switch self {
            case .collector(let socketPath): return NamedClosures(CollectorSource(socketPath: socketPath))
            case .recording(let recording):
                return NamedClosures(RecordedInstant(recording.replay(at: try WebViewServer.instant(of: request).0)))
            }
        }

        /// The process a request asks about: needed for a collector (which has many), optional
        /// for a recording (which holds one).
        func process(of request: Request) throws -> String? {
            let process = request.uri.queryParameters["process"].map(String.init)
            if case .collector = self, process?.isEmpty ?? true {
                throw HTTPError(.badRequest, message: "name a process: ?process=PID or ?process=NAME")
            }
            return process?.isEmpty == true ? nil : process
        }
    }

    /// What the page shows.
    package let feed: Feed
    /// The port asked for; 0 picks a free one.
    package let requestedPort: Int
    /// The secret of the printed URL.
    package let token: String
    /// The bounds on connections, event streams and request time.
    package let limits: WebLimits
    private let logger: Logger

    /// A server for `feed`.
    package init(
        feed: Feed, port: Int = 0, token: String = WebGate.newToken(), limits: WebLimits = .init(), logger: Logger
    ) {
        self.feed = feed
        self.requestedPort = port
        self.token = token
        self.limits = limits
        self.logger = logger
    }

    /// A server for the collector on `socketPath`.
    package init(
        socketPath: String, port: Int = 0, token: String = WebGate.newToken(), limits: WebLimits = .init(), logger: Logger
    ) {
        self.init(feed: .collector(socketPath: socketPath), port: port, token: token, limits: limits, logger: logger)
    }

    /// A server for a recording, with a time slider over its instants.
    package init(
        recording: RecordingSource, port: Int = 0, token: String = WebGate.newToken(), limits: WebLimits = .init(),
        logger: Logger
    ) {
        self.init(feed: .recording(recording), port: port, token: token, limits: limits, logger: logger)
    }

    /// The address to open, with the token, for the server on `port`.
    package func url(port: Int) -> String { "http://127.0.0.1:\(port)/?token=\(token)" }

    /// Serves until SIGINT or SIGTERM; `onReady` gets the URL once the port is bound.
    package func run(onReady: @escaping @Sendable (String) -> Void) async throws {
        try await service(onReady: onReady).runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }

    /// The server as a service, to run in a service group beside the daemon's collector;
    /// `onReady` gets the URL once the port is bound.
    package func service(onReady: @escaping @Sendable (String) -> Void) -> some ApplicationProtocol {
        let port = PortBox()
        // HEAD answers as GET does, without the body (and without starting an event stream).
        let router = Router(context: WebRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: GateMiddleware(token: token, port: port, logger: logger))
        addRoutes(to: router, pools: Pools(limits))
        let deadline = limits.requestDeadline
        return Application(
            router: router,
            server: .http1(
                configuration: HTTP1Channel.Configuration(
                    additionalChannelHandlers: [RequestDeadlineHandler(deadline: deadline)], idleTimeout: deadline)),
            configuration: .init(
                address: .hostname("127.0.0.1", port: requestedPort), serverName: "nodescope", backlog: limits.backlog,
                availableConnectionsDelegate: ConnectionCap(limit: limits.maxConnections)),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                port.value.withLock { $0 = bound }
                onReady(url(port: bound))
            },
            logger: logger)
    }

    // MARK: Routes

    /// The places for event streams and for questions to the collector, shared by all connections.
    struct Pools: Sendable {
        let events: SlotPool
        let requests: SlotPool

        init(_ limits: WebLimits) {
            events = SlotPool(capacity: limits.maxEventStreams)
            requests = SlotPool(capacity: limits.maxCollectorRequests)
        }
    }

    /// The one route table, whatever the feed: each answer comes from the request's source.
    private func addRoutes(to router: Router<WebRequestContext>, pools: Pools) {
        let feed = self.feed
        router.get("/") { _, _ in Self.file(PackageResources.index_html, type: "text/html; charset=utf-8") }
        router.get("/app.js") { _, _ in Self.file(PackageResources.app_js, type: "text/javascript; charset=utf-8") }
        router.get("/app.css") { _, _ in Self.file(PackageResources.app_css, type: "text/css; charset=utf-8") }
        router.get("/api/info") { _, _ in
            switch feed {
            case .collector(let socketPath):
                return Self.json(
                    ControlBody.encode([
                        "socket": socketPath, "startLine": "NODESCOPE_SOCKET=\(socketPath) swift run sample-nodes --hold 600",
                    ]))
            case .recording(let recording):
                return Self.json(ControlBody.encode(["recording": recording.info]))
            }
        }
        router.get("/api/processes") { request, _ in
            let source = try feed.source(at: request)
            return Self.json(try await Self.ask(pools) { try await source.processesBody() })
        }
        router.get("/api/tree") { request, _ in
            let (source, process) = (try feed.source(at: request), try feed.process(of: request))
            var response = Self.json(
                try await Self.ask(pools) {
                    try await source.treeDocument(of: process, rootPath: "", depth: nil)
                })
            if request.uri.queryParameters["download"] == "1" {
                var name = process ?? ""
                if case .recording(let recording) = feed {
                    if name.isEmpty { name = recording.info.processName }
                    name += "-" + (request.uri.queryParameters["at"].map(String.init) ?? "end")
                }
                response.headers[.contentDisposition] = "attachment; filename=\"tree-\(Self.safe(name)).json\""
            }
            return response
        }
        router.get("/api/leaks") { request, _ in
            let (source, process) = (try feed.source(at: request), try feed.process(of: request))
            return Self.json(try await Self.ask(pools) { try await source.leaksBody(of: process) })
        }
        router.get("/api/diagram") { request, _ in
            let (source, process) = (try feed.source(at: request), try feed.process(of: request))
            let (view, leaks) = try await Self.ask(pools) {
                try await (source.tree(of: process, rootPath: "", depth: nil), source.leaks(of: process))
            }
            return Self.diagram(request, view: view, leaks: leaks)
        }
        router.get("/api/instant") { request, _ in
            guard case .recording(let recording) = feed else {
                throw HTTPError(.notFound, message: "instants are a recording's (nodescope ui --from FILE); this page is live")
            }
            let (instant, text) = try Self.instant(of: request)
            return Self.json(await ClosureNaming.shared.named(body: recording.instantBody(at: instant, requested: text)))
        }
        router.get("/api/events") { request, context in
            guard case .collector(let socketPath) = feed else {
                throw HTTPError(.notFound, message: "a recording has no live events; ask /api/instant?at=T")
            }
            // A collector's feed always names one (``Feed/process(of:)`` refuses a request without).
            let process = try feed.process(of: request) ?? ""
            guard let slot = pools.events.take() else {
                var refusal = Self.failure(
                    503,
                    "too many live views at once (the limit is \(pools.events.capacity) event streams); close another tab, "
                        + "or try again later")
                refusal.headers[.retryAfter] = "10"
                return refusal
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                body: ResponseBody { writer in
                    // The place is given back when the stream ends (or when a HEAD drops it unsent).
                    defer { withExtendedLifetime(slot) {} }
                    try await Self.stream(process, socketPath: socketPath, until: context.channel.closeFuture, to: &writer)
                })
        }
    }

    /// The request's `at`, parsed, and as written (`end` when there is none).
    static func instant(of request: Request) throws -> (ReplayInstant, String) {
        let text = request.uri.queryParameters["at"].map(String.init) ?? "end"
        guard let instant = RecordingSource.instant(text) else {
            throw HTTPError(
                .badRequest,
                message: "at=\(String(text.prefix(40))) is not an instant: use seconds from the start (12.5, 800ms), end, or event:N")
        }
        return (instant, text.isEmpty ? "end" : text)
    }

    /// How often an idle event stream says something (an SSE comment), so that a page that
    /// went away is noticed and its subscription ended even when the tree does not change.
    static let keepAliveSeconds: UInt64 = 15
    /// Events waiting for a slow page beyond this many end its stream: the page reconnects and
    /// gets the tree afresh, rather than the server keeping an ever longer queue.
    static let maxQueuedEvents = 20_000

    /// The subscription's tree and changes as server-sent events; a `gone` event when the
    /// collector goes away or the process cannot be found (the page then retries). The bodies
    /// go out as the collector wrote them, their closures named on the way (``TreeJSONClosures``,
    /// as `/api/tree` and `/api/leaks` name them): a 100,000-node tree is never decoded here.
    private static func stream(
        _ process: String, socketPath: String, until closed: EventLoopFuture<Void>, to writer: inout any ResponseBodyWriter
    ) async throws {
        try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
        let (events, feed) = AsyncStream<ByteBuffer>.makeStream(bufferingPolicy: .bufferingOldest(maxQueuedEvents))
        // A page that goes away ends its stream (and its subscription, and its place) at once.
        closed.whenComplete { _ in feed.finish() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { feed.finish() }
                var overflowed = false
                func send(_ buffer: ByteBuffer) -> Bool {
                    if case .dropped = feed.yield(buffer) { overflowed = true }
                    return !overflowed
                }
                do {
                    try await ControlClient.connect(to: socketPath) { client in
                        try await client.subscribeBodies(
                            process,
                            initial: { body in _ = send(event("tree", await ClosureNaming.shared.named(body: body))) },
                            onChange: { change, body in
                                guard send(event("change", await ClosureNaming.shared.named(body: body))) else { return false }
                                if case .sessionEnded = change { return false }
                                return true
                            })
                    }
                } catch let refusal as ControlClient.Refusal {
                    _ = feed.yield(event("gone", ControlBody.encode(["error": refusal.description, "kind": "notFound"])))
                } catch let error as ControlError {
                    _ = feed.yield(event("gone", ControlBody.encode(["error": error.message, "kind": "collector"])))
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(nanoseconds: keepAliveSeconds * 1_000_000_000)
                    _ = feed.yield(ByteBuffer(string: ": keep-alive\n\n"))
                }
            }
            // Written here only: a write that fails (the page went away) ends both tasks.
            for await buffer in events { try await writer.write(buffer) }
            group.cancelAll()
        }
        try await writer.finish(nil)
    }

    private static func event(_ name: String, _ body: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer(string: "event: \(name)\ndata: ")
        buffer.writeBytes(body)
        buffer.writeString("\n\n")
        return buffer
    }

    /// Diagrams drawn at once by this process's web views: drawing a big tree takes seconds
    /// and hundreds of MB (``WebLimits/maxRenders``), so one more waits its turn as a 503.
    static let renders = SlotPool(capacity: WebLimits.maxRenders)

    /// The diagram of `view` that a request asks for (`root`, `format`, `download`).
    static func diagram(_ request: Request, view: TreeView, leaks: [LeakRecord]) -> Response {
        guard let slot = renders.take() else {
            return failure(503, "already drawing \(renders.capacity) diagrams; try again in a moment")
        }
        defer { withExtendedLifetime(slot) {} }
        let query = request.uri.queryParameters
        let root = query["root"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        let isDOT = query["format"] == "dot"
        let drawing: DiagramRenderer.Drawing
        do {
            drawing = try TreeDiagram.draw(
                view, leaks: leaks, format: isDOT ? .dot : .svg, options: TreeDiagram.Options(rootPath: root))
        } catch {
            return Self.failure(404, "\(error)")
        }
        var headers: HTTPFields = [
            .contentType: isDOT ? "text/vnd.graphviz; charset=utf-8" : "image/svg+xml", .cacheControl: "no-store",
        ]
        if query["download"] == "1" {
            headers[.contentDisposition] = "attachment; filename=\"\(Self.fileName(view, root: root)).\(isDOT ? "dot" : "svg")\""
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: drawing.text)))
    }

    /// A file name from the process and the focus: letters, digits, `-`, `_` and `.` only.
    static func fileName(_ view: TreeView, root: String?) -> String {
        safe(view.processName + (root.map { "-" + $0 } ?? ""))
    }

    /// `raw` with every character but ASCII letters, digits, `-`, `_` and `.` replaced by `_`.
    static func safe(_ raw: String) -> String {
        let safe = raw.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "-_.".unicodeScalars.contains(scalar))
                ? Character(scalar) : "_"
        }
        return String(safe.prefix(80))
    }

    // MARK: Helpers

    /// Asks the source when one of the ``WebLimits/maxCollectorRequests`` places is free (503
    /// otherwise), with its refusals as HTTP errors: not found 404, another refusal 400, a
    /// collector that cannot be reached 503.
    private static func ask<T: Sendable>(_ pools: Pools, _ body: () async throws -> T) async throws -> T {
        guard let slot = pools.requests.take() else {
            throw HTTPError(
                .serviceUnavailable,
                message: "too many questions to the collector at once (the limit is \(pools.requests.capacity)); try again")
        }
        defer { withExtendedLifetime(slot) {} }
        do {
            return try await body()
        } catch let refusal as ControlClient.Refusal {
            throw HTTPError(refusal.status == .notFound ? .notFound : .badRequest, message: refusal.description)
        } catch let error as ControlError {
            throw HTTPError(.serviceUnavailable, message: error.message)
        }
    }

    static func json(_ bytes: [UInt8]) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private static func file(_ bytes: [UInt8], type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func failure(_ status: Int, _ reason: String) -> Response {
        Response(
            status: .init(code: status), headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: ControlBody.encode(["error": reason]))))
    }
}

/// The context of each request: Hummingbird's, and the connection it came on.
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection, so that an event stream ends as soon as its page closes it.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// The bound port, known once the server runs.
final class PortBox: Sendable {
    let value = Mutex(0)
}

/// ``WebGate`` in front of every route, and the headers that keep the page to itself.
struct GateMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    /// A `Host` header beyond the first (the first one is the request's authority).
    static let host = HTTPField.Name("Host")!
    let token: String
    let port: PortBox
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let gate = WebGate(token: token, port: port.value.withLock { $0 })
        let decision = gate.decide(
            method: request.method.rawValue, path: request.uri.path,
            queryToken: request.uri.queryParameters["token"].map(String.init), authority: request.head.authority,
            origin: request.headers[.origin], cookie: request.cookies[gate.cookieName]?.value,
            hostHeaders: (request.head.authority == nil ? 0 : 1) + request.headers[values: Self.host].count)
        var response: Response
        switch decision {
        case .allow:
            do {
                response = try await next(request, context)
            } catch let error as HTTPError {
                response = WebViewServer.failure(Int(error.status.code), error.body ?? "\(error.status)")
            }
        case .admitAndRedirect:
            response = .redirect(to: WebGate.landing(query: request.uri.query), type: .found)
            response.setCookie(
                Cookie(name: gate.cookieName, value: token, path: "/", httpOnly: true, sameSite: .strict))
        case .refuse(let status, let reason):
            logger.notice(
                "web view refused \(request.method) \(VisibleText.escaped(request.uri.path)): \(VisibleText.escaped(reason))")
            response = WebViewServer.failure(status, reason)
        }
        response.headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[Self.referrerPolicy] = "no-referrer"
        return response
    }
}
