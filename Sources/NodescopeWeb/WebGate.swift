/// Who may use the web view, decided for each request before anything else, without I/O: the
/// page serves one user's collector on loopback, and every other local user, every other web
/// site the browser visits, and every DNS-rebinding trick are kept out.
///
/// - Only `GET` and `HEAD`: no endpoint changes anything, in the collector or in a host.
/// - Exactly one `Host` header: with two, which one counts would depend on who reads them.
/// - The `Host` must be the loopback address and port the server listens on (`127.0.0.1:PORT`,
///   `localhost:PORT`, `[::1]:PORT`): a page of another site whose name was rebound to
///   127.0.0.1 sends its own name, and is refused.
/// - An `Origin`, when the browser sends one, must be this server's.
/// - The random token of the printed URL (`/?token=…`) is traded once for a cookie (HttpOnly,
///   SameSite=Strict, named for the port, since cookies do not tell ports apart); every other
///   request needs that cookie.
package struct WebGate: Sendable {
    /// The decision about one request.
    package enum Decision: Equatable, Sendable {
        /// Serve it.
        case allow
        /// The URL's token is right: set the cookie and send the browser to `/` (so that the
        /// token leaves the address bar and the history).
        case admitAndRedirect
        /// Refuse with an HTTP status and a reason for the person (and the log).
        case refuse(status: Int, reason: String)
    }

    /// The secret of this server, in the printed URL.
    package let token: String
    /// The port the server listens on.
    package let port: Int

    /// A gate for the server on `port` with `token`.
    package init(token: String, port: Int) {
        self.token = token
        self.port = port
    }

    /// The cookie that carries the token (one per port).
    package var cookieName: String { "nodescope_token_\(port)" }

    /// A new token: 32 hexadecimal digits from the system's random source.
    package static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let word = generator.next() as UInt32
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 8 - digits.count) + digits
        }.joined()
    }

    /// Decides about a request.
    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - path: the path, without the query.
    ///   - queryToken: the `token` query parameter, if any.
    ///   - authority: the `Host` header.
    ///   - origin: the `Origin` header, if any.
    ///   - cookie: the value of ``cookieName``, if sent.
    ///   - hostHeaders: how many `Host` headers the request has.
    package func decide(
        method: String, path: String, queryToken: String?, authority: String?, origin: String?, cookie: String?,
        hostHeaders: Int = 1
    ) -> Decision {
        guard method == "GET" || method == "HEAD" else {
            return .refuse(status: 405, reason: "only GET and HEAD: the web view changes nothing")
        }
        guard hostHeaders <= 1 else {
            return .refuse(status: 400, reason: "the request has \(hostHeaders) Host headers; it must have one")
        }
        guard let authority, allowedAuthorities.contains(authority.lowercased()) else {
            return .refuse(
                status: 421,
                reason: "the Host header \(authority.map { "'\($0)'" } ?? "(none)") is not this server's (127.0.0.1:\(port))")
        }
        if let origin, !allowedOrigins.contains(origin.lowercased()) {
            return .refuse(status: 403, reason: "requests from the page of another origin ('\(origin)') are refused")
        }
        if path == "/", let queryToken {
            // A link made by appending `?process=PID` to the printed address reads
            // `?token=T?process=PID`: the token ends at the second `?`.
            let given = queryToken.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return Self.equal(String(given), token)
                ? .admitAndRedirect : .refuse(status: 403, reason: "the token in the address is not this server's")
        }
        guard let cookie, Self.equal(cookie, token) else {
            return .refuse(
                status: 401, reason: "open the address that `nodescope ui` printed (it carries a token) to use this page")
        }
        return .allow
    }

    /// Where the browser goes once its token is traded for the cookie: `/`, with the address's
    /// other parameters (a link to a process or an instant, `?token=…&at=12.5`), the token left out.
    package static func landing(query: String?) -> String {
        // `?` separates too: `?token=T?process=PID` is the printed address with `?process=PID` appended.
        let kept = (query ?? "").split(whereSeparator: { $0 == "&" || $0 == "?" }).filter { item in
            let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return !name.isEmpty && name != "token"
        }
        return kept.isEmpty ? "/" : "/?" + kept.joined(separator: "&")
    }

    private var allowedAuthorities: Set<String> {
        ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"]
    }

    private var allowedOrigins: Set<String> {
        Set(allowedAuthorities.map { "http://" + $0 })
    }

    /// Compares in time that does not depend on where the strings differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }
}
