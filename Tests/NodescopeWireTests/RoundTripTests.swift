import Testing

@testable import NodescopeWire

@Suite("Round trip of every message type")
struct RoundTripTests {
    static let long4096 = String(repeating: "x", count: WireLimits.maxStringBytes)
    static let multiByte4096 = String(repeating: "€", count: 1_364) + "ab"  // 3 × 1364 + 2 = 4094 bytes
    static let emoji = "Tree 🌲 — Straße, 中文, 👩‍💻"

    static let messages: [WireMessage] = [
        .hello(Hello(role: .host, pid: 4242, monotonicNanos: 1, wallNanos: 1_700_000_000_000_000_000, processName: "demo")),
        .hello(Hello(role: .client, pid: .max, monotonicNanos: .max, wallNanos: .max, processName: "")),
        .hello(Hello(role: .host, pid: 0, monotonicNanos: 0, wallNanos: 0, processName: long4096)),
        .hello(Hello(role: .host, pid: 1, monotonicNanos: 2, wallNanos: 3, processName: emoji)),
        .helloAccepted(HelloAccepted(graceNanos: 1_000_000_000, holdExit: true, collectorMonotonicNanos: 99)),
        .helloAccepted(HelloAccepted(graceNanos: .max, holdExit: false, collectorMonotonicNanos: .max)),
        .helloRefused(HelloRefused(code: .versionUnsupported, reason: "speaks version 1 only")),
        .helloRefused(HelloRefused(code: .wrongUser, reason: "")),
        .helloRefused(HelloRefused(code: .badHandshake, reason: multiByte4096)),
        .helloRefused(HelloRefused(code: .busyOrOther, reason: emoji)),
        .defineString(DefineStringFrame(stringID: 1, value: "LoginFlow")),
        .defineString(DefineStringFrame(stringID: .max, value: "")),
        .defineString(DefineStringFrame(stringID: 7, value: multiByte4096)),
        .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)),
        .snapshotBegin(SnapshotBeginFrame(sequence: .max, nodeCount: .max)),
        .snapshotEnd(sequence: 0),
        .snapshotEnd(sequence: .max),
        .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 2, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
        .nodeAttached(
            NodeAttachedFrame(
                sequence: .max, timeNanos: .max, nodeID: .max, parentID: .max, kindStringID: .max, nameStringID: .max
            )),
        .objectAdded(ObjectAddedFrame(sequence: 3, timeNanos: 4, nodeID: 1, objectIndex: 0, roleStringID: 2, typeNameStringID: 3)),
        .objectAdded(
            ObjectAddedFrame(
                sequence: .max, timeNanos: .max, nodeID: .max, objectIndex: .max, roleStringID: .max, typeNameStringID: .max
            )),
        .stateChanged(StateChangedFrame(sequence: 5, timeNanos: 6, nodeID: 1, state: .started)),
        .stateChanged(StateChangedFrame(sequence: 5, timeNanos: 6, nodeID: 1, state: .active)),
        .stateChanged(StateChangedFrame(sequence: 5, timeNanos: 6, nodeID: 1, state: .inactive)),
        .stateChanged(StateChangedFrame(sequence: .max, timeNanos: .max, nodeID: .max, state: .ended)),
        .nodeDetached(NodeDetachedFrame(sequence: 7, timeNanos: 8, nodeID: 1)),
        .nodeDetached(NodeDetachedFrame(sequence: .max, timeNanos: .max, nodeID: .max)),
        .objectReleased(ObjectReleasedFrame(sequence: 9, timeNanos: 10, nodeID: 1, objectIndex: 3)),
        .objectReleased(ObjectReleasedFrame(sequence: .max, timeNanos: .max, nodeID: .max, objectIndex: .max)),
        .dropped(count: 0),
        .dropped(count: .max),
        .goodbye(.normalExit),
        .goodbye(.agentDisabled),
        .heartbeat(monotonicNanos: 0),
        .heartbeat(monotonicNanos: .max),
        .request(ControlRequestFrame(requestID: 1, command: .listProcesses)),
        .request(ControlRequestFrame(requestID: 2, command: .tree, argument: "4242", depth: 3, rootPath: "AppFlow/LoginFlow")),
        .request(ControlRequestFrame(requestID: .max, command: .leaks, argument: emoji, depth: .max, rootPath: long4096)),
        .request(ControlRequestFrame(requestID: 0, command: .subscribe, argument: long4096, depth: 0, rootPath: multiByte4096)),
        .request(ControlRequestFrame(requestID: 5, command: .unsubscribe, argument: "4")),
        .response(ControlResponseFrame(requestID: 1, status: .ok, part: 0, isLast: true, body: Array("{}".utf8))),
        .response(ControlResponseFrame(requestID: 1, status: .notFound, part: 0, isLast: false, body: [])),
        .response(ControlResponseFrame(requestID: 1, status: .ambiguous, part: .max, isLast: true, body: [0, 255, 0])),
        .response(ControlResponseFrame(requestID: .max, status: .badRequest, part: 1, isLast: false, body: [])),
        .response(
            ControlResponseFrame(
                requestID: 3, status: .internalError, part: 2, isLast: true,
                body: [UInt8](repeating: 0xAB, count: WireLimits.maxBodyBytes)
            )),
        .event(ControlEventFrame(subscriptionID: 4, body: Array("{\"node\":1}".utf8))),
        .event(ControlEventFrame(subscriptionID: .max, body: [])),
        .event(ControlEventFrame(subscriptionID: 0, body: [UInt8](repeating: 7, count: WireLimits.maxBodyBytes))),
        .retainers(RetainersFrame(nodeID: 1, objectIndex: 0, verdict: .unknown)),
        .explain(ExplainFrame(requestID: 0, nodeIDs: [1])),
        .explain(ExplainFrame(requestID: .max, nodeIDs: (1...16).map { UInt64.max - $0 })),
        .explained(ExplainedFrame(requestID: 7, outcome: .explained, objectCount: 3)),
        .explained(ExplainedFrame(requestID: .max, outcome: .unavailable, objectCount: .max)),
        .retainers(
            RetainersFrame(
                nodeID: .max, objectIndex: .max, verdict: .holder, cutShort: true, elapsedMicros: .max,
                note: "cut short after 50 ms",
                hops: [
                    RetainerHop(holderKind: .attachedNodeObject, holderNodeID: 3, holder: "AppFlowImp", reference: ".component"),
                    RetainerHop(holderKind: .object, holder: "Session", reference: ".listeners[3]", isSuspect: true),
                    RetainerHop(holderKind: .closureContext, holder: "closure context", reference: "capture"),
                ])),
        .defineSite(DefineSiteFrame(siteID: 1, fileStringID: 2, line: 42)),
        .defineSite(DefineSiteFrame(siteID: .max, fileStringID: .max, line: .max)),
        .defineTest(DefineTestFrame(testID: 1, suiteStringID: 0, nameStringID: 3, siteID: 0)),
        .defineTest(DefineTestFrame(testID: .max, suiteStringID: .max, nameStringID: .max, siteID: .max)),
        .nodeOrigin(NodeOriginFrame(nodeID: 1, siteID: 1, testID: 0)),
        .nodeOrigin(NodeOriginFrame(nodeID: .max, siteID: 0, testID: .max)),
    ]

    @Test("every frame type is covered")
    func coversEveryType() {
        let covered = Set(Self.messages.map(\.frameType))
        #expect(covered == Set(FrameType.allCases))
    }

    @Test("each message decodes to itself", arguments: messages)
    func roundTrip(_ message: WireMessage) throws {
        let bytes = FrameEncoder.encoded(message)
        var decoder = FrameDecoder()
        decoder.feed(bytes)
        let decoded = try decoder.next()
        #expect(decoded == message)
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 0)
        #expect(bytes.count - 4 <= WireLimits.maxFrameLength)
    }

    @Test("all messages in one stream decode in order")
    func oneStream() {
        let stream = encodeAll(Self.messages)
        let result = decodeAll(stream)
        #expect(result.error == nil)
        #expect(result.messages == Self.messages)
    }

    @Test("after each message the decoder gives the bytes it came in, fed in pieces")
    func lastFrameBytes() throws {
        let stream = encodeAll(Self.messages)
        var decoder = FrameDecoder()
        var seen: [[UInt8]] = []
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + 7)
            decoder.feed(stream[offset..<end])
            offset = end
            while let message = try decoder.next() {
                let bytes = decoder.withLastFrameBytes { Array($0) }
                #expect(bytes == FrameEncoder.encoded(message))
                seen.append(bytes)
            }
            // After a feed and before a frame completes, there is no last frame.
            decoder.feed([UInt8]())
            #expect(decoder.withLastFrameBytes { $0.count } == 0)
        }
        #expect(seen.count == Self.messages.count)
    }

    @Test("the frames of one feed lie end to end, and stay readable after a later frame fails")
    func runsOfFrames() throws {
        let good = encodeAll(Self.messages)
        var decoder = FrameDecoder()
        decoder.feed(good + [1, 0, 0, 0, 0xFF])  // then a frame of an unknown type
        var run = 0..<0
        var count = 0
        do {
            while (try decoder.next()) != nil {
                let bounds = decoder.lastFrameBounds
                #expect(count == 0 || bounds.lowerBound == run.upperBound)
                run = (count == 0 ? bounds.lowerBound : run.lowerBound)..<bounds.upperBound
                count += 1
            }
            Issue.record("the frame of an unknown type was not refused")
        } catch {
            #expect(decoder.bufferedByteCount == 0)
        }
        #expect(count == Self.messages.count)
        #expect(decoder.withBytes(in: run) { Array($0) } == good)
        #expect(decoder.withBytes(in: 0..<(good.count + 100)) { $0.count } == 0)
    }

    @Test("the frame header holds the length and the type byte")
    func header() {
        let bytes = FrameEncoder.encoded(.heartbeat(monotonicNanos: 0x0102_0304_0506_0708))
        #expect(bytes == [9, 0, 0, 0, 0x1A, 8, 7, 6, 5, 4, 3, 2, 1])
    }

    @Test("a hello is laid out as the protocol says")
    func helloLayout() {
        let bytes = FrameEncoder.encoded(
            .hello(
                Hello(
                    role: .host, pid: 0x0A0B_0C0D, monotonicNanos: 1, wallNanos: 2, processName: "é"
                )))
        // A hello names the newest version this side speaks: 3.
        let expected: [UInt8] =
            Bytes.le32(32) + [0x01]
            + [0x4E, 0x53, 0x43, 0x50] + [3, 0] + [1] + [0x0D, 0x0C, 0x0B, 0x0A]
            + Bytes.le64(1) + Bytes.le64(2) + [2, 0, 0xC3, 0xA9]
        #expect(bytes == expected)
    }

    @Test("the hold-exit flag is bit 0 of the flags byte")
    func holdExitFlag() {
        let on = FrameEncoder.encoded(.helloAccepted(HelloAccepted(graceNanos: 0, holdExit: true, collectorMonotonicNanos: 0)))
        let off = FrameEncoder.encoded(.helloAccepted(HelloAccepted(graceNanos: 0, holdExit: false, collectorMonotonicNanos: 0)))
        #expect(on[5 + 2 + 8] == 1)
        #expect(off[5 + 2 + 8] == 0)
    }

    @Test("encoding appends to what the buffer already holds")
    func appends() {
        var buffer: [UInt8] = [0xEE]
        var encoder = FrameEncoder()
        encoder.encode(.dropped(count: 3), into: &buffer)
        encoder.encode(.goodbye(.normalExit), into: &buffer)
        #expect(buffer.first == 0xEE)
        #expect(buffer.count == 1 + 13 + 6)
        #expect(decodeAll(Array(buffer.dropFirst())).messages == [.dropped(count: 3), .goodbye(.normalExit)])
    }
}
