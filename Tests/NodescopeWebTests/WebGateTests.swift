import NodescopeWeb
import Testing

/// Who may use the web view: each refusal, and the one way in.
@Suite struct WebGateTests {
    let gate = WebGate(token: "0123456789abcdef0123456789abcdef", port: 8765)

    func decide(
        method: String = "GET", path: String = "/api/processes", token: String? = nil, authority: String? = "127.0.0.1:8765",
        origin: String? = nil, cookie: String? = "0123456789abcdef0123456789abcdef"
    ) -> WebGate.Decision {
        gate.decide(method: method, path: path, queryToken: token, authority: authority, origin: origin, cookie: cookie)
    }

    @Test func theCookieOpensEveryReadOnLoopbackNames() {
        for authority in ["127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765", "[::1]:8765"] {
            #expect(decide(authority: authority) == .allow, "\(authority)")
        }
        #expect(decide(method: "HEAD") == .allow)
        #expect(decide(origin: "http://127.0.0.1:8765") == .allow)
    }

    @Test func theTokenOfTheAddressIsTradedForTheCookie() {
        #expect(decide(path: "/", token: gate.token, cookie: nil) == .admitAndRedirect)
        #expect(gate.cookieName == "nodescope_token_8765", "one cookie per port: cookies do not tell ports apart")
        guard case .refuse(403, _) = decide(path: "/", token: "0123456789abcdef0123456789abcdee", cookie: nil) else {
            Issue.record("a wrong token was let in")
            return
        }
    }

    @Test func twoHostHeadersAreRefusedWhicheverComesFirst() {
        for authority in ["127.0.0.1:8765", "evil.example:8765"] {
            let decision = gate.decide(
                method: "GET", path: "/api/processes", queryToken: nil, authority: authority, origin: nil,
                cookie: gate.token, hostHeaders: 2)
            #expect(decision == .refuse(status: 400, reason: "the request has 2 Host headers; it must have one"))
        }
        #expect(
            gate.decide(
                method: "HEAD", path: "/", queryToken: nil, authority: "127.0.0.1:8765", origin: nil, cookie: gate.token,
                hostHeaders: 1) == .allow)
    }

    @Test func everythingElseIsRefusedWithItsReason() {
        let cases: [(WebGate.Decision, Int, String)] = [
            (decide(cookie: nil), 401, "open the address"),
            (decide(cookie: "0123456789abcdef0123456789abcdee"), 401, "open the address"),
            (decide(cookie: ""), 401, "open the address"),
            (decide(method: "POST"), 405, "changes nothing"),
            (decide(method: "DELETE"), 405, "changes nothing"),
            (decide(authority: "evil.example:8765"), 421, "evil.example"),
            (decide(authority: "127.0.0.1:9999"), 421, "not this server's"),
            (decide(authority: nil), 421, "(none)"),
            (decide(origin: "http://evil.example"), 403, "another origin"),
            (decide(origin: "null"), 403, "another origin"),
            (decide(path: "/", token: nil, cookie: nil), 401, "open the address"),
        ]
        for (decision, status, words) in cases {
            guard case .refuse(let got, let reason) = decision else {
                Issue.record("let in: expected \(status)")
                continue
            }
            #expect(got == status && reason.contains(words), "\(got) \(reason)")
        }
    }

    @Test func tokensAreNewEachTimeAndHex() {
        let tokens = Set((0..<100).map { _ in WebGate.newToken() })
        #expect(tokens.count == 100)
        #expect(tokens.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }
}

/// Where the browser lands once its token is traded: the link's other parameters stay.
@Suite struct WebGateLandingTests {
    @Test func theLinksOtherParametersSurviveTheTrade() {
        #expect(WebGate.landing(query: nil) == "/")
        #expect(WebGate.landing(query: "token=abc") == "/")
        #expect(WebGate.landing(query: "token=abc&at=12.5") == "/?at=12.5")
        #expect(WebGate.landing(query: "at=event%3A40&token=abc&process=app") == "/?at=event%3A40&process=app")
        #expect(WebGate.landing(query: "&&token&=x&at=end") == "/?at=end")
        // The printed address with `?process=PID` appended: the token ends at the second `?`.
        #expect(WebGate.landing(query: "token=abc?process=4242") == "/?process=4242")
    }

    @Test func aProcessAppendedToThePrintedAddressIsLetIn() {
        let gate = WebGate(token: "0123456789abcdef0123456789abcdef", port: 8765)
        func decide(_ token: String) -> WebGate.Decision {
            gate.decide(method: "GET", path: "/", queryToken: token, authority: "127.0.0.1:8765", origin: nil, cookie: nil)
        }
        // `/?token=T?process=4242`: the token parameter reads `T?process=4242`.
        #expect(decide(gate.token + "?process=4242") == .admitAndRedirect)
        guard case .refuse(403, _) = decide("0123?process=4242") else {
            Issue.record("a wrong token followed by a parameter was let in")
            return
        }
    }
}
