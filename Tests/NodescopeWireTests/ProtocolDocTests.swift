import Foundation
import NodescopeWire
import Testing

@Suite("docs/PROTOCOL.md stays true to the encoder")
struct ProtocolDocTests {
    static let documentURL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/PROTOCOL.md")
    static let beginMarker = "<!-- BEGIN GENERATED HEX DUMP (ProtocolDocTests) -->\n```text\n"
    static let endMarker = "\n```\n<!-- END GENERATED HEX DUMP -->"

    /// The short session shown in the document.
    static let session: [(AnnotatedDump.Direction, WireMessage)] = [
        (
            .hostToCollector,
            .hello(Hello(role: .host, pid: 4242, monotonicNanos: 5_000_000_000, wallNanos: 1_700_000_000_000_000_000, processName: "demo"))
        ),
        (
            .collectorToHost,
            .helloAccepted(HelloAccepted(graceNanos: 1_000_000_000, holdExit: true, collectorMonotonicNanos: 5_000_200_000))
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

    @Test("the annotated hex dump in the document is what the encoder produces")
    func hexDump() throws {
        let generated = try #require(AnnotatedDump.render(Self.session), "a frame's bytes do not match its documented layout")
        var document = try String(contentsOf: Self.documentURL, encoding: .utf8)
        let begin = try #require(document.range(of: Self.beginMarker), "PROTOCOL.md lacks the hex dump markers")
        let end = try #require(document.range(of: Self.endMarker, range: begin.upperBound..<document.endIndex))
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
