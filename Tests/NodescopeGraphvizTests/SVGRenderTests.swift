import Foundation
import Testing

@testable import NodescopeGraphviz

@Suite("SVG through Graphviz")
struct SVGRenderTests {
    @Test("well-formed SVG with a red leaked node", arguments: [DiagramLayout.dot, .tidy])
    func leakedNodeIsRed(layout: DiagramLayout) throws {
        let svg = try DiagramRenderer.shared.render(SampleDiagrams.allStates, format: .svg, options: .init(layout: layout))
        let document = SVGDocument(svg)
        #expect(document.parseError == nil)
        let leaked = try #require(document.node(titled: "n5"))
        #expect(leaked.outline["stroke"] == "red")
        #expect(leaked.outline["fill"] == "#f8d7da")
        #expect(leaked.texts.contains("leaked 1.2 s after detach"))
        let active = try #require(document.node(titled: "n1"))
        #expect(active.outline["stroke"] == "#2e7d32")
        #expect(active.texts.first == "AppFlow")
        #expect(document.node(titled: "legend") != nil)
        #expect(document.nodes.count == SampleDiagrams.allStates.nodes.count + 1)
        #expect(document.texts.contains("sample \"app\" <pid 4242> & co \\ 12:00:00"))
    }

    @Test("without a legend there is no legend node")
    func noLegend() throws {
        var diagram = SampleDiagrams.allStates
        diagram.showLegend = false
        let document = SVGDocument(try DiagramRenderer.shared.render(diagram, format: .svg))
        #expect(document.parseError == nil)
        #expect(document.node(titled: "legend") == nil)
    }

    @Test(
        "hostile names stay text and the SVG stays well-formed",
        arguments: [DiagramLayout.dot, .tidy], [true, false])
    func hostileNames(layout: DiagramLayout, richLabels: Bool) throws {
        let nasty = [
            "<script>alert('x')</script>", "&#0; &#x1F; &foo; &amp; &", "\"quoted\" \\back\\slash \\N \\G \\l",
            "nul\u{0}and\u{1}bell\u{7}", "]]><!-- -->", "line\nbreak", "emoji 🚀 and 日本語", "\u{FFFE}\u{202E}rtl",
            "<TABLE><TR><TD>x</TD></TR></TABLE>",
        ]
        let diagram = Diagram(
            title: nasty.joined(separator: " "),
            nodes: nasty.enumerated().map { index, name in
                DiagramNode(
                    id: UInt64(index + 1), parent: index == 0 ? nil : 1, title: name, kind: name,
                    parts: [name], releasedParts: [name], state: .leaked, note: name)
            })
        let positions = layout == .tidy ? TidyLayout.layout(diagram) : nil
        let dot = DotWriter.dot(for: diagram, positions: positions, richLabels: richLabels)
        let svg = try GraphvizContext.renderSVG(dot: dot, engine: layout == .tidy ? "nop2" : "dot")
        let document = SVGDocument(svg)
        #expect(document.parseError == nil)
        #expect(document.nodes.count == nasty.count + 1)
        let leaked = try #require(document.node(titled: "n1"))
        #expect(leaked.outline["stroke"] == "red")
        // The title line of each node, as drawn.
        let titles = document.nodes.compactMap(\.texts.first)
        #expect(titles.contains("<script>alert('x')</script>"))
        // Rich labels keep Graphviz away from \N and friends with an invisible zero-width space.
        let slashes =
            richLabels
            ? "\"quoted\" \\\u{200B}back\\\u{200B}slash \\\u{200B}N \\\u{200B}G \\\u{200B}l"
            : "\"quoted\" \\back\\slash \\N \\G \\l"
        #expect(titles.contains(slashes))
        #expect(titles.contains("emoji 🚀 and 日本語"))
        #expect(titles.contains("\u{FF06}#0; \u{FF06}#x1F; \u{FF06}foo; \u{FF06}amp; &"))
        #expect(titles.contains("line break"))
        #expect(titles.contains("<TABLE><TR><TD>x</TD></TR></TABLE>"))
        // The graph's caption holds every name, on one line.
        #expect(document.texts.contains { $0.hasPrefix("<script>alert('x')</script> \u{FF06}#0;") && $0.hasSuffix("</TABLE>") })
    }

    @Test("plain labels mark released parts and keep the state colours")
    func plainLabels() throws {
        let dot = DotWriter.dot(for: SampleDiagrams.allStates, positions: nil, richLabels: false)
        #expect(!dot.contains("<TABLE BORDER=\"0\""))
        let document = SVGDocument(try GraphvizContext.renderSVG(dot: dot, engine: "dot"))
        #expect(document.parseError == nil)
        let leaked = try #require(document.node(titled: "n5"))
        #expect(leaked.outline["stroke"] == "red")
        #expect(
            leaked.texts == [
                "StoryFlow", "\u{AB}Flow\u{BB}", "context: StoryContextImp", "view: StoryViewController",
                "\u{2717} worker: StoryPlaybackWorker", "leaked 1.2 s after detach",
            ])
    }

    @Test("auto draws a small tree that fits with dot, and never uses dot above the threshold")
    func autoLayout() throws {
        let small = try DiagramRenderer.shared.draw(SampleDiagrams.allStates, format: .dot)
        #expect(!small.text.contains("layout=nop2"))
        #expect(small.choice?.layout == .dot && small.choice?.orientation == .topDown)
        let diagram = SampleDiagrams.randomTree(count: 40, seed: 9)
        let big = try DiagramRenderer.shared.draw(diagram, format: .dot, options: .init(autoTidyThreshold: 39))
        #expect(big.text.contains("layout=nop2"))
        #expect(big.choice?.layout != .dot)
        #expect(
            SVGDocument(try DiagramRenderer.shared.render(diagram, format: .svg, options: .init(autoTidyThreshold: 39))).parseError == nil)
    }

    @Test("errors say what to do")
    func errors() throws {
        #expect(throws: RenderError.self) { try DiagramRenderer.shared.render(Diagram(title: "x", nodes: []), format: .svg) }
        do {
            _ = try DiagramRenderer.shared.render(SampleDiagrams.allStates, format: .svg, options: .init(rootID: 404))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .unknownRoot)
            #expect(error.description.contains("404"))
        }
        do {
            _ = try DiagramRenderer.shared.render(Diagram(title: "x", nodes: []), format: .dot)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .emptyDiagram)
        }
    }
}
