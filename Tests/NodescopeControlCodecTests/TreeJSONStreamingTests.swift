import Foundation
import NodescopeCollector
import NodescopeControlCodec
import Testing

/// ``TreeJSON/write(_:chunkSize:to:)`` hands the document out in parts as it writes it: the
/// parts joined are exactly ``TreeJSON/encode(_:)``, and none is much larger than asked.
@Suite("Tree JSON written in parts")
struct TreeJSONStreamingTests {
    @Test(arguments: [1, 100, 4_096, 1 << 16])
    func thePartsJoinedAreTheDocument(chunkSize: Int) throws {
        let nodes = (0..<3_000).map { index in
            NodeInfo(
                id: UInt64(index + 1), parent: index == 0 ? nil : UInt64(index), kind: "Flow", name: "Node \"\(index)\"\n",
                status: .active, objects: [ObjectInfo(index: 0, role: "context", typeName: "Context", isAlive: true)],
                attachedAtNanos: UInt64(index), detachedAtNanos: nil, depth: index)
        }
        let view = TreeView(session: SessionID(rawValue: 3), pid: 42, processName: "deep", nodes: nodes)
        var parts: [[UInt8]] = []
        TreeJSON.write(view, chunkSize: chunkSize) { parts.append($0) }
        #expect(Array(parts.joined()) == TreeJSON.encode(view))
        // A part ends after the node that filled it: at most one node's JSON over the size.
        #expect((parts.map(\.count).max() ?? 0) < chunkSize + 1_024)
        #expect(parts.count > (chunkSize < 1 << 16 ? 2 : 0))
        #expect(try JSONDecoder().decode(TreeView.self, from: Data(parts.joined())) == view)
    }
}
