import Testing

@testable import NodescopeGraphviz

@Suite("Preparing a diagram: focus, depth, collapsing")
struct PrepareTests {
    let renderer = DiagramRenderer.shared

    /// A feed with 240 item flows; item 100 leaked, item 150 has a leaked child.
    static let feed: Diagram = {
        var nodes = [
            DiagramNode(id: 1, parent: nil, title: "AppFlow"),
            DiagramNode(id: 2, parent: 1, title: "FeedFlow"),
        ]
        for item in 0..<240 {
            let id = UInt64(1_000 + item)
            nodes.append(DiagramNode(id: id, parent: 2, title: "FeedItemFlow", state: item == 100 ? .leaked : .active))
            if item == 150 {
                nodes.append(DiagramNode(id: 5_000, parent: id, title: "StoryFlow", state: .leaked))
            }
        }
        nodes.append(DiagramNode(id: 3, parent: 2, title: "FooterFlow"))
        return Diagram(title: "feed", nodes: nodes)
    }()

    @Test("a long run keeps its first three, every leak, and one placeholder")
    func collapsesRuns() throws {
        let prepared = try renderer.prepare(Self.feed, options: .init())
        let feedChildren = prepared.nodes.filter { $0.parent == 2 }
        #expect(feedChildren.map(\.id) == [1_000, 1_001, 1_002, 1_100, 1_150, UInt64.max, 3])
        let placeholder = try #require(feedChildren.first { $0.state == .collapsed })
        #expect(placeholder.title == "… 235 more FeedItemFlow")
        #expect(prepared.nodes.contains { $0.id == 5_000 && $0.parent == 1_150 })
        #expect(prepared.nodes.count == 2 + 7 + 1)
    }

    @Test("a drawing counts the nodes it draws and the nodes its placeholders stand for")
    func drawingCounts() throws {
        // 244 nodes: AppFlow, FeedFlow, 240 items, StoryFlow, FooterFlow.
        let folded = try renderer.draw(Self.feed, format: .dot)
        #expect(folded.drawnNodes == 2 + 6 + 1)
        #expect(folded.hiddenNodes == 244 - folded.drawnNodes)
        let whole = try renderer.draw(Self.feed, format: .dot, options: .init(collapseSiblingRunsLongerThan: .max))
        #expect(whole.drawnNodes == 244 && whole.hiddenNodes == 0)
        let cut = try renderer.draw(Self.feed, format: .dot, options: .init(maxDepth: 1))
        #expect(cut.drawnNodes == 2 && cut.hiddenNodes == 242)
        let focused = try renderer.draw(Self.feed, format: .dot, options: .init(collapseSiblingRunsLongerThan: .max, rootID: 1_150))
        #expect(focused.drawnNodes == 2 && focused.hiddenNodes == 0)
    }

    @Test("runs up to the limit, and equal titles that are not neighbours, stay")
    func shortRuns() throws {
        var nodes = [DiagramNode(id: 1, parent: nil, title: "Root")]
        for index in 0..<12 { nodes.append(DiagramNode(id: UInt64(10 + index), parent: 1, title: "Same")) }
        for index in 0..<20 {
            nodes.append(DiagramNode(id: UInt64(100 + index), parent: 1, title: index % 2 == 0 ? "Even" : "Odd"))
        }
        let diagram = Diagram(title: "", nodes: nodes)
        #expect(try renderer.prepare(diagram, options: .init()) == diagram)
        let tighter = try renderer.prepare(diagram, options: .init(collapseSiblingRunsLongerThan: 5))
        #expect(tighter.nodes.filter { $0.title == "Same" }.count == 3)
        #expect(tighter.nodes.contains { $0.title == "… 9 more Same" && $0.parent == 1 })
    }

    @Test("roots are collapsed like siblings")
    func rootRuns() throws {
        let nodes = (1...30).map { DiagramNode(id: UInt64($0), parent: nil, title: "Window") }
        let prepared = try renderer.prepare(Diagram(title: "", nodes: nodes), options: .init())
        #expect(prepared.nodes.map(\.title) == ["Window", "Window", "Window", "… 27 more Window"])
        #expect(prepared.nodes.last?.parent == nil)
    }

    @Test("a depth cut leaves one placeholder per cut parent, counting what it hides")
    func depthCut() throws {
        let prepared = try renderer.prepare(Self.feed, options: .init(collapseSiblingRunsLongerThan: .max, maxDepth: 1))
        #expect(prepared.nodes.count == 3)
        #expect(prepared.nodes[0].id == 1 && prepared.nodes[1].id == 2)
        let placeholder = prepared.nodes[2]
        #expect(placeholder.parent == 2)
        #expect(placeholder.state == .collapsed)
        #expect(placeholder.title == "… 242 more")
        #expect(placeholder.note == "2 leaked")

        let rootsOnly = try renderer.prepare(Self.feed, options: .init(maxDepth: 0))
        #expect(rootsOnly.nodes.map(\.title) == ["AppFlow", "… 243 more"])
        #expect(try renderer.prepare(Self.feed, options: .init(maxDepth: -3)) == rootsOnly)
    }

    @Test("focusing on a node keeps its subtree, with it as the root")
    func rootFocus() throws {
        let prepared = try renderer.prepare(Self.feed, options: .init(collapseSiblingRunsLongerThan: .max, rootID: 1_150))
        #expect(prepared.nodes.map(\.id) == [1_150, 5_000])
        #expect(prepared.nodes[0].parent == nil)
        #expect(prepared.title == "feed")

        do {
            _ = try renderer.prepare(Self.feed, options: .init(rootID: 77))
            Issue.record("expected unknownRoot")
        } catch {
            #expect(error.code == .unknownRoot)
        }
    }

    @Test("output is pre-order with parents first, and placeholder ids are unused")
    func preOrderAndIDs() throws {
        var nodes = [DiagramNode(id: UInt64.max, parent: nil, title: "Root")]
        for index in 0..<20 { nodes.append(DiagramNode(id: UInt64.max - 1 - UInt64(index) * 2, parent: UInt64.max, title: "Item")) }
        let prepared = try renderer.prepare(Diagram(title: "", nodes: nodes), options: .init(collapseSiblingRunsLongerThan: 3))
        let ids = prepared.nodes.map(\.id)
        #expect(Set(ids).count == ids.count)
        var seen: Set<UInt64> = []
        for node in prepared.nodes {
            if let parent = node.parent { #expect(seen.contains(parent)) }
            seen.insert(node.id)
        }
        let placeholder = try #require(prepared.nodes.last)
        #expect(placeholder.state == .collapsed)
        #expect(!nodes.contains { $0.id == placeholder.id })
    }

    @Test("a diagram that lists children far from their parents comes out in pre-order")
    func reorders() throws {
        let diagram = Diagram(
            title: "",
            nodes: [
                DiagramNode(id: 1, parent: nil, title: "Root"),
                DiagramNode(id: 2, parent: 1, title: "A"),
                DiagramNode(id: 3, parent: 1, title: "B"),
                DiagramNode(id: 4, parent: 2, title: "A1"),
                DiagramNode(id: 5, parent: 3, title: "B1"),
            ])
        #expect(try renderer.prepare(diagram, options: .init()).nodes.map(\.id) == [1, 2, 4, 3, 5])
    }

    @Test("an empty diagram is an error")
    func empty() {
        #expect(throws: RenderError.self) { try renderer.prepare(Diagram(title: "", nodes: []), options: .init()) }
    }
}
