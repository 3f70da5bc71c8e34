import Testing

@testable import NodescopeGraphviz

@Suite("DOT text")
struct DotWriterTests {
    @Test("a small tree with every state matches its snapshot")
    func allStatesSnapshot() throws {
        try SnapshotFile.check(DotWriter.dot(for: SampleDiagrams.allStates), named: "all-states.dot")
    }

    @Test("the same tree with pinned tidy positions matches its snapshot")
    func pinnedSnapshot() throws {
        let positions = TidyLayout.layout(SampleDiagrams.allStates)
        try SnapshotFile.check(DotWriter.dot(for: SampleDiagrams.allStates, positions: positions), named: "all-states-tidy.dot")
    }

    @Test("the same input gives the same text, through the renderer too")
    func deterministic() throws {
        let diagram = SampleDiagrams.randomTree(count: 300, seed: 3, statesEvery: 7)
        let first = try DiagramRenderer.shared.render(diagram, format: .dot, options: .init(layout: .tidy))
        let second = try DiagramRenderer.shared.render(diagram, format: .dot, options: .init(layout: .tidy))
        #expect(first == second)
        let prepared = try DiagramRenderer.shared.prepare(diagram, options: .init())
        #expect(
            try DiagramRenderer.shared.render(diagram, format: .dot, options: .init(layout: .dot, orientation: .topDown))
                == DotWriter.dot(for: prepared))
        // This wide tree fits better left to right: dot is told so.
        let sideways = try DiagramRenderer.shared.draw(diagram, format: .dot, options: .init(layout: .dot))
        #expect(sideways.choice?.orientation == .leftToRight)
        #expect(sideways.text == DotWriter.dot(for: prepared, orientation: .leftToRight))
        #expect(sideways.text.contains("rankdir=LR"))
    }

    @Test("hostile names cannot add statements to the graph")
    func hostileNames() {
        let diagram = Diagram(
            title: "t\"]; evil [label=\"x",
            nodes: [
                DiagramNode(
                    id: 1, parent: nil, title: "A\"]; n666 [label=\"pwned\"]; //", kind: "<B>k</B>",
                    parts: ["> } digraph {", "back\\slash \\N \\G", "new\nline\rreturn"]),
                DiagramNode(id: 2, parent: 1, title: "</TD></TR></TABLE>>]; n777 [shape=box", state: .leaked),
            ], showLegend: false)
        let dot = DotWriter.dot(for: diagram)
        let lines = dot.split(separator: "\n")
        // One line per statement: the graph, node and edge defaults, two nodes and one edge.
        #expect(lines.count == 8)
        #expect(lines.filter { $0.hasPrefix("  n1 [") || $0.hasPrefix("  n2 [") }.count == 2)
        #expect(!lines.contains { $0.hasPrefix("  n666") || $0.hasPrefix("  n777") || $0.hasPrefix("  evil") })
        #expect(!dot.contains("<B>k</B>"))
        #expect(dot.contains("&lt;/TD&gt;&lt;/TR&gt;&lt;/TABLE&gt;&gt;]; n777 [shape=box"))
        #expect(dot.contains("new line return"))
    }

    @Test("labels escape markup, control characters and entity look-alikes")
    func labelEscaping() {
        #expect(LabelText.html("FeedFlow") == "FeedFlow")
        #expect(LabelText.html("a<b>&\"'c") == "a&lt;b&gt;&amp;&quot;&#39;c")
        #expect(LabelText.html("tab\there\u{0}\u{1}\u{7F}\u{85}") == "tab here\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}")
        #expect(LabelText.html("&#0; &amp; &lt") == "\u{FF06}#0; \u{FF06}amp; &amp;lt")
        #expect(LabelText.html("worker ×2 🚀 日本") == "worker ×2 🚀 日本")
        #expect(LabelText.html("a\\N\\\\1") == "a\\\u{200B}N\\\\1")
        #expect(LabelText.quoted("say \"hi\" \\N <b> &amp;") == "say \\\"hi\\\" \\\\N <b> \u{FF06}amp;")
    }

    @Test(
        "numbers are written the same way everywhere",
        arguments: [
            (12.0, 1, "12"), (12.25, 1, "12.3"), (-0.04, 1, "0"), (-3.5, 1, "-3.5"), (0.1389, 3, "0.139"),
            (1_234_567.0, 1, "1234567"), (Double.nan, 1, "0"), (0.5, 0, "1"),
        ])
    func numbers(value: Double, decimals: Int, expected: String) {
        #expect(DotNumber.format(value, decimals: decimals) == expected)
    }

    @Test("edges go only to nodes that are drawn")
    func orphansBecomeRoots() {
        let diagram = Diagram(
            title: "",
            nodes: [
                DiagramNode(id: 5, parent: 99, title: "Orphan"),
                DiagramNode(id: 6, parent: 7, title: "ParentComesLater"),
                DiagramNode(id: 7, parent: 5, title: "Child"),
                DiagramNode(id: 7, parent: nil, title: "Duplicate"),
            ], showLegend: false)
        let dot = DotWriter.dot(for: diagram)
        #expect(dot.contains("n5 -> n7;"))
        #expect(!dot.contains("n99"))
        #expect(!dot.contains("n7 -> n6"))
        #expect(!dot.contains("Duplicate"))
    }
}
