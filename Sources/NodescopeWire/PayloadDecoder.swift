/// Decodes the payload of one frame whose type and extent are already known.
enum PayloadDecoder {
    /// Decodes `payload` as a frame of `type`; the payload must be consumed exactly.
    static func decode(_ type: FrameType, payload: UnsafeRawBufferPointer) throws(WireError) -> WireMessage {
        var reader = ByteReader(payload, frameType: type)
        let message = try decodeFields(type, from: &reader)
        guard reader.remaining == 0 else {
            throw WireError(.trailingBytes, "\(type) frame has \(reader.remaining) trailing bytes")
        }
        return message
    }

    private static func decodeFields(_ type: FrameType, from reader: inout ByteReader) throws(WireError) -> WireMessage {
        switch type {
        case .hello:
            try reader.readMagic()
            let version = try readVersion(from: &reader)
            return .hello(
                Hello(
                    protocolVersion: version,
                    role: try reader.readEnum(PeerRole.self, "role"),
                    pid: try reader.readUInt32("pid"),
                    monotonicNanos: try reader.readUInt64("monotonicNanos"),
                    wallNanos: try reader.readUInt64("wallNanos"),
                    processName: try reader.readString("processName")
                ))
        case .helloAccepted:
            let version = try readVersion(from: &reader)
            let graceNanos = try reader.readUInt64("graceNanos")
            let flags = try reader.readUInt8("flags")
            guard flags & ~0b1 == 0 else {
                throw reader.invalid("flags", "0x\(ByteReader.hex(flags))", allowed: "only bit 0, holdExit, is defined")
            }
            return .helloAccepted(
                HelloAccepted(
                    protocolVersion: version,
                    graceNanos: graceNanos,
                    holdExit: flags & 0b1 != 0,
                    collectorMonotonicNanos: try reader.readUInt64("collectorMonotonicNanos")
                ))
        case .helloRefused:
            return .helloRefused(
                HelloRefused(
                    code: try reader.readEnum(RefusalCode.self, "code"),
                    reason: try reader.readString("reason")
                ))
        case .defineString:
            let stringID = try reader.readUInt32("stringID")
            guard stringID != 0 else {
                throw reader.invalid("stringID", "0", allowed: "string ids start at 1; 0 means none")
            }
            return .defineString(DefineStringFrame(stringID: stringID, value: try reader.readString("value")))
        case .snapshotBegin:
            return .snapshotBegin(
                SnapshotBeginFrame(
                    sequence: try reader.readUInt64("sequence"),
                    nodeCount: try reader.readUInt32("nodeCount")
                ))
        case .snapshotEnd:
            return .snapshotEnd(sequence: try reader.readUInt64("sequence"))
        case .nodeAttached:
            return .nodeAttached(
                NodeAttachedFrame(
                    sequence: try reader.readUInt64("sequence"),
                    timeNanos: try reader.readUInt64("timeNanos"),
                    nodeID: try reader.readNodeID("nodeID"),
                    parentID: try reader.readUInt64("parentID"),
                    kindStringID: try reader.readUInt32("kindStringID"),
                    nameStringID: try reader.readUInt32("nameStringID")
                ))
        case .objectAdded:
            return .objectAdded(
                ObjectAddedFrame(
                    sequence: try reader.readUInt64("sequence"),
                    timeNanos: try reader.readUInt64("timeNanos"),
                    nodeID: try reader.readNodeID("nodeID"),
                    objectIndex: try reader.readUInt16("objectIndex"),
                    roleStringID: try reader.readUInt32("roleStringID"),
                    typeNameStringID: try reader.readUInt32("typeNameStringID")
                ))
        case .stateChanged:
            return .stateChanged(
                StateChangedFrame(
                    sequence: try reader.readUInt64("sequence"),
                    timeNanos: try reader.readUInt64("timeNanos"),
                    nodeID: try reader.readNodeID("nodeID"),
                    state: try reader.readEnum(WireNodeState.self, "state")
                ))
        case .nodeDetached:
            return .nodeDetached(
                NodeDetachedFrame(
                    sequence: try reader.readUInt64("sequence"),
                    timeNanos: try reader.readUInt64("timeNanos"),
                    nodeID: try reader.readNodeID("nodeID")
                ))
        case .objectReleased:
            return .objectReleased(
                ObjectReleasedFrame(
                    sequence: try reader.readUInt64("sequence"),
                    timeNanos: try reader.readUInt64("timeNanos"),
                    nodeID: try reader.readNodeID("nodeID"),
                    objectIndex: try reader.readUInt16("objectIndex")
                ))
        case .dropped:
            return .dropped(count: try reader.readUInt64("count"))
        case .goodbye:
            return .goodbye(try reader.readEnum(GoodbyeReason.self, "reason"))
        case .heartbeat:
            return .heartbeat(monotonicNanos: try reader.readUInt64("monotonicNanos"))
        case .retainers:
            return .retainers(try decodeRetainers(from: &reader))
        case .explain:
            let requestID = try reader.readUInt32("requestID")
            let count = Int(try reader.readUInt16("count"))
            guard (1...ExplainFrame.maxNodes).contains(count) else {
                throw reader.invalid("count", "\(count)", allowed: "1 to \(ExplainFrame.maxNodes)")
            }
            var nodes: [UInt64] = []
            nodes.reserveCapacity(count)
            for _ in 0..<count { nodes.append(try reader.readNodeID("nodeID")) }
            return .explain(ExplainFrame(requestID: requestID, nodeIDs: nodes))
        case .explained:
            return .explained(
                ExplainedFrame(
                    requestID: try reader.readUInt32("requestID"),
                    outcome: try reader.readEnum(ExplainOutcome.self, "outcome"),
                    objectCount: try reader.readUInt16("objectCount")
                ))
        case .defineSite:
            let siteID = try reader.readUInt32("siteID")
            guard siteID != 0 else { throw reader.invalid("siteID", "0", allowed: "site ids start at 1; 0 means none") }
            let fileStringID = try reader.readUInt32("fileStringID")
            guard fileStringID != 0 else {
                throw reader.invalid("fileStringID", "0", allowed: "a site names a file: string ids start at 1")
            }
            return .defineSite(DefineSiteFrame(siteID: siteID, fileStringID: fileStringID, line: try reader.readUInt32("line")))
        case .defineTest:
            let testID = try reader.readUInt32("testID")
            guard testID != 0 else { throw reader.invalid("testID", "0", allowed: "test ids start at 1; 0 means none") }
            let suiteStringID = try reader.readUInt32("suiteStringID")
            let nameStringID = try reader.readUInt32("nameStringID")
            guard nameStringID != 0 else {
                throw reader.invalid("nameStringID", "0", allowed: "a test has a name: string ids start at 1")
            }
            return .defineTest(
                DefineTestFrame(
                    testID: testID, suiteStringID: suiteStringID, nameStringID: nameStringID,
                    siteID: try reader.readUInt32("siteID")))
        case .nodeOrigin:
            return .nodeOrigin(
                NodeOriginFrame(
                    nodeID: try reader.readNodeID("nodeID"), siteID: try reader.readUInt32("siteID"),
                    testID: try reader.readUInt32("testID")))
        case .request:
            return .request(
                ControlRequestFrame(
                    requestID: try reader.readUInt32("requestID"),
                    command: try reader.readEnum(ControlCommand.self, "command"),
                    argument: try reader.readString("argument"),
                    depth: try reader.readUInt32("depth"),
                    rootPath: try reader.readString("rootPath")
                ))
        case .response:
            return .response(
                ControlResponseFrame(
                    requestID: try reader.readUInt32("requestID"),
                    status: try reader.readEnum(ResponseStatus.self, "status"),
                    part: try reader.readUInt32("part"),
                    isLast: try reader.readBool("isLast"),
                    body: try reader.readBody("body")
                ))
        case .event:
            return .event(
                ControlEventFrame(
                    subscriptionID: try reader.readUInt32("subscriptionID"),
                    body: try reader.readBody("body")
                ))
        }
    }

    private static func decodeRetainers(from reader: inout ByteReader) throws(WireError) -> RetainersFrame {
        let nodeID = try reader.readNodeID("nodeID")
        let objectIndex = try reader.readUInt16("objectIndex")
        let verdict = try reader.readEnum(RetainerVerdict.self, "verdict")
        let flags = try reader.readUInt8("flags")
        guard flags & ~0b1 == 0 else {
            throw reader.invalid("flags", "0x\(ByteReader.hex(flags))", allowed: "only bit 0, cutShort, is defined")
        }
        let elapsedMicros = try reader.readUInt32("elapsedMicros")
        let note = try reader.readString("note", limit: RetainersFrame.maxNoteBytes)
        let hopCount = Int(try reader.readUInt16("hopCount"))
        guard hopCount <= RetainersFrame.maxHops else {
            throw reader.invalid("hopCount", "\(hopCount)", allowed: "at most \(RetainersFrame.maxHops)")
        }
        var hops: [RetainerHop] = []
        hops.reserveCapacity(hopCount)
        var sites = 0
        for _ in 0..<hopCount {
            let kind = try reader.readEnum(RetainerHolderKind.self, "holderKind")
            let holderNodeID = try reader.readUInt64("holderNodeID")
            let holder = try reader.readString("holder", limit: RetainersFrame.maxLabelBytes)
            let reference = try reader.readString("reference", limit: RetainersFrame.maxLabelBytes)
            let hopFlags = try reader.readUInt8("hopFlags")
            guard hopFlags & ~0b11 == 0 else {
                throw reader.invalid(
                    "hopFlags", "0x\(ByteReader.hex(hopFlags))", allowed: "only bits 0 (suspect) and 1 (closure site) are defined")
            }
            var closure: ClosureSite?
            if hopFlags & 0b10 != 0 {
                sites += 1
                guard sites <= RetainersFrame.maxClosureSites else {
                    throw reader.invalid(
                        "hopFlags", "a closure site", allowed: "at most \(RetainersFrame.maxClosureSites) closure sites a path")
                }
                let image = try reader.readString("image", limit: RetainersFrame.maxImageBytes)
                closure = ClosureSite(image: image, fileOffset: try reader.readUInt64("fileOffset"))
            }
            hops.append(
                RetainerHop(
                    holderKind: kind, holderNodeID: holderNodeID, holder: holder, reference: reference,
                    isSuspect: hopFlags & 0b1 != 0, closure: closure))
        }
        return RetainersFrame(
            nodeID: nodeID, objectIndex: objectIndex, verdict: verdict, cutShort: flags & 0b1 != 0,
            elapsedMicros: elapsedMicros, note: note, hops: hops)
    }

    /// Reads a protocol version and rejects any this side does not speak, before the fields
    /// that another version might lay out differently.
    private static func readVersion(from reader: inout ByteReader) throws(WireError) -> UInt16 {
        let version = try reader.readUInt16("protocolVersion")
        guard WireLimits.supportedVersions.contains(version) else {
            throw WireError(
                .unsupportedVersion,
                "\(reader.frameType) names protocol version \(version); this side speaks versions \(WireLimits.supportedVersions.lowerBound) to \(WireLimits.supportedVersions.upperBound)"
            )
        }
        return version
    }
}

extension WireMessage {
    /// Decodes one frame's payload, given its type byte: what ``FrameDecoder`` does for one
    /// frame whose extent is already known (a reader of a recording, which frames on its own).
    ///
    /// - Throws: ``WireError`` for an unknown type or a payload that breaks the type's layout.
    public static func decode(typeByte: UInt8, payload: UnsafeRawBufferPointer) throws(WireError) -> WireMessage {
        guard let type = FrameType(rawValue: typeByte) else {
            throw WireError(.unknownType, "unknown frame type 0x\(ByteReader.hex(typeByte))")
        }
        guard payload.count + 1 <= WireLimits.maxFrameLength else {
            throw WireError(.frameTooLarge, "frame of \(payload.count + 1) bytes exceeds the \(WireLimits.maxFrameLength)-byte limit")
        }
        return try PayloadDecoder.decode(type, payload: payload)
    }
}
