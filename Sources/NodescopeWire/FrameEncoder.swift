/// Turns ``WireMessage``s into frames: a u32 little-endian length, the type byte, the payload.
///
/// The encoder computes each frame's exact size, reserves room for it in the caller's buffer and
/// appends the fields; it allocates nothing else, so a writer can reuse one buffer for many frames.
/// It never traps on any message and never produces a frame that a ``FrameDecoder`` would
/// reject for its size:
/// - a `str` field longer than ``WireLimits/maxStringBytes`` UTF-8 bytes is cut to the longest
///   prefix that fits and ends on a Unicode scalar boundary;
/// - a `bytes` body longer than ``WireLimits/maxBodyBytes`` is cut to that many bytes (split long
///   bodies with ``ControlResponseFrame/parts(requestID:status:body:)`` instead).
///
/// Values that the decoder rejects (a hello with another protocol version, a zero node id or
/// string id) are encoded as given, so tests can produce them.
public struct FrameEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// Appends one complete frame holding `message` to `buffer`.
    public mutating func encode(_ message: WireMessage, into buffer: inout [UInt8]) {
        let payloadSize = FrameEncoder.payloadSize(of: message)
        let needed = buffer.count + WireLimits.frameHeaderBytes + payloadSize
        if needed > buffer.capacity {
            // Grow geometrically: an exact reservation per frame would reallocate every time.
            buffer.reserveCapacity(Swift.max(needed, buffer.capacity * 2))
        }
        var writer = ByteWriter(bytes: [])
        swap(&writer.bytes, &buffer)
        defer { swap(&writer.bytes, &buffer) }
        writer.write(UInt32(truncatingIfNeeded: 1 + payloadSize))
        writer.write(message.frameType.rawValue)
        FrameEncoder.writePayload(of: message, to: &writer)
        assert(writer.bytes.count == needed, "payloadSize disagrees with writePayload for \(message.frameType)")
    }

    /// Returns one complete frame holding `message`.
    public static func encoded(_ message: WireMessage) -> [UInt8] {
        var encoder = FrameEncoder()
        var buffer: [UInt8] = []
        encoder.encode(message, into: &buffer)
        return buffer
    }

    private static func writePayload(of message: WireMessage, to writer: inout ByteWriter) {
        switch message {
        case .hello(let hello):
            writer.write(WireLimits.magicWord)
            writer.write(hello.protocolVersion)
            writer.write(hello.role.rawValue)
            writer.write(hello.pid)
            writer.write(hello.monotonicNanos)
            writer.write(hello.wallNanos)
            writer.write(hello.processName)
        case .helloAccepted(let accepted):
            writer.write(accepted.protocolVersion)
            writer.write(accepted.graceNanos)
            writer.write(UInt8(accepted.holdExit ? 0b1 : 0))  // flags: bit 0 is holdExit
            writer.write(accepted.collectorMonotonicNanos)
        case .helloRefused(let refused):
            writer.write(refused.code.rawValue)
            writer.write(refused.reason)
        case .defineString(let definition):
            writer.write(definition.stringID)
            writer.write(definition.value)
        case .snapshotBegin(let begin):
            writer.write(begin.sequence)
            writer.write(begin.nodeCount)
        case .snapshotEnd(let sequence):
            writer.write(sequence)
        case .nodeAttached(let attached):
            writer.write(attached.sequence)
            writer.write(attached.timeNanos)
            writer.write(attached.nodeID)
            writer.write(attached.parentID)
            writer.write(attached.kindStringID)
            writer.write(attached.nameStringID)
        case .objectAdded(let added):
            writer.write(added.sequence)
            writer.write(added.timeNanos)
            writer.write(added.nodeID)
            writer.write(added.objectIndex)
            writer.write(added.roleStringID)
            writer.write(added.typeNameStringID)
        case .stateChanged(let changed):
            writer.write(changed.sequence)
            writer.write(changed.timeNanos)
            writer.write(changed.nodeID)
            writer.write(changed.state.rawValue)
        case .nodeDetached(let detached):
            writer.write(detached.sequence)
            writer.write(detached.timeNanos)
            writer.write(detached.nodeID)
        case .objectReleased(let released):
            writer.write(released.sequence)
            writer.write(released.timeNanos)
            writer.write(released.nodeID)
            writer.write(released.objectIndex)
        case .dropped(let count):
            writer.write(count)
        case .goodbye(let reason):
            writer.write(reason.rawValue)
        case .heartbeat(let monotonicNanos):
            writer.write(monotonicNanos)
        case .retainers(let retainers):
            writer.write(retainers.nodeID)
            writer.write(retainers.objectIndex)
            writer.write(retainers.verdict.rawValue)
            writer.write(UInt8(retainers.cutShort ? 0b1 : 0))
            writer.write(retainers.elapsedMicros)
            writer.write(retainers.note, limit: RetainersFrame.maxNoteBytes)
            let hops = retainers.hops.prefix(RetainersFrame.maxHops)
            writer.write(UInt16(hops.count))
            for (hop, site) in zip(hops, retainers.sentClosureSites) {
                writer.write(hop.holderKind.rawValue)
                writer.write(hop.holderNodeID)
                writer.write(hop.holder, limit: RetainersFrame.maxLabelBytes)
                writer.write(hop.reference, limit: RetainersFrame.maxLabelBytes)
                writer.write(UInt8(hop.isSuspect ? 0b1 : 0) | (site == nil ? 0 : 0b10))
                if let site {
                    writer.write(site.image, limit: RetainersFrame.maxImageBytes)
                    writer.write(site.fileOffset)
                }
            }
        case .explain(let explain):
            let nodes = explain.nodeIDs.prefix(ExplainFrame.maxNodes)
            writer.write(explain.requestID)
            writer.write(UInt16(nodes.count))
            for node in nodes { writer.write(node) }
        case .explained(let explained):
            writer.write(explained.requestID)
            writer.write(explained.outcome.rawValue)
            writer.write(explained.objectCount)
        case .defineSite(let site):
            writer.write(site.siteID)
            writer.write(site.fileStringID)
            writer.write(site.line)
        case .defineTest(let test):
            writer.write(test.testID)
            writer.write(test.suiteStringID)
            writer.write(test.nameStringID)
            writer.write(test.siteID)
        case .nodeOrigin(let origin):
            writer.write(origin.nodeID)
            writer.write(origin.siteID)
            writer.write(origin.testID)
        case .request(let request):
            writer.write(request.requestID)
            writer.write(request.command.rawValue)
            writer.write(request.argument)
            writer.write(request.depth)
            writer.write(request.rootPath)
        case .response(let response):
            writer.write(response.requestID)
            writer.write(response.status.rawValue)
            writer.write(response.part)
            writer.write(response.isLast)
            writer.write(body: response.body)
        case .event(let event):
            writer.write(event.subscriptionID)
            writer.write(body: event.body)
        }
    }

    /// The exact payload size of `message`, after any truncation of strings and bodies.
    private static func payloadSize(of message: WireMessage) -> Int {
        switch message {
        case .hello(let hello): return 4 + 2 + 1 + 4 + 8 + 8 + ByteWriter.encodedLength(of: hello.processName)
        case .helloAccepted: return 2 + 8 + 1 + 8
        case .helloRefused(let refused): return 1 + ByteWriter.encodedLength(of: refused.reason)
        case .defineString(let definition): return 4 + ByteWriter.encodedLength(of: definition.value)
        case .snapshotBegin: return 8 + 4
        case .snapshotEnd: return 8
        case .nodeAttached: return 8 + 8 + 8 + 8 + 4 + 4
        case .objectAdded: return 8 + 8 + 8 + 2 + 4 + 4
        case .stateChanged: return 8 + 8 + 8 + 1
        case .nodeDetached: return 8 + 8 + 8
        case .objectReleased: return 8 + 8 + 8 + 2
        case .dropped: return 8
        case .goodbye: return 1
        case .heartbeat: return 8
        case .retainers(let retainers):
            var size = 8 + 2 + 1 + 1 + 4 + ByteWriter.encodedLength(of: retainers.note, limit: RetainersFrame.maxNoteBytes) + 2
            for (hop, site) in zip(retainers.hops.prefix(RetainersFrame.maxHops), retainers.sentClosureSites) {
                size += 1 + 8 + ByteWriter.encodedLength(of: hop.holder, limit: RetainersFrame.maxLabelBytes)
                size += ByteWriter.encodedLength(of: hop.reference, limit: RetainersFrame.maxLabelBytes) + 1
                if let site { size += ByteWriter.encodedLength(of: site.image, limit: RetainersFrame.maxImageBytes) + 8 }
            }
            return size
        case .explain(let explain): return 4 + 2 + 8 * min(explain.nodeIDs.count, ExplainFrame.maxNodes)
        case .explained: return 4 + 1 + 2
        case .defineSite: return 4 + 4 + 4
        case .defineTest: return 4 + 4 + 4 + 4
        case .nodeOrigin: return 8 + 4 + 4
        case .request(let request):
            return 4 + 1 + ByteWriter.encodedLength(of: request.argument) + 4 + ByteWriter.encodedLength(of: request.rootPath)
        case .response(let response): return 4 + 1 + 4 + 1 + ByteWriter.encodedLength(of: response.body)
        case .event(let event): return 4 + ByteWriter.encodedLength(of: event.body)
        }
    }
}
