/// Draws ``Diagram``s as SVG (through Graphviz) or as DOT text.
///
/// There is one renderer, ``shared``, because there is one Graphviz context per process: Graphviz
/// is not thread-safe, so renders from any number of threads are run one at a time. Preparing a
/// diagram, the tidy layout and writing DOT happen outside that lock.
public final class DiagramRenderer: Sendable {
    /// The renderer for the process.
    public static let shared = DiagramRenderer()

    private init() {}

    /// A drawn diagram: its text, and how much of the tree it shows.
    public struct Drawing: Sendable, Equatable {
        /// SVG or DOT text.
        public var text: String
        /// Nodes of the chosen subtree that are drawn (placeholders not counted).
        public var drawnNodes: Int
        /// Nodes of the chosen subtree that placeholders stand for ("… 47 more FeedItemFlow",
        /// or what lies below ``DiagramOptions/maxDepth``).
        public var hiddenNodes: Int
        /// The layout and orientation used, and the drawing's estimated size (`nil` for data
        /// that is not drawn, such as JSON).
        public var choice: LayoutChoice?
        /// How the SVG fits ``DiagramOptions/page``: `nil` without a page, or for DOT.
        public var fit: PageFit?

        /// Creates a drawing.
        public init(text: String, drawnNodes: Int, hiddenNodes: Int, choice: LayoutChoice? = nil, fit: PageFit? = nil) {
            self.text = text
            self.drawnNodes = drawnNodes
            self.hiddenNodes = hiddenNodes
            self.choice = choice
            self.fit = fit
        }
    }

    /// How a drawing was fitted to a page.
    public struct PageFit: Sendable, Equatable {
        /// The page.
        public var page: DiagramPage
        /// The drawing's size in points at full size.
        public var fullWidth: Double
        /// The drawing's height in points at full size.
        public var fullHeight: Double
        /// How much the SVG was scaled down: 1 when it fits as it is; never below
        /// ``minimumScale``.
        public var scale: Double
        /// The smallest scale at which the smallest text is still 8 points.
        public var minimumScale: Double
        /// Whether the drawing fits the page at a readable size.
        public var fits: Bool

        /// Creates a fit.
        public init(page: DiagramPage, fullWidth: Double, fullHeight: Double, scale: Double, minimumScale: Double, fits: Bool) {
            self.page = page
            self.fullWidth = fullWidth
            self.fullHeight = fullHeight
            self.scale = scale
            self.minimumScale = minimumScale
            self.fits = fits
        }
    }

    /// The most boxes an SVG draws. Graphviz takes about 10 s and 500 MB for 100,000 boxes, and
    /// such a picture is no longer read whole; a larger one is refused (``RenderError/Code/tooLarge``)
    /// before any layout. DOT has no bound.
    public static let maxSVGNodes = 100_000

    /// The smallest text size at 100% zoom that a drawing may have, in points.
    public static let smallestReadableText = 8.0

    /// Draws `diagram`: ``draw(_:format:options:)`` without the counts.
    public func render(_ diagram: Diagram, format: DiagramFormat, options: DiagramOptions = .init()) throws(RenderError) -> String {
        try draw(diagram, format: format, options: options).text
    }

    /// Draws `diagram`, and says how many of its nodes the picture shows.
    ///
    /// The diagram is first cut down by ``prepare(_:options:)``. The layout is Graphviz's `dot`
    /// engine, or the linear-time ``TidyLayout`` (tidy or compact) with Graphviz only drawing, as
    /// ``LayoutChoice`` chooses for the page. With a page, an SVG bigger than the page is scaled
    /// down to it, but never so far that text is smaller than ``smallestReadableText``.
    ///
    /// - Returns: SVG text, or DOT text (which needs no Graphviz), with the counts.
    public func draw(_ diagram: Diagram, format: DiagramFormat, options: DiagramOptions = .init()) throws(RenderError) -> Drawing {
        let pruned = try DiagramPruner(options: options).prune(diagram)
        let prepared = pruned.diagram
        if format == .svg, prepared.nodes.count > Self.maxSVGNodes {
            throw RenderError(
                .tooLarge,
                "the SVG would draw \(prepared.nodes.count) boxes, too large to draw (more than \(Self.maxSVGNodes)); draw a part "
                    + "with --root PATH or --depth N, fold long runs of siblings with --max-siblings N, or write DOT, which has no bound")
        }
        let boxes = TidyLayout.Boxes(prepared)
        let choice = try LayoutChoice.choose(for: prepared, options: options, boxes: boxes)
        let positions =
            choice.layout == .dot ? nil : TidyLayout.layout(boxes, orientation: choice.orientation, outlineLimit: choice.outlineLimit)
        let richLabels = prepared.nodes.count <= DotWriter.richLabelLimit
        let dot = DotWriter.dot(for: prepared, positions: positions, richLabels: richLabels, orientation: choice.orientation)
        var drawing = Drawing(text: dot, drawnNodes: pruned.drawnNodes, hiddenNodes: pruned.hiddenNodes, choice: choice)
        guard format == .svg else { return drawing }
        drawing.text = try GraphvizContext.renderSVG(dot: dot, engine: positions == nil ? "dot" : "nop2")
        if let page = options.page, let size = SVGSize.size(of: drawing.text) {
            // Down to the page, but no smaller than readable.
            let minimumScale = Self.smallestReadableText / NodeLabel.smallestTextSize(richLabels: richLabels)
            let needed = min(1, page.width / size.width, page.height / size.height)
            let scale = max(needed, minimumScale)
            if scale < 1 { drawing.text = SVGSize.scaled(drawing.text, by: scale) }
            drawing.fit = PageFit(
                page: page, fullWidth: size.width, fullHeight: size.height, scale: scale, minimumScale: minimumScale,
                fits: needed >= minimumScale)
        }
        return drawing
    }

    /// What ``render(_:format:options:)`` draws: the subtree of ``DiagramOptions/rootID``, cut at
    /// ``DiagramOptions/maxDepth``, with long runs of same-title siblings folded into placeholders.
    /// Nodes come out in pre-order with children in their original order; placeholders get ids
    /// from the top of the id space that no node uses.
    ///
    /// - Throws: ``RenderError/Code/emptyDiagram`` when there is no node, and
    ///   ``RenderError/Code/unknownRoot`` when the root id is not in the diagram.
    public func prepare(_ diagram: Diagram, options: DiagramOptions) throws(RenderError) -> Diagram {
        try DiagramPruner(options: options).prune(diagram).diagram
    }
}
