import Foundation
import NodescopeCollector
import Testing

@testable import NodescopeCommands

/// `nodescope tree`'s text for trees of any depth: linear in the nodes, each line of bounded
/// length, and the bars of a shallow tree as they always were. (Standard output is not a
/// terminal here: no colours.)
@Suite struct TreeTextDepthTests {
    static func node(_ id: UInt64, parent: UInt64?, depth: Int, name: String = "") -> NodeInfo {
        NodeInfo(
            id: id, parent: parent, kind: "Flow", name: name, status: .attached, objects: [], attachedAtNanos: 0,
            detachedAtNanos: nil, depth: depth)
    }

    static func view(_ nodes: [NodeInfo]) -> TreeView {
        TreeView(session: SessionID(rawValue: 1), pid: 9, processName: "app", nodes: nodes)
    }

    /// The text without its header line (the process and its counts).
    static func body(_ view: TreeView) -> String {
        var lines: [String] = []
        TreeText.write(view) { lines.append($0) }
        return lines.dropFirst().joined()
    }

    @Test func aShallowTreeDrawsEveryBar() {
        let text = Self.body(
            Self.view([
                Self.node(1, parent: nil, depth: 0, name: "Root"),
                Self.node(2, parent: 1, depth: 1, name: "A"),
                Self.node(3, parent: 2, depth: 2, name: "A1"),
                Self.node(4, parent: 3, depth: 3, name: "A1x"),
                Self.node(5, parent: 2, depth: 2, name: "A2"),
                Self.node(6, parent: 1, depth: 1, name: "B"),
                Self.node(7, parent: 6, depth: 2, name: "B1"),
            ]))
        let expected = """
            Root Flow  ○ attached
            ├─ A Flow  ○ attached
            │  ├─ A1 Flow  ○ attached
            │  │  └─ A1x Flow  ○ attached
            │  └─ A2 Flow  ○ attached
            └─ B Flow  ○ attached
               └─ B1 Flow  ○ attached

            """
        #expect(text == expected, "\(text)")
    }

    @Test func aDeepChainGivesItsDepthInsteadOfEveryBar() {
        let count = 20_000
        let nodes = (0..<count).map { Self.node(UInt64($0 + 1), parent: $0 == 0 ? nil : UInt64($0), depth: $0, name: "N") }
        var lines: [String] = []
        TreeText.write(Self.view(nodes)) { lines.append($0) }
        #expect(lines.count == count + 1)
        let limit = TreeText.maxDrawnDepth
        #expect(lines[limit + 1] == String(repeating: "   ", count: limit - 1) + "└─ N Flow  ○ attached\n")
        let deepest = "[\(count - 1)] " + String(repeating: "   ", count: TreeText.deepLevelsDrawn) + "└─ N Flow  ○ attached\n"
        #expect(lines[count] == deepest)
        // No line is longer than the deepest one that draws every bar.
        #expect((lines.dropFirst().map(\.utf8.count).max() ?? 0) == lines[limit + 1].utf8.count)
    }

    @Test func depthsThatNoTreeCanHaveAreDrawnAsTheTreeAllows() {
        // A tree read from a file may claim any depth: a node is drawn at most one level below
        // the one before it, and a negative depth as a root.
        let text = Self.body(
            Self.view([
                Self.node(1, parent: nil, depth: 7, name: "R"),
                Self.node(2, parent: 1, depth: 1_000_000, name: "C"),
                Self.node(3, parent: nil, depth: -4, name: "S"),
            ]))
        #expect(text == "R Flow  ○ attached\n└─ C Flow  ○ attached\nS Flow  ○ attached\n", "\(text)")
    }
}
