import NodescopeWire

/// The decisions of one connection, without I/O: what each incoming message means given what
/// the peer has said so far. The handler performs the returned action.
struct ConnectionStateMachine {
    enum State: Equatable {
        case awaitingHello
        case host(goodbye: GoodbyeReason?)
        case client
        case closed
    }

    enum Action: Equatable {
        /// A host said hello: open its session and accept it.
        case acceptHost(Hello)
        /// A client said hello: accept it.
        case acceptClient
        /// Refuse the hello with a reason, then close.
        case refuse(RefusalCode, String)
        /// Feed a host-stream message to the collector.
        case ingest(WireMessage)
        /// The host said goodbye: its end will be a normal one.
        case goodbye(GoodbyeReason)
        /// Answer a client request.
        case request(ControlRequestFrame)
        /// Nothing to do (a heartbeat).
        case ignore
        /// Close the connection, logging why.
        case close(String)
    }

    private(set) var state: State = .awaitingHello

    mutating func received(_ message: WireMessage) -> Action {
        switch (state, message) {
        case let (.awaitingHello, .hello(hello)):
            guard hello.protocolVersion == WireLimits.protocolVersion else {
                state = .closed
                return .refuse(.versionUnsupported, "protocol version \(hello.protocolVersion) is not supported; this collector speaks \(WireLimits.protocolVersion)")
            }
            switch hello.role {
            case .host:
                state = .host(goodbye: nil)
                return .acceptHost(hello)
            case .client:
                state = .client
                return .acceptClient
            }
        case let (.awaitingHello, other):
            state = .closed
            return .close("expected hello, got \(other.frameType)")
        case (.host(goodbye: .some), _):
            state = .closed
            return .close("a frame after goodbye")
        case let (.host, .goodbye(reason)):
            state = .host(goodbye: reason)
            return .goodbye(reason)
        case (.host, .heartbeat), (.client, .heartbeat):
            return .ignore
        case (.host, .defineString), (.host, .snapshotBegin), (.host, .snapshotEnd), (.host, .nodeAttached),
             (.host, .objectAdded), (.host, .stateChanged), (.host, .nodeDetached), (.host, .objectReleased),
             (.host, .dropped):
            return .ingest(message)
        case let (.host, other):
            state = .closed
            return .close("a host may not send \(other.frameType)")
        case let (.client, .request(request)):
            return .request(request)
        case let (.client, other):
            state = .closed
            return .close("a client may not send \(other.frameType)")
        case (.closed, _):
            return .close("connection already closed")
        }
    }

    /// Whether the host ended with a goodbye for a normal exit. A host whose agent was stopped
    /// (goodbye `agentDisabled`) did not hold for its graces: its end is not a normal one.
    var endedNormally: Bool { state == .host(goodbye: .normalExit) }
}
