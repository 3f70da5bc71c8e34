import NodesTracking
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
    /// The frames of the changes encoded as the tracker applied them, not yet moved to
    /// `outgoing` (see ``ByteRun``): moved before anything else is encoded there or written.
    /// A reference: the connection is moved between its owner and the tracker, never copied
    /// and used twice.
    private var deltas = ByteRun()

    /// The wire ids of an object descriptor this connection has met (see ``HostStreamEncoder``).
    @inline(__always)
    func knownObjectIDs(of descriptor: UInt32, in epoch: DescriptorEpoch) -> (role: UInt32, typeName: UInt32)? {
        encoder.knownObjectIDs(of: descriptor, in: epoch)
    }

    /// The run where the changes' frames go (the writer's straight encoding writes the frames
    /// of fixed size there itself, see ``StraightEncoding``).
    var deltasRun: ByteRun { deltas }

    /// The socket's file descriptor, for waiting until the collector sends something.
    var descriptor: Int32 { socket.descriptor }

    /// A connection over `socket`, with nothing encoded yet.
    init(socket: UnixSocketClient) {
        self.socket = socket
    }

    /// Appends one message (hello, heartbeat, dropped …) to what is to be written.
    mutating func encode(_ message: WireMessage) {
        if sentOffset >= outgoing.count, deltas.count > 0 {
            // Nothing else waits to be written: the message joins the run (a heartbeat after a
            // poll's deltas), which is then written from where it lies (``write(waitMilliseconds:)``).
            var bytes: [UInt8] = []
            encoder.encode(message, into: &bytes)
            deltas.append(bytes)
            return
        }
        deltas.move(into: &outgoing)
        encoder.encode(message, into: &outgoing)
    }

    /// Appends a snapshot's frames to what is to be written.
    mutating func encode(_ snapshot: TreeSnapshot) {
        deltas.move(into: &outgoing)
        encoder.encode(snapshot, into: &outgoing)
    }

    /// Appends one event's frame to what is to be written.
    mutating func encode(_ event: DebugInformation) {
        deltas.move(into: &outgoing)
        encoder.encode(event, into: &outgoing)
    }

    /// Appends one event's frame, given by its parts, to what is to be written.
    mutating func encode(
        sequence: UInt64, time: UInt64, node: NodeID, change: borrowing DebugInformation.Change, origin: NodeOrigin?
    ) {
        deltas.move(into: &outgoing)
        encoder.encode(sequence: sequence, time: time, node: node, change: change, origin: origin, into: &outgoing)
    }

    /// Appends an `attached` event's frame and the node's origin, named by the registry's node
    /// descriptor `descriptor` (see ``HostStreamEncoder``).
    mutating func encodeAttached(
        sequence: UInt64, time: UInt64, node: NodeID, parent: NodeID?, descriptor: UInt32,
        epoch: DescriptorEpoch, names: () -> NodeDescriptor
    ) {
        encoder.encodeAttached(
            sequence: sequence, time: time, node: node.rawValue, parent: parent?.rawValue ?? 0, descriptor: descriptor,
            epoch: epoch, names: names, into: deltas)
    }

    /// Appends an `objectAdded` event's frame, named by the registry's object descriptor
    /// `descriptor`.
    mutating func encodeObjectAdded(
        sequence: UInt64, time: UInt64, node: NodeID, index: UInt16, descriptor: UInt32,
        epoch: DescriptorEpoch, names: () -> ObjectDescriptor
    ) {
        encoder.encodeObjectAdded(
            sequence: sequence, time: time, node: node.rawValue, index: index, descriptor: descriptor, epoch: epoch,
            names: names, into: deltas)
    }

    /// Appends a `stateChanged` event's frame (none for a state the wire does not know).
    mutating func encodeStateChanged(sequence: UInt64, time: UInt64, node: NodeID, state: NodeState) {
        guard let wireState = WireNodeState(rawValue: state.rawValue) else { return }
        DeltaFrameWriter.stateChanged(
            sequence: sequence, time: time, node: node.rawValue, state: wireState.rawValue, into: &deltas)
    }

    /// Appends a `detached` event's frame.
    @inline(__always)
    mutating func encodeDetached(sequence: UInt64, time: UInt64, node: NodeID) {
        DeltaFrameWriter.nodeDetached(sequence: sequence, time: time, node: node.rawValue, into: &deltas)
    }

    /// Appends a `released` event's frame.
    mutating func encodeReleased(sequence: UInt64, time: UInt64, node: NodeID, index: UInt16) {
        DeltaFrameWriter.objectReleased(sequence: sequence, time: time, node: node.rawValue, index: index, into: &deltas)
    }

    /// Writes what is pending, waiting up to `waitMilliseconds` for a socket that does not
    /// take it at once. Once all of it is written, the buffer starts over.
    mutating func write(waitMilliseconds: Int32) -> AgentLink.WriteOutcome {
        if sentOffset >= outgoing.count, deltas.count > 0 {
            // Nothing else waits: the run's bytes are sent from where they lie, with no copy.
            // What the socket does not take moves to `outgoing` whole, with the part sent
            // counted as sent, so that its frames still lie end to end from its start.
            outgoing.removeAll(keepingCapacity: true)
            sentOffset = 0
            let sent = deltas.withBytes { socket.send($0, from: 0, timeoutMilliseconds: waitMilliseconds) }
            guard case .success(let offset) = sent else { return .failed }
            guard offset < deltas.count else {
                deltas.clear()
                return .all
            }
            deltas.move(into: &outgoing)
            sentOffset = offset
            return .partly
        }
        deltas.move(into: &outgoing)
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
            // Closure sites on retainer paths are version 3's.
            encoder.sendsClosureSites = accepted.protocolVersion >= 3
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

    /// Writes the rest of the frame being written, then one final message, waiting a little for
    /// the socket to take them, and making room for them in the socket's buffer when it is full.
    ///
    /// Whole frames still queued behind it are given up: the link says its goodbye with frames
    /// unsent only when the exit flush's bound has run out (`flushIncomplete`, which tells the
    /// collector so) or the agent stops. Sending them too would, with a collector slow to read,
    /// cut the stream in the middle of a frame and lose the goodbye, and with it every verdict
    /// of the process (an abnormal end) instead of the nodes the flush could not send.
    mutating func sayFinally(_ message: WireMessage, waitMilliseconds: Int32) {
        deltas.move(into: &outgoing)
        let end = Self.endOfFrame(at: sentOffset, in: outgoing)
        var bytes = Array(outgoing[sentOffset..<end])
        encoder.encode(message, into: &bytes)
        // A collector stopped while the process exits has let the socket fill: room is made, so
        // the goodbye still goes (the session then ends as cut, not abnormally).
        socket.makeRoom(for: bytes.count)
        _ = socket.send(bytes, from: 0, timeoutMilliseconds: waitMilliseconds)
    }

    /// Where the frame that `offset` falls in ends, in `bytes` (frames laid end to end from
    /// the start, each a u32 little-endian length and that many bytes); `offset` itself when it
    /// is a frame's start (nothing of that frame was written).
    static func endOfFrame(at offset: Int, in bytes: [UInt8]) -> Int {
        var start = 0
        while start < offset {
            guard start + WireLimits.frameHeaderBytes <= bytes.count else { return bytes.count }
            let length =
                Int(bytes[start]) | Int(bytes[start + 1]) << 8 | Int(bytes[start + 2]) << 16 | Int(bytes[start + 3]) << 24
            start += 4 + length
        }
        return min(start, bytes.count)
    }

    /// Closes the socket.
    mutating func close() {
        socket.close()
    }
}

/// The connection of a writer streaming deltas, lent to the tracker while the writer applies
/// its log, so that each change's event is encoded as it is made
/// (``NodeTracker/applyRecorded(for:into:encoding:maximum:)``); and what was encoded, for the link.
///
/// A class, because the tracker holds it by reference for the call (it knows it only as an
/// ``AppliedChangeEncoder``). Unchecked `Sendable`: one thread uses it at a time, the writer's
/// (the tracker calls it on the writer's thread, inside the writer's call), and the writer
/// takes the connection back (``returnConnection()``) before it lets go of it.
final class StraightEncoding: AppliedChangeEncoder, @unchecked Sendable {
    // Unchecked exclusivity: one thread at a time uses it (whoever holds the tracker's lock, to
    // which the writer lends it for one call), and every event of a round passes here, where
    // the runtime's checks of each access cost more than the encoding (callgrind: about 1,600
    // instructions a node cycle).
    @exclusivity(unchecked) private var lent: Unmanaged<Lent>?
    /// The sequence of the latest event encoded (at first, that of the latest one sent).
    @exclusivity(unchecked) private(set) var through: UInt64
    /// The time of the latest detach encoded.
    @exclusivity(unchecked) private(set) var latestDetach: UInt64?
    /// How many events were encoded.
    @exclusivity(unchecked) private(set) var count: UInt64 = 0

    /// The connection while it is lent, in a box: an optional reference is tested with one
    /// comparison, where an optional `CollectorConnection` took a call to find its case at
    /// every change encoded (about 12 instructions each). Held unmanaged (retained in `init`,
    /// released when returned or in `deinit`), so that a call through it retains nothing.
    private final class Lent {
        @exclusivity(unchecked) var connection: CollectorConnection

        init(_ connection: consuming CollectorConnection) {
            self.connection = connection
        }
    }

    /// Lends `connection`, whose stream has sent the events up to `sequence`.
    /// The lent connection's run of deltas, while it is lent (kept alive by the connection in
    /// `lent`): the frames of fixed size are written there straight, in a function with no call
    /// on its way (see ``encodeStateChanged(sequence:time:node:state:)``).
    @exclusivity(unchecked) private var deltas: Unmanaged<ByteRun>?
    /// The most bytes of one frame of fixed size, and the room they are written in without a check.
    private static let frameRoom = 64

    init(connection: CollectorConnection, after sequence: UInt64) {
        self.lent = Unmanaged.passRetained(Lent(connection))
        self.deltas = Unmanaged.passUnretained(connection.deltasRun)
        self.through = sequence
    }

    deinit {
        lent?.release()
    }

    /// Gives the connection back (once): afterwards this holds none, so that the connection's
    /// buffers have one owner again and grow in place.
    func returnConnection() -> CollectorConnection? {
        guard let box = lent else { return nil }
        lent = nil
        deltas = nil
        // The box is this reference's alone now: the connection's buffers have one owner once
        // it is gone, at the end of this call.
        return box.takeRetainedValue().connection
    }

    /// Encodes an event that was queued before, unless the stream has it already.
    func encode(_ event: DebugInformation) {
        encode(sequence: event.sequence, time: event.time, node: event.node, change: event.change, origin: event.origin)
    }

    /// Encodes one event, unless the stream has it already.
    func encode(
        sequence: UInt64, time: UInt64, node: NodeID, change: borrowing DebugInformation.Change, origin: NodeOrigin?
    ) {
        guard sequence > through else { return }
        lent?._withUnsafeGuaranteedRef { $0.connection.encode(sequence: sequence, time: time, node: node, change: change, origin: origin) }
        through = sequence
        count &+= 1
        switch change {
        case .detached: latestDetach = max(latestDetach ?? 0, time)
        default: break
        }
    }

    func encodeAttached(
        sequence: UInt64, time: UInt64, node: NodeID, parent: NodeID?, descriptor: UInt32,
        epoch: DescriptorEpoch, names: () -> NodeDescriptor
    ) {
        guard sequence > through else { return }
        lent?._withUnsafeGuaranteedRef {
            $0.connection.encodeAttached(
                sequence: sequence, time: time, node: node, parent: parent, descriptor: descriptor, epoch: epoch, names: names)
        }
        encoded(sequence)
    }

    func encodeObjectAdded(
        sequence: UInt64, time: UInt64, node: NodeID, index: UInt16, descriptor: UInt32,
        epoch: DescriptorEpoch, names: () -> ObjectDescriptor
    ) {
        guard sequence > through else { return }
        // As for the frames of fixed size below, when the connection has met the descriptor.
        guard let ids = lent?._withUnsafeGuaranteedRef({ $0.connection.knownObjectIDs(of: descriptor, in: epoch) }),
            writeInRoom({
                DeltaFrameWriter.objectAdded(
                    sequence: sequence, time: time, node: node.rawValue, index: index, role: ids.role,
                    typeName: ids.typeName, into: &$0)
            })
        else {
            return encodeObjectAddedByConnection(
                sequence: sequence, time: time, node: node, index: index, descriptor: descriptor, epoch: epoch,
                names: names)
        }
        encoded(sequence)
    }

    @inline(never)
    private func encodeObjectAddedByConnection(
        sequence: UInt64, time: UInt64, node: NodeID, index: UInt16, descriptor: UInt32,
        epoch: DescriptorEpoch, names: () -> ObjectDescriptor
    ) {
        lent?._withUnsafeGuaranteedRef {
            $0.connection.encodeObjectAdded(
                sequence: sequence, time: time, node: node, index: index, descriptor: descriptor, epoch: epoch, names: names)
        }
        encoded(sequence)
    }

    // The three frames of fixed size: written straight into the run when it has room, with no
    // call on the way, so that the function saves no registers (about 15 instructions a frame);
    // otherwise, and for a state the wire does not know, the connection encodes them (a call
    // made last, with the arguments as they came).

    func encodeStateChanged(sequence: UInt64, time: UInt64, node: NodeID, state: NodeState) {
        guard sequence > through else { return }
        guard WireNodeState(rawValue: state.rawValue) != nil,
            writeInRoom({
                DeltaFrameWriter.stateChanged(
                    sequence: sequence, time: time, node: node.rawValue, state: state.rawValue, into: &$0)
            })
        else { return encodeStateChangedByConnection(sequence: sequence, time: time, node: node, state: state) }
        encoded(sequence)
    }

    @inline(never)
    private func encodeStateChangedByConnection(sequence: UInt64, time: UInt64, node: NodeID, state: NodeState) {
        lent?._withUnsafeGuaranteedRef { $0.connection.encodeStateChanged(sequence: sequence, time: time, node: node, state: state) }
        encoded(sequence)
    }

    func encodeDetached(sequence: UInt64, time: UInt64, node: NodeID) {
        guard sequence > through else { return }
        latestDetach = max(latestDetach ?? 0, time)
        guard writeInRoom({ DeltaFrameWriter.nodeDetached(sequence: sequence, time: time, node: node.rawValue, into: &$0) })
        else { return encodeDetachedByConnection(sequence: sequence, time: time, node: node) }
        encoded(sequence)
    }

    @inline(never)
    private func encodeDetachedByConnection(sequence: UInt64, time: UInt64, node: NodeID) {
        lent?._withUnsafeGuaranteedRef { $0.connection.encodeDetached(sequence: sequence, time: time, node: node) }
        encoded(sequence)
    }

    func encodeReleased(sequence: UInt64, time: UInt64, node: NodeID, index: UInt16) {
        guard sequence > through else { return }
        guard
            writeInRoom({
                DeltaFrameWriter.objectReleased(
                    sequence: sequence, time: time, node: node.rawValue, index: index, into: &$0)
            })
        else { return encodeReleasedByConnection(sequence: sequence, time: time, node: node, index: index) }
        encoded(sequence)
    }

    @inline(never)
    private func encodeReleasedByConnection(sequence: UInt64, time: UInt64, node: NodeID, index: UInt16) {
        lent?._withUnsafeGuaranteedRef { $0.connection.encodeReleased(sequence: sequence, time: time, node: node, index: index) }
        encoded(sequence)
    }

    /// Writes one frame of at most ``frameRoom`` bytes into the lent connection's run when it
    /// has room for it, with no test and no call on the way; false (nothing written) otherwise.
    @inline(__always)
    private func writeInRoom(_ write: (inout ByteRun.InRoom) -> Void) -> Bool {
        guard let deltas, deltas._withUnsafeGuaranteedRef({ $0.hasRoom(Self.frameRoom) }) else { return false }
        deltas._withUnsafeGuaranteedRef { run in
            var sink = ByteRun.InRoom(run: run)
            write(&sink)
        }
        return true
    }

    @inline(__always)
    private func encoded(_ sequence: UInt64) {
        through = sequence
        count &+= 1
    }
}
