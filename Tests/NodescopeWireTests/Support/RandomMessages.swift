import NodescopeWire
import SeededRandom

/// Builds random but valid messages of every type, with a bias toward edge values.
struct RandomMessages {
    var rng: SplitMix64

    init(seed: UInt64) {
        rng = SplitMix64(seed: seed)
    }

    mutating func messages(count: Int) -> [WireMessage] {
        (0..<count).map { _ in message() }
    }

    mutating func message() -> WireMessage {
        let type = FrameType.allCases.randomElement(using: &rng) ?? .heartbeat
        return message(of: type)
    }

    mutating func message(of type: FrameType) -> WireMessage {
        switch type {
        case .hello:
            return .hello(
                Hello(
                    role: pick(PeerRole.self), pid: int(), monotonicNanos: int(), wallNanos: int(), processName: string()
                ))
        case .helloAccepted:
            return .helloAccepted(
                HelloAccepted(
                    graceNanos: int(), holdExit: Bool.random(using: &rng), collectorMonotonicNanos: int()
                ))
        case .helloRefused:
            return .helloRefused(HelloRefused(code: pick(RefusalCode.self), reason: string()))
        case .defineString:
            return .defineString(DefineStringFrame(stringID: nonZero(), value: string()))
        case .snapshotBegin:
            return .snapshotBegin(SnapshotBeginFrame(sequence: int(), nodeCount: int()))
        case .snapshotEnd:
            return .snapshotEnd(sequence: int())
        case .nodeAttached:
            return .nodeAttached(
                NodeAttachedFrame(
                    sequence: int(), timeNanos: int(), nodeID: nonZero(), parentID: int(),
                    kindStringID: int(), nameStringID: int()
                ))
        case .objectAdded:
            return .objectAdded(
                ObjectAddedFrame(
                    sequence: int(), timeNanos: int(), nodeID: nonZero(), objectIndex: int(),
                    roleStringID: int(), typeNameStringID: int()
                ))
        case .stateChanged:
            return .stateChanged(
                StateChangedFrame(
                    sequence: int(), timeNanos: int(), nodeID: nonZero(), state: pick(WireNodeState.self)
                ))
        case .nodeDetached:
            return .nodeDetached(NodeDetachedFrame(sequence: int(), timeNanos: int(), nodeID: nonZero()))
        case .objectReleased:
            return .objectReleased(
                ObjectReleasedFrame(
                    sequence: int(), timeNanos: int(), nodeID: nonZero(), objectIndex: int()
                ))
        case .dropped:
            return .dropped(count: int())
        case .goodbye:
            return .goodbye(pick(GoodbyeReason.self))
        case .heartbeat:
            return .heartbeat(monotonicNanos: int())
        case .retainers:
            let hops = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                RetainerHop(
                    holderKind: pick(RetainerHolderKind.self), holderNodeID: int(), holder: string(limit: RetainersFrame.maxLabelBytes),
                    reference: string(limit: RetainersFrame.maxLabelBytes), isSuspect: Bool.random(using: &rng),
                    closure: Bool.random(using: &rng)
                        ? ClosureSite(image: string(limit: RetainersFrame.maxImageBytes), fileOffset: int() as UInt64) : nil)
            }
            return .retainers(
                RetainersFrame(
                    nodeID: nonZero(), objectIndex: int(), verdict: pick(RetainerVerdict.self),
                    cutShort: Bool.random(using: &rng), elapsedMicros: int(), note: string(limit: RetainersFrame.maxNoteBytes), hops: hops))
        case .explain:
            let count = Int.random(in: 1...ExplainFrame.maxNodes, using: &rng)
            return .explain(ExplainFrame(requestID: int(), nodeIDs: (0..<count).map { _ in nonZero() }))
        case .explained:
            return .explained(ExplainedFrame(requestID: int(), outcome: pick(ExplainOutcome.self), objectCount: int()))
        case .defineSite:
            return .defineSite(DefineSiteFrame(siteID: nonZero(), fileStringID: nonZero(), line: int()))
        case .defineTest:
            return .defineTest(DefineTestFrame(testID: nonZero(), suiteStringID: int(), nameStringID: nonZero(), siteID: int()))
        case .nodeOrigin:
            return .nodeOrigin(NodeOriginFrame(nodeID: nonZero(), siteID: int(), testID: int()))
        case .request:
            return .request(
                ControlRequestFrame(
                    requestID: int(), command: pick(ControlCommand.self), argument: string(), depth: int(),
                    rootPath: string()
                ))
        case .response:
            return .response(
                ControlResponseFrame(
                    requestID: int(), status: pick(ResponseStatus.self), part: int(),
                    isLast: Bool.random(using: &rng), body: body()
                ))
        case .event:
            return .event(ControlEventFrame(subscriptionID: int(), body: body()))
        }
    }

    /// A random integer: often 0, 1 or the maximum, otherwise uniform.
    mutating func int<T: FixedWidthInteger & UnsignedInteger>() -> T {
        switch rng.next() % 8 {
        case 0: return 0
        case 1: return 1
        case 2: return T.max
        default: return T.random(in: T.min...T.max, using: &rng)
        }
    }

    mutating func nonZero<T: FixedWidthInteger & UnsignedInteger>() -> T {
        let value: T = int()
        return value == 0 ? 1 : value
    }

    mutating func pick<T: CaseIterable>(_ type: T.Type) -> T {
        let all = Array(T.allCases)
        return all[Int(rng.next() % UInt64(all.count))]
    }

    /// A valid string of at most `limit` UTF-8 bytes, mixing 1- to 4-byte scalars.
    mutating func string(limit: Int = WireLimits.maxStringBytes) -> String {
        let scalars: [Character] = ["a", "Z", "0", "/", " ", "é", "ß", "€", "中", "🌲", "👩‍💻"]
        let lengthBound: Int
        switch rng.next() % 10 {
        case 0: return ""
        case 1: lengthBound = 1_100  // Up to about 4 KB of the widest characters.
        default: lengthBound = 24
        }
        let length = Int(rng.next() % UInt64(lengthBound + 1))
        var result = ""
        for _ in 0..<length {
            let character = scalars[Int(rng.next() % UInt64(scalars.count))]
            if result.utf8.count + character.utf8.count > limit { break }
            result.append(character)
        }
        return result
    }

    mutating func body() -> [UInt8] {
        let count: Int
        switch rng.next() % 10 {
        case 0: count = 0
        case 1: count = WireLimits.maxBodyBytes
        case 2: count = Int(rng.next() % UInt64(WireLimits.maxBodyBytes))
        default: count = Int(rng.next() % 64)
        }
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }
}
