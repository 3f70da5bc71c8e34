import NodesDebug
import NodescopeWire
import Testing

@testable import NodesAgent
@testable import NodesTracking

@Suite("The agent's delta frames: byte for byte what FrameEncoder writes")
struct DeltaFrameWriterTests {
    @Test(arguments: [1, 2, 3]) func everyDeltaFrameMatchesTheGeneralEncoder(seed: UInt64) {
        var state = seed
        func word() -> UInt64 {
            // SplitMix64.
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var fast: [UInt8] = [7]
        var general: [UInt8] = [7]
        var encoder = FrameEncoder()
        for _ in 0..<200 {
            let (sequence, time, node, parent) = (word(), word(), word(), word())
            let (first, second) = (UInt32(truncatingIfNeeded: word()), UInt32(truncatingIfNeeded: word()))
            let index = UInt16(truncatingIfNeeded: word())
            let nodeState = WireNodeState(rawValue: UInt8(1 + word() % 4))!
            switch word() % 6 {
            case 0:
                DeltaFrameWriter.nodeAttached(
                    sequence: sequence, time: time, node: node, parent: parent, kind: first, name: second, into: &fast)
                encoder.encode(
                    .nodeAttached(
                        NodeAttachedFrame(
                            sequence: sequence, timeNanos: time, nodeID: node, parentID: parent, kindStringID: first,
                            nameStringID: second)), into: &general)
            case 1:
                DeltaFrameWriter.objectAdded(
                    sequence: sequence, time: time, node: node, index: index, role: first, typeName: second, into: &fast)
                encoder.encode(
                    .objectAdded(
                        ObjectAddedFrame(
                            sequence: sequence, timeNanos: time, nodeID: node, objectIndex: index, roleStringID: first,
                            typeNameStringID: second)), into: &general)
            case 2:
                DeltaFrameWriter.stateChanged(sequence: sequence, time: time, node: node, state: nodeState.rawValue, into: &fast)
                encoder.encode(
                    .stateChanged(StateChangedFrame(sequence: sequence, timeNanos: time, nodeID: node, state: nodeState)),
                    into: &general)
            case 3:
                DeltaFrameWriter.nodeDetached(sequence: sequence, time: time, node: node, into: &fast)
                encoder.encode(.nodeDetached(NodeDetachedFrame(sequence: sequence, timeNanos: time, nodeID: node)), into: &general)
            case 4:
                DeltaFrameWriter.nodeOrigin(node: node, site: first, test: second, into: &fast)
                encoder.encode(.nodeOrigin(NodeOriginFrame(nodeID: node, siteID: first, testID: second)), into: &general)
            default:
                DeltaFrameWriter.objectReleased(sequence: sequence, time: time, node: node, index: index, into: &fast)
                encoder.encode(
                    .objectReleased(ObjectReleasedFrame(sequence: sequence, timeNanos: time, nodeID: node, objectIndex: index)),
                    into: &general)
            }
        }
        #expect(fast == general)
    }
}
