import NodescopeWire

/// One connection to the collector as the writer thread holds it: the socket, the frames
/// encoded and not yet written, and the decoder of what the collector sends.
///
/// A new connection starts with a new encoder: string ids are per connection.
struct CollectorConnection {
    private var socket: UnixSocketClient
    private var encoder = HostStreamEncoder()
    private var decoder = FrameDecoder()
    /// The bytes encoded; those from `sentOffset` on are not written yet.
    private var outgoing: [UInt8] = []
    private var sentOffset = 0

    /// The socket's file descriptor, for waiting until the collector sends something.
    var descriptor: Int32 { socket.descriptor }

    /// A connection over `socket`, with nothing encoded yet.
    init(socket: UnixSocketClient) {
        self.socket = socket
    }

    /// Appends one message (hello, heartbeat, dropped …) to what is to be written.
    mutating func encode(_ message: WireMessage) {
        encoder.encode(message, into: &outgoing)
    }

    /// Appends a snapshot's frames to what is to be written.
    mutating func encode(_ snapshot: TreeSnapshot) {
        encoder.encode(snapshot, into: &outgoing)
    }

    /// Appends one event's frame to what is to be written.
    mutating func encode(_ event: DebugInformation) {
        encoder.encode(event, into: &outgoing)
    }

    /// Writes what is pending, waiting up to `waitMilliseconds` for a socket that does not
    /// take it at once. Once all of it is written, the buffer starts over.
    mutating func write(waitMilliseconds: Int32) -> AgentLink.WriteOutcome {
        if sentOffset < outgoing.count {
            guard case .success(let offset) = socket.send(outgoing, from: sentOffset, timeoutMilliseconds: waitMilliseconds)
            else { return .failed }
            sentOffset = offset
            guard offset == outgoing.count else { return .partly }
        }
        outgoing.removeAll(keepingCapacity: true)
        sentOffset = 0
        return .all
    }

    /// Reads the collector's answer to the hello, waiting up to `waitMilliseconds`.
    mutating func readAnswer(waitMilliseconds: Int32) -> AgentLink.Answer {
        guard case .success(let bytes) = socket.receive(timeoutMilliseconds: waitMilliseconds) else { return .unusable }
        decoder.feed(bytes)
        let reply: WireMessage?
        do { reply = try decoder.next() } catch { return .unusable }
        switch reply {
        case nil: return .nothing
        case .helloAccepted(let accepted)?:
            // Attach sites and tests are frames of version 2: a version-1 connection never gets them.
            encoder.sendsOrigins = accepted.protocolVersion >= 2
            return .accepted(graceNanos: accepted.graceNanos, holdsExit: accepted.holdExit, version: accepted.protocolVersion)
        case .helloRefused(let refused)?:
            return .refused(refused.reason, versionUnsupported: refused.code == .versionUnsupported)
        case .some: return .unusable
        }
    }

    /// Reads, without waiting, whatever the collector sent on a streaming connection.
    mutating func readIncoming() -> AgentLink.Incoming {
        guard case .success(let bytes) = socket.receive(timeoutMilliseconds: 0) else { return .ended }
        guard !bytes.isEmpty else { return .fine }
        decoder.feed(bytes)
        var asked: [ExplainFrame] = []
        do {
            while let message = try decoder.next() {
                if case .explain(let request) = message, asked.count < AgentLink.maxQueuedRequests { asked.append(request) }
            }
            return asked.isEmpty ? .fine : .asked(asked)
        } catch {
            return .malformed("\(error)")
        }
    }

    /// Writes what is left and one final message, waiting a little for the socket to take it.
    mutating func sayFinally(_ message: WireMessage, waitMilliseconds: Int32) {
        var bytes = Array(outgoing[sentOffset...])
        encoder.encode(message, into: &bytes)
        _ = socket.send(bytes, from: 0, timeoutMilliseconds: waitMilliseconds)
    }

    /// Closes the socket.
    mutating func close() {
        socket.close()
    }
}
