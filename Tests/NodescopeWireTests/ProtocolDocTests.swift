import Foundation
import NodescopeWire
import Testing

@Suite("docs/PROTOCOL.md stays true to the encoder")
struct ProtocolDocTests {
    static let documentURL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/PROTOCOL.md")
    /// The markers around a generated dump; `name` tells the dumps of one document apart.
    static func markers(_ name: String) -> (begin: String, end: String) {
        ("<!-- BEGIN GENERATED HEX DUMP\(name) (ProtocolDocTests) -->\n```text\n", "\n```\n<!-- END GENERATED HEX DUMP\(name) -->")
    }

    /// The short session of version 1 shown in the document.
    static let session: [(AnnotatedDump.Direction, WireMessage)] = [
        (
            .hostToCollector,
            .hello(
                Hello(
                    protocolVersion: 1, role: .host, pid: 4242, monotonicNanos: 5_000_000_000,
                    wallNanos: 1_700_000_000_000_000_000, processName: "demo"))
        ),
        (
            .collectorToHost,
            .helloAccepted(
                HelloAccepted(protocolVersion: 1, graceNanos: 1_000_000_000, holdExit: true, collectorMonotonicNanos: 5_000_200_000))
        ),
        (.hostToCollector, .defineString(DefineStringFrame(stringID: 1, value: "AppFlow"))),
        (.hostToCollector, .defineString(DefineStringFrame(stringID: 2, value: "flow"))),
        (.hostToCollector, .snapshotBegin(SnapshotBeginFrame(sequence: 3, nodeCount: 1))),
        (
            .hostToCollector,
            .nodeAttached(
                NodeAttachedFrame(sequence: 3, timeNanos: 4_000_000_000, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0))
        ),
        (
            .hostToCollector,
            .objectAdded(
                ObjectAddedFrame(sequence: 3, timeNanos: 4_000_000_000, nodeID: 1, objectIndex: 0, roleStringID: 2, typeNameStringID: 1))
        ),
        (.hostToCollector, .stateChanged(StateChangedFrame(sequence: 3, timeNanos: 4_000_000_000, nodeID: 1, state: .active))),
        (.hostToCollector, .snapshotEnd(sequence: 3)),
        (.hostToCollector, .stateChanged(StateChangedFrame(sequence: 4, timeNanos: 6_000_000_000, nodeID: 1, state: .ended))),
        (.hostToCollector, .nodeDetached(NodeDetachedFrame(sequence: 5, timeNanos: 6_000_000_000, nodeID: 1))),
        (.hostToCollector, .objectReleased(ObjectReleasedFrame(sequence: 6, timeNanos: 6_000_050_000, nodeID: 1, objectIndex: 0))),
        (.hostToCollector, .goodbye(.normalExit)),
    ]

    /// The session of version 2 shown in the document: the collector asks a host what holds the
    /// context of a node it detached, and the host says.
    static let sessionV2: [(AnnotatedDump.Direction, WireMessage)] = [
        (
            .hostToCollector,
            .hello(
                Hello(
                    protocolVersion: 2, role: .host, pid: 4242, monotonicNanos: 5_000_000_000,
                    wallNanos: 1_700_000_000_000_000_000, processName: "demo"))
        ),
        (
            .collectorToHost,
            .helloAccepted(
                HelloAccepted(protocolVersion: 2, graceNanos: 1_000_000_000, holdExit: false, collectorMonotonicNanos: 5_000_200_000))
        ),
        (.hostToCollector, .defineString(DefineStringFrame(stringID: 1, value: "ProfileFlow"))),
        (.hostToCollector, .defineString(DefineStringFrame(stringID: 2, value: "Context"))),
        (.hostToCollector, .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 1))),
        (
            .hostToCollector,
            .nodeAttached(
                NodeAttachedFrame(sequence: 0, timeNanos: 4_000_000_000, nodeID: 7, parentID: 0, kindStringID: 1, nameStringID: 0))
        ),
        (
            .hostToCollector,
            .objectAdded(
                ObjectAddedFrame(sequence: 0, timeNanos: 4_000_000_000, nodeID: 7, objectIndex: 0, roleStringID: 0, typeNameStringID: 2))
        ),
        (.hostToCollector, .snapshotEnd(sequence: 0)),
        (.hostToCollector, .nodeDetached(NodeDetachedFrame(sequence: 1, timeNanos: 6_000_000_000, nodeID: 7))),
        (.collectorToHost, .explain(ExplainFrame(requestID: 1, nodeIDs: [7]))),
        (
            .hostToCollector,
            .retainers(
                RetainersFrame(
                    nodeID: 7, objectIndex: 0, verdict: .holder, elapsedMicros: 900,
                    hops: [
                        RetainerHop(holderKind: .global, holder: "main.session", reference: ""),
                        RetainerHop(holderKind: .object, holder: "Session", reference: ".listeners[0]", isSuspect: true),
                        RetainerHop(holderKind: .closureContext, holder: "closure context", reference: "capture"),
                    ]))
        ),
        (.hostToCollector, .explained(ExplainedFrame(requestID: 1, outcome: .explained, objectCount: 1))),
        (.hostToCollector, .heartbeat(monotonicNanos: 7_050_000_000)),
    ]

    @Test("the annotated hex dumps in the document are what the encoder produces")
    func hexDump() throws {
        try check(Self.session, markers: Self.markers(""))
        try check(Self.sessionV2, markers: Self.markers(", version 2"))
    }

    private func check(_ session: [(AnnotatedDump.Direction, WireMessage)], markers: (begin: String, end: String)) throws {
        let generated = try #require(AnnotatedDump.render(session), "a frame's bytes do not match its documented layout")
        var document = try String(contentsOf: Self.documentURL, encoding: .utf8)
        let begin = try #require(document.range(of: markers.begin), "PROTOCOL.md lacks the hex dump markers \(markers.begin)")
        let end = try #require(document.range(of: markers.end, range: begin.upperBound..<document.endIndex))
        if ProcessInfo.processInfo.environment["NODESCOPE_UPDATE_SNAPSHOTS"] == "1" {
            document.replaceSubrange(begin.upperBound..<end.lowerBound, with: generated)
            try document.write(to: Self.documentURL, atomically: true, encoding: .utf8)
            return
        }
        let documented = String(document[begin.upperBound..<end.lowerBound])
        #expect(documented == generated, "rerun with NODESCOPE_UPDATE_SNAPSHOTS=1 after a deliberate change")
    }

    @Test("every frame type has a layout in the dump renderer")
    func everyTypeRenders() {
        var generator = RandomMessages(seed: 9)
        for type in FrameType.allCases {
            let message = generator.message(of: type)
            #expect(AnnotatedDump.render([(.hostToCollector, message)]) != nil, "\(type)")
        }
    }
}
