import Foundation
import Glibc
import NIOCore
import NIOPosix
import NodescopeCollector
import NodescopeControlCodec
import NodescopeSocket
import NodescopeWire
import Synchronization

/// A client of the collector's control API over its Unix socket.
///
/// ```swift
/// try await ControlClient.connect(to: path) { client in
///     let processes = try await client.request(.listProcesses, as: [ProcessSummary].self)
/// }
/// ```
package struct ControlClient: ~Copyable {
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let deadline: AnswerDeadline
    private var decoder = FrameDecoder()
    private var nextRequestID: UInt32 = 1

    /// How long the collector may stay silent while an answer is due (the handshake, or a
    /// request's response) before the command gives up: 10 s, or `NODESCOPE_ANSWER_TIMEOUT`
    /// seconds. A long answer that keeps arriving never times out: each received part re-arms it.
    package static var answerTimeout: TimeAmount {
        let text = getenv("NODESCOPE_ANSWER_TIMEOUT").map { String(cString: $0) }
        if let text, let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 {
            return .nanoseconds(Int64(seconds * 1e9))
        }
        return .seconds(10)
    }

    /// Why a request failed on the collector's side.
    package struct Refusal: Error, Sendable, CustomStringConvertible {
        /// The response status.
        package var status: ResponseStatus
        /// The collector's explanation.
        package var failure: ControlBody.Failure

        /// The collector's explanation, made safe to print, with the candidates of an ambiguous
        /// name listed one a line by pid.
        package var description: String {
            guard let candidates = failure.candidates, !candidates.isEmpty else { return VisibleText.escaped(failure.error) }
            let list = candidates.map { "  \($0.pid)  \(VisibleText.escaped($0.processName))" }.joined(separator: "\n")
            return VisibleText.escaped(failure.error) + "; name one by pid:\n" + list
        }
    }

    /// Connects, says hello as a client, and runs `body`. Throws ``ControlError`` when nothing
    /// answers on `path` (`CollectorServer.isAnswering(at:)` asks first), and before anything is
    /// sent when the socket's place or the collector's user is not to be trusted (``SocketTrust``).
    package static func connect<T: Sendable>(
        to path: String, _ body: (inout ControlClient) async throws -> T
    ) async throws -> T {
        let descriptor: Int32
        switch SocketTrust.connect(to: path) {
        case .success(let connected):
            descriptor = connected
        case .failure(.untrusted(let refusal)):
            throw ControlError(.untrusted, explain(refusal, path: path))
        case .failure(.pathTooLong):
            throw ControlError(
                .pathTooLong, "the socket path \(path) is longer than a Unix socket allows (107 bytes); choose a shorter --socket")
        case .failure(.system):
            throw ControlError(.unreachable, Self.explainConnectFailure(path))
        }
        let answerTimeout = Self.answerTimeout
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .withConnectedSocket(descriptor) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw ControlError(.unreachable, Self.explainConnectFailure(path))
        }
        // A collector that accepts but never answers (stopped with SIGSTOP, wedged) must not
        // hang the command: every answer that is due has a deadline (``answerTimeout``).
        let deadline = AnswerDeadline(channel: channel.channel, path: path, timeout: answerTimeout)
        return try await channel.executeThenClose { inbound, outbound in
            var client = ControlClient(inbound: inbound.makeAsyncIterator(), outbound: outbound, deadline: deadline)
            try await client.handshake(path: path)
            return try await body(&client)
        }
    }

    /// Refuses, before anything is tried on it, a socket whose place another user controls,
    /// and a socket file of another user (its collector serves that user only: a command must
    /// say so, not start an embedded collector that cannot bind there).
    package static func checkPlace(of path: String) throws(ControlError) {
        if case .refused(let refusal) = SocketTrust.inspect(path) {
            throw ControlError(.untrusted, explain(refusal, path: path))
        }
        var info = stat()
        if lstat(path, &info) == 0, info.st_uid != getuid() {
            throw ControlError(.untrusted, explainConnectFailure(path))
        }
    }

    /// A refusal of ``SocketTrust`` as one line, with what to do.
    package static func explain(_ refusal: SocketTrust.Refusal, path: String) -> String {
        let own =
            "collectors serve their own user only: start your own with `nodescope daemon --socket PATH` "
            + "(or use the default path) and point NODESCOPE_SOCKET or --socket at it"
        switch refusal.code {
        case .inaccessible:
            return "\(refusal.message); \(own)"
        case .foreignPeer:
            return "refusing the collector on \(path), which could read everything sent to it: \(refusal.message); \(own)"
        default:
            return "refusing the socket \(path), which another user could replace with their own: \(refusal.message); "
                + "use a socket in a directory that only you may write, e.g. `nodescope daemon --socket "
                + "~/.nodescope/collector.sock` and the same --socket here"
        }
    }

    /// Why nothing could be reached on `path`, in words a person can act on.
    static func explainConnectFailure(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == EACCES {
                return "the socket \(path) belongs to another user: its directory is not open to you (uid "
                    + "\(getuid())); collectors serve their own user only: start your own with `nodescope daemon`"
            }
            return "no collector answers on \(path): start one with `nodescope daemon`"
        }
        if info.st_uid != getuid() {
            return "the socket \(path) belongs to another user (uid \(info.st_uid)); collectors serve their own "
                + "user only: start your own with `nodescope daemon --socket PATH` or set NODESCOPE_SOCKET"
        }
        return "no collector answers on \(path) (a stale socket file?): start one with `nodescope daemon`, "
            + "which replaces it"
    }

    private init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        deadline: AnswerDeadline
    ) {
        self.inbound = inbound
        self.outbound = outbound
        self.deadline = deadline
    }

    private mutating func handshake(path: String) async throws {
        // The control frames are the same in versions 1 to 3: a hello of version 1 is accepted
        // by every collector, old or new (docs/PROTOCOL.md, section 9).
        try await send(
            .hello(
                Hello(
                    protocolVersion: 1, role: .client, pid: UInt32(truncatingIfNeeded: getpid()), monotonicNanos: 0,
                    wallNanos: 0, processName: "nodescope")))
        switch try await nextAnswer() {
        case .helloAccepted:
            return
        case .helloRefused(let refused):
            throw ControlError(.helloRefused, "the collector on \(path) refused this client: \(VisibleText.escaped(refused.reason))")
        default:
            throw ControlError(.malformed, "the collector on \(path) answered the hello with something else; is it a Nodescope collector?")
        }
    }

    /// Sends a request and decodes the whole (possibly multi-part) response body.
    /// - Parameter answerWithinSeconds: how long the answer may take, when longer than
    ///   ``answerTimeout`` (an `explain` waits for the host's analysis).
    package mutating func request<T: Decodable>(
        _ command: ControlCommand, argument: String = "", depth: UInt32 = 0, rootPath: String = "", as type: T.Type,
        answerWithinSeconds: Double? = nil
    ) async throws -> T {
        let body = try await requestBody(
            command, argument: argument, depth: depth, rootPath: rootPath, answerWithinSeconds: answerWithinSeconds)
        return try ControlBody.decode(type, from: body)
    }

    /// Sends a request and returns the whole (possibly multi-part) body of a successful
    /// answer as the collector wrote it (JSON), undecoded: for passing it on as it is.
    package mutating func requestBody(
        _ command: ControlCommand, argument: String = "", depth: UInt32 = 0, rootPath: String = "",
        answerWithinSeconds: Double? = nil
    ) async throws -> [UInt8] {
        let answerWithin = answerWithinSeconds.map { TimeAmount.nanoseconds(Int64(min(max($0, 0), 86_400) * 1e9)) }
        let id = try await sendRequest(command, argument: argument, depth: depth, rootPath: rootPath)
        var body: [UInt8] = []
        while true {
            let message = try await nextAnswer(within: answerWithin)
            guard case .response(let response) = message, response.requestID == id else { continue }
            body += response.body
            guard response.isLast else { continue }
            guard response.status == .ok else {
                let failure =
                    (try? ControlBody.decode(ControlBody.Failure.self, from: body))
                    ?? ControlBody.Failure(error: "the collector answered \(response.status)")
                throw Refusal(status: response.status, failure: failure)
            }
            return body
        }
    }

    /// ``requestBody(_:argument:depth:rootPath:answerWithinSeconds:)`` for a large answer: each
    /// part of a successful body goes to `part` as it arrives (the parts joined are the body), so
    /// the body is never held whole. A refusal throws ``Refusal`` and hands over no part.
    package mutating func requestBody(
        _ command: ControlCommand, argument: String = "", depth: UInt32 = 0, rootPath: String = "",
        eachPart part: ([UInt8]) throws -> Void
    ) async throws {
        let id = try await sendRequest(command, argument: argument, depth: depth, rootPath: rootPath)
        var refusal: (status: ResponseStatus, body: [UInt8])?
        while true {
            let message = try await nextAnswer()
            guard case .response(let response) = message, response.requestID == id else { continue }
            if response.status == .ok, refusal == nil {
                try part(response.body)
            } else {
                refusal = (response.status, (refusal?.body ?? []) + response.body)
            }
            guard response.isLast else { continue }
            guard let refusal else { return }
            let failure =
                (try? ControlBody.decode(ControlBody.Failure.self, from: refusal.body))
                ?? ControlBody.Failure(error: "the collector answered \(refusal.status)")
            throw Refusal(status: refusal.status, failure: failure)
        }
    }

    /// Subscribes to a process's tree: returns the tree now, then calls `onChange` for each
    /// change until the process ends (or the connection does).
    package mutating func subscribe(
        _ process: String, initial: (TreeView) async throws -> Void, onChange: (TreeChange) async throws -> Bool
    ) async throws {
        try await subscribeBodies(
            process, initial: { try await initial(try ControlBody.decode(TreeView.self, from: $0)) },
            onChange: { change, _ in try await onChange(change) })
    }

    /// ``subscribe(_:initial:onChange:)`` with the bodies as the collector wrote them: the tree's
    /// JSON undecoded (a 100,000-node tree is tens of megabytes), each change decoded and as
    /// written.
    package mutating func subscribeBodies(
        _ process: String, initial: ([UInt8]) async throws -> Void, onChange: (TreeChange, [UInt8]) async throws -> Bool
    ) async throws {
        try await initial(try await requestBody(.subscribe, argument: process))
        // Changes come when the host does something: no deadline while waiting for them.
        while true {
            let message: WireMessage?
            do {
                message = try await nextMessage(due: false)
            } catch let error as WireError {
                throw ControlError(.malformed, "the collector on \(deadline.path) sent a malformed frame: \(error)")
            } catch {
                message = nil  // a reset connection: the collector went away
            }
            guard let message else { break }
            guard case .event(let event) = message else { continue }
            let change = try ControlBody.decode(TreeChange.self, from: event.body)
            guard try await onChange(change, event.body) else { return }
        }
        throw ControlError(
            .wentAway, "the collector on \(deadline.path) went away (killed or stopped) while watching \(VisibleText.escaped(process))")
    }

    /// Sends a `record` request for `process` into `path` (absolute), waits for the answer,
    /// then for the event that ends the recording (no deadline: it lasts as long as the process).
    package mutating func record(
        _ process: String, path: String, started: (ControlBody.RecordingStarted) async throws -> Void
    ) async throws -> ControlBody.RecordingOutcome {
        let id = try await sendRequest(.record, argument: process, depth: 0, rootPath: path)
        var body: [UInt8] = []
        var isStarted = false
        while true {
            let message: WireMessage?
            do {
                message = try await nextMessage(due: false)
            } catch {
                message = nil
            }
            guard let message else {
                throw ControlError(.wentAway, "the collector on \(deadline.path) went away while recording \(VisibleText.escaped(process))")
            }
            switch message {
            case .response(let response) where response.requestID == id && !isStarted:
                body += response.body
                guard response.isLast else { continue }
                guard response.status == .ok else {
                    let failure =
                        (try? ControlBody.decode(ControlBody.Failure.self, from: body))
                        ?? ControlBody.Failure(error: "the collector answered \(response.status)")
                    throw Refusal(status: response.status, failure: failure)
                }
                isStarted = true
                try await started(try ControlBody.decode(ControlBody.RecordingStarted.self, from: body))
            case .event(let event) where event.subscriptionID == id:
                return try ControlBody.decode(ControlBody.RecordingOutcome.self, from: event.body)
            default:
                continue
            }
        }
    }

    private mutating func sendRequest(
        _ command: ControlCommand, argument: String, depth: UInt32, rootPath: String
    ) async throws -> UInt32 {
        let id = nextRequestID
        nextRequestID &+= 1
        try await send(
            .request(
                ControlRequestFrame(
                    requestID: id, command: command, argument: argument, depth: depth, rootPath: rootPath)))
        return id
    }

    private func send(_ message: WireMessage) async throws {
        do {
            try await outbound.write(ByteBuffer(bytes: FrameEncoder.encoded(message)))
        } catch {
            throw deadline.failure(orElse: "it closed the connection")
        }
    }

    /// The next message when one is due: the collector's silence beyond ``answerTimeout``, or
    /// its going away, is an error that names the socket.
    private mutating func nextAnswer(within timeout: TimeAmount? = nil) async throws -> WireMessage {
        let message: WireMessage?
        do {
            message = try await nextMessage(due: true, within: timeout)
        } catch let error as ControlError {
            throw error
        } catch {
            throw deadline.failure(orElse: "the connection failed (\(error))")
        }
        guard let message else { throw deadline.failure(orElse: "it closed the connection before answering") }
        return message
    }

    private mutating func nextMessage(due: Bool, within timeout: TimeAmount? = nil) async throws -> WireMessage? {
        while true {
            if let message = try decoder.next() { return message }
            if due { deadline.arm(timeout) }
            let buffer = try await inbound.next()
            if due { deadline.disarm() }
            guard let buffer else { return nil }
            buffer.withUnsafeReadableBytes { decoder.feed($0) }
        }
    }
}

/// The timer of an answer that is due: when it fires, the connection is closed (which ends the
/// wait for the next bytes) and the failure says that the collector did not answer in time.
private final class AnswerDeadline: Sendable {
    let path: String
    private let channel: any Channel
    private let timeout: TimeAmount
    private let state = Mutex<(scheduled: Scheduled<Void>?, fired: TimeAmount?)>((nil, nil))

    init(channel: any Channel, path: String, timeout: TimeAmount) {
        self.channel = channel
        self.path = path
        self.timeout = timeout
    }

    /// Arms the timer for the default timeout, or for `longer` when it is longer.
    func arm(_ longer: TimeAmount? = nil) {
        let channel = self.channel
        let timeout = max(self.timeout, longer ?? self.timeout)
        let scheduled = channel.eventLoop.scheduleTask(in: timeout) { [weak self] in
            self?.state.withLock { $0.fired = timeout }
            channel.close(promise: nil)
        }
        state.withLock { $0.scheduled = scheduled }
    }

    func disarm() {
        state.withLock { $0.scheduled }?.cancel()
    }

    /// Why the answer did not come: the deadline when it fired, else `otherwise`.
    func failure(orElse otherwise: String) -> ControlError {
        if let timeout = state.withLock({ $0.fired }) {
            let seconds = Double(timeout.nanoseconds) / 1e9
            return ControlError(
                .timedOut,
                "the collector on \(path) did not answer within \(String(format: "%g", seconds)) s; is it stopped "
                    + "(SIGSTOP) or wedged? Restart it with `nodescope daemon`")
        }
        return ControlError(.wentAway, "the collector on \(path) went away: \(otherwise) (was it killed or restarted?)")
    }
}
