import Foundation
import Testing

@testable import NodescopeGraphviz

/// The default export of wide trees is a picture a person can look at: neither a strip nor a
/// column (between 1:4 and 4:1), and no two boxes overlap. Checked on the drawn SVG.
@Suite("Drawings that fit a page")
struct PageShapeTests {
    static func check(_ diagram: Diagram, options: DiagramOptions = .init()) throws -> SVGBoxes {
        let drawing = try DiagramRenderer.shared.draw(diagram, format: .svg, options: options)
        let svg = try SVGBoxes(drawing.text)
        // To look at the pictures: NODESCOPE_PICTURES=/some/dir swift test --filter PageShapeTests
        if let directory = ProcessInfo.processInfo.environment["NODESCOPE_PICTURES"] {
            let name = diagram.title.map { $0.isLetter || $0.isNumber ? $0 : "-" }
            try drawing.text.write(toFile: "\(directory)/\(String(name)).svg", atomically: true, encoding: .utf8)
        }
        let choice = try #require(drawing.choice)
        print(
            "\(diagram.title): \(choice.layout) \(choice.orientation) outline ≤ \(choice.outlineLimit): "
                + "\(Int(svg.width)) × \(Int(svg.height)) pt, aspect \(svg.aspect)")
        #expect(svg.boxes.count == drawing.drawnNodes + (drawing.hiddenNodes > 0 ? 1 : 0) || drawing.hiddenNodes > 0)
        #expect(svg.overlaps().isEmpty, "\(svg.overlaps().prefix(5))")
        return svg
    }

    @Test("four children per node: the default export is between 1:4 and 4:1", arguments: [100, 400, 2_000, 10_000])
    func fourChildren(count: Int) throws {
        let diagram = SampleDiagrams.fourChildren(count: count)
        let svg = try Self.check(diagram)
        #expect(svg.boxes.count == count)
        #expect(svg.aspect >= 0.25 && svg.aspect <= 4, "aspect \(svg.aspect)")
    }
}
