import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

/// Issue 32, points 1, 2 and 10, as another local user or a hostile page would try them: a real
/// `nodescope ui` (and daemon), raw TCP connections, and a second account (`nobody`, through
/// setpriv) when the suite runs as root.
@Suite("The web view's hard edges", .serialized, .offTheCooperativePool)
struct WebViewBoundsEndToEndTests {
    static let canActAsNobody = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// A `nodescope ui` on `socket`, its port and token, once it prints its address.
    struct WebView {
        let process: ChildProcess
        let port: Int
        let token: String

        init(socket: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
            process = try ChildProcess("nodescope", ["ui", "--socket", socket] + arguments, environment: environment)
            let url = try #require(process.waitForLine(prefix: "http://127.0.0.1:", seconds: 30), "\(process.stderr)")
            let address = url.dropFirst("http://127.0.0.1:".count)
            port = try #require(Int(address.prefix { $0.isNumber }))
            token = String(try #require(url.split(separator: "=").last))
        }

        /// A request with the cookie that the token is traded for.
        func request(_ method: String = "GET", _ target: String, extraHeaders: [String] = []) -> String {
            var lines = ["\(method) \(target) HTTP/1.1", "Host: 127.0.0.1:\(port)", "Cookie: nodescope_token_\(port)=\(token)"]
            lines += extraHeaders
            return lines.joined(separator: "\r\n") + "\r\n\r\n"
        }

        /// The server's resident memory, in bytes.
        var residentBytes: Int { WebViewBoundsEndToEndTests.residentBytes(of: process.process.processIdentifier) }
    }

    // MARK: Point 1: the token reaches the browser, and no one else

    @Test func point1_theOpenerGetsAPrivatePageNotTheTokenedAddress() throws {
        let scratch = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        chmod(scratch.path, 0o755)  // nobody may pass through; only the page's own folder keeps them out
        let record = scratch.appendingPathComponent("record").path
        let opener = scratch.appendingPathComponent("xdg-open").path
        let script = """
            #!/bin/sh
            printf '%s\\n' "$#" "$@" > '\(record).argv'
            env > '\(record).env'
            cat "$1" > '\(record).page'
            stat -c '%a %u' "$1" "$(dirname "$1")" > '\(record).mode'
            [ -x /usr/bin/setpriv ] && [ "$(id -u)" = 0 ] && \
              { /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups /bin/cat "$1" > '\(record).nobody' 2>&1; \
                echo "status $?" >> '\(record).nobody'; }
            echo "$1" > '\(record).done'

            """
        try script.write(toFile: opener, atomically: true, encoding: .utf8)
        chmod(opener, 0o755)
        let path = scratch.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let web = try WebView(
            socket: scratch.appendingPathComponent("c.sock").path, arguments: ["--open"],
            environment: ["PATH": path, "TMPDIR": scratch.path, "XDG_RUNTIME_DIR": ""])
        defer { web.process.stop() }
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !FileManager.default.fileExists(atPath: record + ".done") { Thread.sleep(forTimeInterval: 0.05) }
        let page = try #require(try? String(contentsOfFile: record + ".done", encoding: .utf8))
            .trimmingCharacters(in: .whitespacesAndNewlines)

        let argv = try String(contentsOfFile: record + ".argv", encoding: .utf8)
        #expect(argv == "1\n\(page)\n", "the opener gets one argument, the page's path")
        #expect(!argv.contains(web.token), "the token is in the opener's arguments: \(argv)")
        #expect(!(try String(contentsOfFile: record + ".env", encoding: .utf8)).contains(web.token), "the token is in its environment")
        #expect(page.hasPrefix(scratch.path + "/nodescope-open-"), "the page is under TMPDIR when XDG_RUNTIME_DIR is unset: \(page)")
        let html = try String(contentsOfFile: record + ".page", encoding: .utf8)
        #expect(html.contains("http://127.0.0.1:\(web.port)/?token=\(web.token)"), "the page sends the browser on: \(html)")
        let modes = try String(contentsOfFile: record + ".mode", encoding: .utf8).split(separator: "\n")
        #expect(modes == ["600 \(getuid())", "700 \(getuid())"], "the page 0600 in a folder 0700, both ours: \(modes)")
        if Self.canActAsNobody {
            let nobody = try String(contentsOfFile: record + ".nobody", encoding: .utf8)
            #expect(nobody.contains("Permission denied") && !nobody.contains(web.token), "nobody read the page: \(nobody)")
            #expect(!nobody.contains("status 0"), "\(nobody)")
        }
        // Nor does the token appear on any process's command line.
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
            guard let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            #expect(!String(decoding: raw, as: UTF8.self).contains(web.token), "pid \(entry) shows the token")
        }
        web.process.signal(SIGINT)
        #expect(web.process.waitForExit() == 0, "\(web.process.stderr)")
        #expect(!FileManager.default.fileExists(atPath: page), "the page stays after ui ends")
        #expect(!FileManager.default.fileExists(atPath: URL(fileURLWithPath: page).deletingLastPathComponent().path))
    }

    // MARK: Point 2: bounded event streams, connections and request time

    @Test func point2_eventStreamsBeyondTheCapAreRefusedAndHostsAreStillServed() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let host = try ChildProcess("sample-nodes", ["--quiet", "--hold", "120"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        let pid = UInt32(host.process.processIdentifier)
        _ = try fixture.waitForProcesses { $0.contains { $0.pid == pid } }
        let web = try WebView(socket: fixture.socket)
        defer { web.process.stop() }

        var open: [TCPConnection] = []
        defer { open.forEach { $0.close() } }
        var accepted = 0
        var refusals: [String] = []
        for _ in 0..<60 {
            let connection = try #require(TCPConnection(port: web.port))
            // Closed by the server after a refusal; a stream stays open as long as it lasts.
            connection.send(web.request("GET", "/api/events?process=\(pid)", extraHeaders: ["Connection: close"]))
            let answer = connection.readHead(within: 30)
            if answer.hasPrefix("HTTP/1.1 200") {
                accepted += 1
                open.append(connection)
            } else {
                refusals.append(answer + connection.readBody(within: 5))
                connection.close()
            }
        }
        #expect(accepted == 16, "event streams accepted: \(accepted)")
        #expect(refusals.count == 44)
        #expect(refusals.allSatisfy { $0.hasPrefix("HTTP/1.1 503") && $0.contains("too many live views") }, "\(refusals.first ?? "")")
        // The daemon still answers clients and takes a new host, which is listed.
        #expect(try fixture.run(["ps"]).status == 0)
        let newHost = try ChildProcess("sample-nodes", ["--quiet", "--hold", "60"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { newHost.stop() }
        let newPID = UInt32(newHost.process.processIdentifier)
        let listed = try fixture.waitForProcesses(seconds: 30) { $0.contains { $0.pid == newPID } }
        #expect(listed.contains { $0.pid == newPID }, "the new host is not listed")
        // A page that goes gives its place back at once.
        open.removeFirst().close()
        var again = false
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !again {
            let connection = try #require(TCPConnection(port: web.port))
            connection.send(web.request("GET", "/api/events?process=\(pid)"))
            again = connection.readHead(within: 30).hasPrefix("HTTP/1.1 200")
            if again { open.append(connection) } else { connection.close() }
            if !again { Thread.sleep(forTimeInterval: 0.2) }
        }
        #expect(again, "the place of a closed stream was not given back")
        print("web view: \(accepted) event streams accepted, \(refusals.count) refused with 503; hosts have all 1024 places")
    }

    @Test func point2_clientsAtTheirLimitLeaveHostsTheirPlaces() throws {
        let fixture = try DaemonFixture(arguments: ["--max-clients", "4"])
        defer { fixture.stop() }
        var clients: [RawSocket] = []
        defer { clients.forEach { $0.close() } }
        for index in 0..<5 {
            let client = try #require(RawSocket(path: fixture.socket))
            client.send(RawFrames.hello(role: 2, pid: 300 + UInt32(index), monotonic: RawFrames.now(), name: "page\(index)"))
            let answer = RawFrames.decode(client.read(upTo: index < 4 ? 24 : 1 << 20, within: 5)).first
            if index < 4 {
                guard case .helloAccepted? = answer else {
                    Issue.record("client \(index) was refused below the limit: \(String(describing: answer))")
                    return
                }
                clients.append(client)
            } else {
                guard case .helloRefused(let refusal)? = answer else {
                    Issue.record("a fifth client was let in: \(String(describing: answer))")
                    return
                }
                #expect(refusal.code == .busyOrOther)
                #expect(refusal.reason.contains("limit of 4 client connections"), "\(refusal.reason)")
                client.close()
            }
        }
        // With every client place taken, a host still connects, and is listed once a place is free.
        let host = try ChildProcess("sample-nodes", ["--quiet", "--hold", "60"], environment: ["NODESCOPE_SOCKET": fixture.socket])
        defer { host.stop() }
        let rawHost = try #require(RawSocket(path: fixture.socket))
        defer { rawHost.close() }
        rawHost.send(RawFrames.hello(role: 1, pid: 400, monotonic: RawFrames.now(), name: "raw-host"))
        guard case .helloAccepted? = RawFrames.decode(rawHost.read(upTo: 24, within: 5)).first else {
            Issue.record("a host was refused while clients held their places")
            return
        }
        clients.removeFirst().close()
        let pid = UInt32(host.process.processIdentifier)
        let listed = try fixture.waitForProcesses(seconds: 30) { $0.contains { $0.pid == pid } }
        #expect(listed.contains { $0.pid == pid }, "the host that connected while clients were at their limit")
    }

    @Test func point2_idleAndHalfSentRequestsAreClosed() throws {
        let scratch = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let web = try WebView(socket: scratch.appendingPathComponent("c.sock").path)
        defer { web.process.stop() }
        let silent = try #require(TCPConnection(port: web.port))
        let halfHead = try #require(TCPConnection(port: web.port))
        halfHead.send("GET /api/processes HTTP/1.1\r\nHost: 127.0.0.1:\(web.port)\r\n")
        let halfBody = try #require(TCPConnection(port: web.port))
        halfBody.send(web.request("GET", "/api/processes", extraHeaders: ["Content-Length: 1000"]) + "abc")
        let keptAlive = try #require(TCPConnection(port: web.port))
        keptAlive.send(web.request("GET", "/api/processes"))
        #expect(keptAlive.readHead(within: 30).hasPrefix("HTTP/1.1 200"))
        for (name, connection) in [
            ("silent", silent), ("half a head", halfHead), ("half a body", halfBody), ("idle after an answer", keptAlive),
        ] {
            #expect(connection.isClosedByPeer(within: 60), "a connection with \(name) stays open")
            connection.close()
        }
    }

    @Test func point2_twoThousandHalfOpenConnectionsCostTheWebViewLittle() throws {
        let scratch = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let web = try WebView(socket: scratch.appendingPathComponent("c.sock").path)
        defer { web.process.stop() }
        let before = web.residentBytes
        let socketsBefore = Self.openSockets(of: web.process.process.processIdentifier)
        var connections: [TCPConnection] = []
        defer { connections.forEach { $0.close() } }
        for _ in 0..<2_000 {
            guard let connection = TCPConnection(port: web.port, waitForConnect: false) else { continue }
            connection.send("GET /api/processes HTTP/1.1\r\nHost: 127.0.0.1:\(web.port)\r\nX-Slow: ")
            connections.append(connection)
        }
        // Measured once the web view holds as many connections as it takes (its limit, 64).
        let full = Date().addingTimeInterval(60)
        while Date() < full, Self.openSockets(of: web.process.process.processIdentifier) < socketsBefore + WebLimits.defaultConnections {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(Self.openSockets(of: web.process.process.processIdentifier) >= socketsBefore + WebLimits.defaultConnections)
        let during = web.residentBytes
        // Still served once the half-open ones are let go (closed by the deadline, or by us).
        connections.forEach { $0.close() }
        connections.removeAll()
        var served = false
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !served {
            if let probe = TCPConnection(port: web.port) {
                probe.send(web.request("GET", "/api/processes"))
                served = probe.readHead(within: 20).hasPrefix("HTTP/1.1 200")
                probe.close()
            }
        }
        #expect(served, "the web view does not serve after the flood")
        #expect(web.process.process.isRunning)
        #expect(during - before < 16 << 20, "2,000 half-open connections took \((during - before) >> 20) MiB")
        print("web view memory: \(before >> 20) MiB before, \(during >> 20) MiB with 2,000 half-open connections")
    }

    /// The sockets a process has open, from /proc.
    static func openSockets(of pid: Int32) -> Int {
        let directory = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return entries.count { entry in
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(entry)")) ?? "").hasPrefix("socket:")
        }
    }

    enum WebLimits {
        /// The web view's default limit on connections at once (`WebLimits.maxConnections`).
        static let defaultConnections = 64
    }

    // MARK: Point 10: HEAD, and two Host headers

    @Test func point10_headAnswersAsGetWithoutABodyAndTwoHostHeadersAreRefused() throws {
        let scratch = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let web = try WebView(socket: scratch.appendingPathComponent("c.sock").path)
        defer { web.process.stop() }
        for target in ["/", "/app.js", "/api/processes", "/api/info"] {
            let get = try #require(TCPConnection(port: web.port))
            defer { get.close() }
            get.send(web.request("GET", target, extraHeaders: ["Connection: close"]))
            let getHead = get.readHead(within: 30)
            let getBody = get.readBody(within: 10)
            let head = try #require(TCPConnection(port: web.port))
            defer { head.close() }
            head.send(web.request("HEAD", target, extraHeaders: ["Connection: close"]))
            let headHead = head.readHead(within: 30)
            #expect(headHead.hasPrefix("HTTP/1.1 200"), "HEAD \(target): \(headHead)")
            #expect(Self.field("Content-Length", headHead) == Self.field("Content-Length", getHead), "HEAD \(target)")
            #expect(Self.field("Content-Length", getHead) == "\(getBody.utf8.count)")
            #expect(head.readBody(within: 2).isEmpty, "HEAD \(target) has a body")
        }
        // HEAD of an event stream: its head only; no subscription, no place taken.
        for _ in 0..<20 {
            let stream = try #require(TCPConnection(port: web.port))
            defer { stream.close() }
            stream.send(web.request("HEAD", "/api/events?process=1", extraHeaders: ["Connection: close"]))
            let answer = stream.readHead(within: 30)
            #expect(answer.hasPrefix("HTTP/1.1 200") && answer.contains("text/event-stream"), "\(answer)")
            #expect(stream.readBody(within: 5).isEmpty)
        }
        let good = "Host: 127.0.0.1:\(web.port)"
        for hosts in [[good, "Host: evil.example"], ["Host: evil.example", good], [good, good]] {
            let connection = try #require(TCPConnection(port: web.port))
            defer { connection.close() }
            var lines = ["GET /api/processes HTTP/1.1"] + hosts
            lines += ["Cookie: nodescope_token_\(web.port)=\(web.token)", "Connection: close"]
            connection.send(lines.joined(separator: "\r\n") + "\r\n\r\n")
            let answer = connection.readHead(within: 30) + connection.readBody(within: 10)
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(hosts): \(answer)")
            #expect(answer.contains("2 Host headers"), "\(answer)")
        }
    }

    // MARK: Helpers

    static func field(_ name: String, _ head: String) -> String? {
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
    }

    static func residentBytes(of pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }
}

/// A raw TCP connection to 127.0.0.1, for requests as a hostile client writes them.
final class TCPConnection {
    let descriptor: Int32
    private var buffered: [UInt8] = []

    /// Connects to `port`; nil when nothing accepts there. Without `waitForConnect` it does not
    /// wait for the handshake (the server may not accept for a while).
    init?(port: Int, waitForConnect: Bool = true) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        if !waitForConnect { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 || (!waitForConnect && errno == EINPROGRESS) else {
            Glibc.close(descriptor)
            return nil
        }
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until the end of an answer's head (a blank line), the peer's close, or `seconds`.
    func readHead(within seconds: Double) -> String {
        let deadline = Date().addingTimeInterval(seconds)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while Date() < deadline {
            if let range = find(end) {
                let head = Array(buffered[..<range])
                buffered.removeFirst(range + end.count)
                return String(decoding: head, as: UTF8.self)
            }
            guard receive(timeoutMilliseconds: 50) != 0 else { break }
        }
        return String(decoding: buffered, as: UTF8.self)
    }

    /// What arrives after the head within `seconds` or until the peer closes.
    func readBody(within seconds: Double) -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, receive(timeoutMilliseconds: 50) != 0 {}
        defer { buffered.removeAll() }
        return String(decoding: buffered, as: UTF8.self)
    }

    /// Whether the peer closes the connection within `seconds` (what it sends is read and dropped).
    func isClosedByPeer(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if receive(timeoutMilliseconds: 100) == 0 { return true }
            buffered.removeAll()
        }
        return false
    }

    func close() {
        Glibc.close(descriptor)
    }

    /// Receives what is there within the timeout: the count read, -1 when nothing came, 0 when
    /// the peer closed (or the connection failed).
    private func receive(timeoutMilliseconds: Int32) -> Int {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, timeoutMilliseconds) > 0 else { return -1 }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = recv(descriptor, &chunk, chunk.count, 0)
        if count <= 0 { return 0 }
        buffered += chunk[..<count]
        return count
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffered.count >= pattern.count else { return nil }
        for start in 0...(buffered.count - pattern.count) where buffered[start..<(start + pattern.count)].elementsEqual(pattern) {
            return start
        }
        return nil
    }
}
