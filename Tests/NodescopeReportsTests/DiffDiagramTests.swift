import NodescopeCollector
import NodescopeGraphviz
import NodescopeReports
import Testing

@Suite("DiffDiagram: the difference of two trees as a diagram")
struct DiffDiagramTests {
    static func node(_ id: UInt64, _ parent: UInt64?, _ name: String, _ status: NodeStatus = .active, objects: [String] = ["flow"])
        -> NodeInfo
    {
        TreeDiffTests.node(id, parent, name, status, objects: objects)
    }

    @Test func theUnionMarksAddedRemovedAndChangedNodesUnderTheirParents() {
        let first = TreeDiffTests.view([
            Self.node(1, nil, "App"), Self.node(2, 1, "Login"), Self.node(3, 1, "Feed"), Self.node(5, 3, "Same"),
        ])
        let second = TreeDiffTests.view([
            Self.node(1, nil, "App"), Self.node(3, 1, "Feed", .leaked, objects: ["flow", "worker"]), Self.node(5, 3, "Same"),
            Self.node(4, 3, "Plugin"),
        ])
        let diagram = DiffDiagram.diagram(first, second, title: "a \u{2192} b")
        #expect(diagram.nodes.map(\.title) == ["App", "\u{2212} Login", "~ Feed", "Same", "+ Plugin"])
        #expect(diagram.nodes.map(\.state) == [.unchanged, .removed, .changed, .unchanged, .added])
        #expect(diagram.nodes.map(\.parent) == [nil, 1, 1, 3, 3])
        #expect(diagram.nodes[2].note == "+ worker: T\nstate: active \u{2192} leaked")
        #expect(diagram.nodes[4].parts == ["flow: T"])
        #expect(diagram.nodes[4].tooltip == "App/Feed/Plugin")
    }

    @Test func ignoredNodesAreLeftOutAndEmptyTreesStillDraw() throws {
        let first = TreeDiffTests.view([Self.node(1, nil, "App"), Self.node(2, 1, "Item")])
        let second = TreeDiffTests.view([Self.node(1, nil, "App")])
        let diagram = DiffDiagram.diagram(first, second, ignoring: ["App/Item*"], title: "t")
        #expect(diagram.nodes.map(\.state) == [.unchanged])
        let empty = TreeDiffTests.view([])
        let drawing = try DiffDiagram.draw(empty, empty, title: "t")
        #expect(drawing.text.contains("both trees are empty"))
    }

    @Test func theSVGHasTheDifferenceLegendAndEscapesNames() throws {
        let first = TreeDiffTests.view([Self.node(1, nil, "App")])
        let second = TreeDiffTests.view([Self.node(1, nil, "App"), Self.node(2, 1, "<b>\"x\"&</b>")])
        let dot = try DiffDiagram.draw(first, second, title: "t", format: .dot).text
        #expect(dot.contains("only in the second"))
        #expect(!dot.contains("detached, awaiting release"))
        let svg = try DiffDiagram.draw(first, second, title: "t").text
        #expect(svg.contains("&lt;b&gt;"))
        #expect(!svg.contains("<b>\"x\""))
    }
}
