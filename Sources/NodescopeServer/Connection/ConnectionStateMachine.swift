import NodescopeWire

/// The decisions of one connection, without I/O: what each incoming message means given what
/// the peer has said so far. The handler performs the returned action.
struct ConnectionStateMachine {
    /// What the peer has said so far.
    enum State: Equatable {
        case awaitingHello
        case host(goodbye: GoodbyeReason?)
        case client
        case closed
    }

    /// What the handler does with a message.
    enum Action: Equatable {
        /// A host said hello: open its session and accept it.
        case acceptHost(Hello)
        /// A client said hello: accept it.
        case acceptClient(Hello)
        /// Refuse the hello with a reason, then close.
        case refuse(RefusalCode, String)
        /// Feed a host-stream message to the collector. A goodbye is fed too (the collector
        /// checks where it stands); once it is accepted the session ends normally.
        case ingest(WireMessage)
        /// Answer a client request.
        case request(ControlRequestFrame)
        /// Nothing to do (a client's heartbeat).
        case ignore
        /// Close the connection, logging why.
        case close(String)
    }

    private(set) var state: State = .awaitingHello

    /// What the connection's first bytes could not be decoded as: the answer to a hello that
    /// could not be read. A hello of another protocol version gets code 1 naming the versions
    /// this collector speaks; anything else, code 3.
    mutating func undecodableFirstFrame(_ error: WireError, announcedVersion: UInt16?) -> Action {
        state = .closed
        if error.code == .unsupportedVersion || (announcedVersion.map { $0 != WireLimits.protocolVersion } ?? false) {
            let version = announcedVersion.map { "\($0)" } ?? "another version"
            return .refuse(
                .versionUnsupported,
                "this collector speaks protocol version \(WireLimits.protocolVersion), the peer sent \(version)")
        }
        return .refuse(.badHandshake, "the first frame is not a valid hello: \(error.message)")
    }

    mutating func received(_ message: WireMessage) -> Action {
        switch (state, message) {
        case (.awaitingHello, .hello(let hello)):
            guard hello.protocolVersion == WireLimits.protocolVersion else {
                state = .closed
                return .refuse(
                    .versionUnsupported,
                    "this collector speaks protocol version \(WireLimits.protocolVersion), the peer sent \(hello.protocolVersion)")
            }
            switch hello.role {
            case .host:
                state = .host(goodbye: nil)
                return .acceptHost(hello)
            case .client:
                state = .client
                return .acceptClient(hello)
            }
        case (.awaitingHello, let other):
            state = .closed
            return .refuse(.badHandshake, "the first frame must be a hello, not \(other.frameType)")
        case (.host(goodbye: .some), _):
            state = .closed
            return .close("a frame after goodbye")
        case (.host, .goodbye(let reason)):
            state = .host(goodbye: reason)
            return .ingest(message)
        case (.client, .heartbeat):
            return .ignore
        case (.host, .defineString), (.host, .snapshotBegin), (.host, .snapshotEnd), (.host, .nodeAttached),
            (.host, .objectAdded), (.host, .stateChanged), (.host, .nodeDetached), (.host, .objectReleased),
            (.host, .dropped), (.host, .heartbeat):
            return .ingest(message)
        case (.host, let other):
            state = .closed
            return .close("a host may not send \(other.frameType)")
        case (.client, .request(let request)):
            return .request(request)
        case (.client, let other):
            state = .closed
            return .close("a client may not send \(other.frameType)")
        case (.closed, _):
            return .close("connection already closed")
        }
    }
}
