import NodescopeWire

/// The decisions of one connection, without I/O: what each incoming message means given what
/// the peer has said so far. The handler performs the returned action.
struct ConnectionStateMachine {
    /// What the peer has said so far.
    enum State: Equatable {
        case awaitingHello
        /// A host whose connection speaks `version`, and its goodbye once it said it.
        case host(version: UInt16, goodbye: GoodbyeReason?)
        case client
        case closed
    }

    /// What the handler does with a message.
    enum Action: Equatable {
        /// A host said hello: open its session and accept it, naming `version` for the connection.
        case acceptHost(Hello, version: UInt16)
        /// A client said hello: accept it, naming `version` for the connection.
        case acceptClient(Hello, version: UInt16)
        /// Refuse the hello with a reason, then close.
        case refuse(RefusalCode, String)
        /// Feed a host-stream message to the collector. A goodbye is fed too (the collector
        /// checks where it stands); once it is accepted the session ends normally.
        case ingest(WireMessage)
        /// A host ended its answer to an explain request (its retainers frames were ingested).
        case explained(ExplainedFrame)
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
        if error.code == .unsupportedVersion
            || (announcedVersion.map { !WireLimits.supportedVersions.contains($0) } ?? false)
        {
            return .refuse(.versionUnsupported, Self.versionRefusal(announcedVersion.map { "\($0)" } ?? "another version"))
        }
        return .refuse(.badHandshake, "the first frame is not a valid hello: \(error.message)")
    }

    mutating func received(_ message: WireMessage) -> Action {
        switch (state, message) {
        case (.awaitingHello, .hello(let hello)):
            guard WireLimits.supportedVersions.contains(hello.protocolVersion) else {
                state = .closed
                return .refuse(.versionUnsupported, Self.versionRefusal("\(hello.protocolVersion)"))
            }
            // The connection speaks the peer's version: every version up to ours is spoken here.
            let version = hello.protocolVersion
            switch hello.role {
            case .host:
                state = .host(version: version, goodbye: nil)
                return .acceptHost(hello, version: version)
            case .client:
                state = .client
                return .acceptClient(hello, version: version)
            }
        case (.awaitingHello, let other):
            state = .closed
            return .refuse(.badHandshake, "the first frame must be a hello, not \(other.frameType)")
        case (.host(_, goodbye: .some), _):
            state = .closed
            return .close("a frame after goodbye")
        case (.host(let version, _), .goodbye(let reason)):
            state = .host(version: version, goodbye: reason)
            return .ingest(message)
        case (.host(let version, _), .retainers), (.host(let version, _), .defineSite), (.host(let version, _), .defineTest),
            (.host(let version, _), .nodeOrigin):
            let type = message.frameType
            guard version >= type.sinceVersion else {
                state = .closed
                return .close("\(type) frames need protocol version \(type.sinceVersion); this connection speaks version \(version)")
            }
            if case .retainers(let frame) = message, version < 3, frame.hops.contains(where: { $0.closure != nil }) {
                state = .closed
                return .close("closure sites in retainers frames need protocol version 3; this connection speaks version \(version)")
            }
            return .ingest(message)
        case (.host(let version, _), .explained(let explained)):
            guard version >= FrameType.explained.sinceVersion else {
                state = .closed
                return .close("explained frames need protocol version 2; this connection speaks version \(version)")
            }
            return .explained(explained)
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

    /// The reason of a refusal for a hello of a version this collector does not speak.
    private static func versionRefusal(_ peerVersion: String) -> String {
        let versions = WireLimits.supportedVersions
        return "this collector speaks protocol versions \(versions.lowerBound) to \(versions.upperBound), the peer sent \(peerVersion)"
    }
}
