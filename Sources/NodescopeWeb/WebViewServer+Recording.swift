import HTTPTypes
import Hummingbird
import NIOCore
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeReplay

extension WebViewServer {
    /// The endpoints of a recording (`nodescope ui --from`), each at the request's `at`.
    static func addRecordingRoutes(to router: Router<WebRequestContext>, _ recording: RecordingSource) {
        router.get("/api/info") { _, _ in
            json(ControlBody.encode(["recording": recording.info]))
        }
        router.get("/api/instant") { request, _ in
            let (instant, text) = try Self.instant(of: request)
            return json(recording.instantBody(at: instant, requested: text))
        }
        router.get("/api/processes") { request, _ in
            let replay = recording.replay(at: try Self.instant(of: request).0)
            return json(ControlBody.encode(replay.collector.summary(replay.session).map { [$0] } ?? []))
        }
        router.get("/api/tree") { request, _ in
            let replay = recording.replay(at: try Self.instant(of: request).0)
            guard let view = replay.collector.tree(replay.session) else {
                throw HTTPError(.notFound, message: "the recording has no tree at that instant")
            }
            var response = json(TreeJSON.encode(view))
            if request.uri.queryParameters["download"] == "1" {
                let at = safe(String(request.uri.queryParameters["at"] ?? "end"))
                response.headers[.contentDisposition] = "attachment; filename=\"tree-\(safe(view.processName))-\(at).json\""
            }
            return response
        }
        router.get("/api/leaks") { request, _ in
            let replay = recording.replay(at: try Self.instant(of: request).0)
            return json(ControlBody.encode(replay.collector.leaks(replay.session)))
        }
        router.get("/api/diagram") { request, _ in
            let replay = recording.replay(at: try Self.instant(of: request).0)
            guard let view = replay.collector.tree(replay.session) else {
                throw HTTPError(.notFound, message: "the recording has no tree at that instant")
            }
            return diagram(request, view: view, leaks: replay.collector.leaks(replay.session))
        }
    }

    /// The request's `at`, parsed, and as written (`end` when there is none).
    private static func instant(of request: Request) throws -> (ReplayInstant, String) {
        let text = request.uri.queryParameters["at"].map(String.init) ?? "end"
        guard let instant = RecordingSource.instant(text) else {
            throw HTTPError(
                .badRequest,
                message: "at=\(String(text.prefix(40))) is not an instant: use seconds from the start (12.5, 800ms), end, or event:N")
        }
        return (instant, text.isEmpty ? "end" : text)
    }
}
