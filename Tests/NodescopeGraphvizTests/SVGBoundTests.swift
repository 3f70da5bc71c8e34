import NodescopeGraphviz
import Testing

/// An SVG draws at most ``DiagramRenderer/maxSVGNodes`` boxes: a larger one is refused before
/// any layout, with what to do instead (DOT has no bound).
@Suite struct SVGBoundTests {
    @Test func anSVGOfTooManyBoxesIsRefusedBeforeAnyLayout() {
        let count = DiagramRenderer.maxSVGNodes + 1
        let nodes = (0..<count).map { index in
            DiagramNode(id: UInt64(index + 1), parent: index == 0 ? nil : 1, title: "Node\(index)")
        }
        var options = DiagramOptions()
        options.collapseSiblingRunsLongerThan = .max
        let diagram = Diagram(title: "wide", nodes: nodes)
        #expect {
            try DiagramRenderer.shared.draw(diagram, format: .svg, options: options)
        } throws: { error in
            guard let error = error as? RenderError else { return false }
            return error.code == .tooLarge && error.message.contains("\(count) boxes, too large to draw")
                && error.message.contains("--root PATH")
        }
    }
}
