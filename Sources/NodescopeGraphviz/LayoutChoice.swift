/// The layout, orientation and outline size that draw a diagram best on a page.
///
/// Each candidate is laid out (the tidy layouts in linear time; `dot` is estimated by a tidy
/// layout without leaf columns, which `dot` draws about as wide) and scored by how large the
/// whole drawing, title and legend included, can be shown on the page: its scale to fit, at most
/// 1, times a penalty when its shape is more than 3 times wider or taller than the page's, times
/// a preference: `dot` top-down first, then tidy top-down, `dot` and tidy left-to-right, and
/// compact last. So a tree that fits as it is gets the nicest drawing, and a wide one the
/// compact layout with the outline size that fills the page best.
public struct LayoutChoice: Sendable, Equatable {
    /// `dot`, `tidy` or `compact`; never `auto`.
    public var layout: DiagramLayout
    /// `topDown` or `leftToRight`; never `auto`.
    public var orientation: DiagramOrientation
    /// For `compact`: subtrees of at most this many nodes are drawn as outlines.
    public var outlineLimit: Int
    /// The estimated size of the whole drawing in points, at full size.
    public var width: Double
    /// The estimated height of the whole drawing in points, at full size.
    public var height: Double

    /// The page that choices aim at without `--fit`: 4:3, and a drawing that fits it is drawn as
    /// it is.
    public static let defaultPage = DiagramPage(width: 1600, height: 1200, name: "default")

    /// A drawing more than this many times wider or taller than the page (relative to the
    /// page's own shape) scores lower in proportion.
    static let aspectTolerance = 3.0
    /// Outline sizes tried by `compact` grow by at least this factor from one to the next.
    static let outlineStep = 1.5

    /// Chooses for `diagram` (already pruned) under `options`.
    ///
    /// - Throws: ``RenderError/Code/invalidOptions`` for `compact` with left-to-right.
    public static func choose(for diagram: Diagram, options: DiagramOptions) throws(RenderError) -> LayoutChoice {
        try choose(for: diagram, options: options, boxes: TidyLayout.Boxes(diagram))
    }

    /// ``choose(for:options:)`` with the boxes already measured.
    static func choose(for diagram: Diagram, options: DiagramOptions, boxes: TidyLayout.Boxes) throws(RenderError) -> LayoutChoice {
        let page = options.page ?? defaultPage
        let allowsTopDown = options.orientation != .leftToRight
        let allowsLeftToRight = options.orientation != .topDown
        let richLabels = diagram.nodes.count <= DotWriter.richLabelLimit
        var best: (choice: LayoutChoice, score: Double)?

        func consider(
            _ layout: DiagramLayout, _ orientation: DiagramOrientation, outlineLimit: Int = 0, stackLeaves: Bool = true,
            preference: Double
        ) -> Double {
            let extent = TidyLayout.extent(boxes, orientation: orientation, outlineLimit: outlineLimit, stackLeaves: stackLeaves)
            let size = totalSize(of: diagram, width: extent.width, height: extent.height, richLabels: richLabels)
            let score = Self.score(width: size.width, height: size.height, on: page) * preference
            if best == nil || score > best!.score {
                best = (
                    LayoutChoice(
                        layout: layout, orientation: orientation, outlineLimit: outlineLimit, width: size.width,
                        height: size.height),
                    score
                )
            }
            return score
        }

        switch options.layout {
        case .dot:
            if allowsTopDown { _ = consider(.dot, .topDown, stackLeaves: false, preference: 1) }
            if allowsLeftToRight { _ = consider(.dot, .leftToRight, stackLeaves: false, preference: 0.96) }
        case .tidy:
            if allowsTopDown { _ = consider(.tidy, .topDown, preference: 1) }
            if allowsLeftToRight { _ = consider(.tidy, .leftToRight, preference: 0.96) }
        case .compact:
            guard allowsTopDown else {
                throw RenderError(
                    .invalidOptions,
                    "the compact layout grows top-down only; use --layout tidy (or dot) with --orientation left-right")
            }
            considerOutlines(in: boxes, page: page) { consider(.compact, .topDown, outlineLimit: $0, preference: 1) }
        case .auto:
            if diagram.nodes.count <= options.autoTidyThreshold {
                if allowsTopDown { _ = consider(.dot, .topDown, stackLeaves: false, preference: 1) }
                if allowsLeftToRight { _ = consider(.dot, .leftToRight, stackLeaves: false, preference: 0.96) }
            }
            if allowsTopDown { _ = consider(.tidy, .topDown, preference: 0.98) }
            if allowsLeftToRight { _ = consider(.tidy, .leftToRight, preference: 0.94) }
            if allowsTopDown && (best?.score ?? 0) < 0.98 {
                considerOutlines(in: boxes, page: page) { consider(.compact, .topDown, outlineLimit: $0, preference: 0.9) }
            }
        }
        // Every case above considers at least one candidate.
        return best?.choice ?? LayoutChoice(layout: .tidy, orientation: .topDown, outlineLimit: 0, width: 0, height: 0)
    }

    /// Tries column sizes around a first guess, each ``outlineStep`` times the last, smaller
    /// (wider and lower drawings) and larger (narrower and taller) until the drawings fall well
    /// behind the best so far in that direction.
    ///
    /// The guess makes the columns, if they were all full, about as tall as the page's shape
    /// asks: `lines × line height / columns of lines × column width` = the page's height / width.
    private static func considerOutlines(in boxes: TidyLayout.Boxes, page: DiagramPage, _ consider: (Int) -> Double) {
        let count = max(1, boxes.sizes.count)
        let lineHeight = boxes.sizes.reduce(0) { $0 + $1.height } / Double(count) + TidyLayout.stackGap
        let columnWidth = boxes.sizes.reduce(0) { $0 + $1.width } / Double(count) + 3 * TidyLayout.stackIndent + TidyLayout.siblingGap
        let guess = (Double(count) * columnWidth * page.height / (page.width * lineHeight)).squareRoot()
        let first = min(max(4, guess), Double(count))
        var best = (limit: first, score: consider(Int(first.rounded(.up))))
        for step in [1 / outlineStep, outlineStep] {
            var limit = first * step
            while limit >= 4 && limit < Double(count) * outlineStep {
                let score = consider(Int(min(limit, Double(count)).rounded(.up)))
                if score > best.score { best = (limit, score) }
                if score < best.score / 2 || limit >= Double(count) { break }
                limit *= step
            }
        }
        // Then halfway (geometrically) to the best one's neighbours.
        let halfStep = outlineStep.squareRoot()
        for limit in [best.limit / halfStep, best.limit * halfStep] where limit >= 4 && limit <= Double(count) {
            _ = consider(Int(limit.rounded(.up)))
        }
    }

    /// How well a drawing of `width` × `height` points fits `page`: its scale to fit, at most 1,
    /// lowered in proportion when its shape is beyond ``aspectTolerance`` of the page's.
    static func score(width: Double, height: Double, on page: DiagramPage) -> Double {
        guard width > 0, height > 0 else { return 1 }
        let scale = min(1, page.width / width, page.height / height)
        let shape = (width / height) / (page.width / page.height)
        let mismatch = max(shape, 1 / shape)
        return scale * min(1, aspectTolerance / mismatch)
    }

    /// The size of the drawing Graphviz makes of a layout of `width` × `height`: the layout, the
    /// legend to its right, the title above, and the padding around.
    static func totalSize(of diagram: Diagram, width: Double, height: Double, richLabels: Bool) -> (width: Double, height: Double) {
        var total = (width: width, height: height)
        if diagram.showLegend {
            let legend = Legend.estimatedSize(Legend.states(of: diagram))
            total.width += DotWriter.legendGap + legend.width
            total.height = max(total.height, legend.height)
        }
        if !diagram.title.isEmpty {
            let lines = diagram.subtitle.isEmpty ? [diagram.title] : [diagram.title, diagram.subtitle]
            for line in lines {
                total.width = max(total.width, LabelText.estimatedWidth(of: line, bold: false) * DotWriter.titleSize)
            }
            total.height += (DotWriter.titleSize * 1.2) * Double(lines.count) + 8
        }
        return (total.width + 2 * DotWriter.padding, total.height + 2 * DotWriter.padding)
    }
}
