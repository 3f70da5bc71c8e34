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

        /// Creates a drawing.
        public init(text: String, drawnNodes: Int, hiddenNodes: Int) {
            self.text = text
            self.drawnNodes = drawnNodes
            self.hiddenNodes = hiddenNodes
        }
    }

    /// Draws `diagram`: ``draw(_:format:options:)`` without the counts.
    public func render(_ diagram: Diagram, format: DiagramFormat, options: DiagramOptions = .init()) throws(RenderError) -> String {
        try draw(diagram, format: format, options: options).text
    }

    /// Draws `diagram`, and says how many of its nodes the picture shows.
    ///
    /// The diagram is first cut down by ``prepare(_:options:)``. The layout is Graphviz's `dot`
    /// engine, or for big diagrams (see ``DiagramOptions/autoTidyThreshold``) the linear-time
    /// ``TidyLayout`` with Graphviz only drawing.
    ///
    /// - Returns: SVG text, or DOT text (which needs no Graphviz), with the counts.
    public func draw(_ diagram: Diagram, format: DiagramFormat, options: DiagramOptions = .init()) throws(RenderError) -> Drawing {
        let pruned = try DiagramPruner(options: options).prune(diagram)
        let prepared = pruned.diagram
        let useTidy =
            switch options.layout {
            case .dot: false
            case .tidy: true
            case .auto: prepared.nodes.count > options.autoTidyThreshold
            }
        let positions = useTidy ? TidyLayout.layout(prepared) : nil
        let dot = DotWriter.dot(for: prepared, positions: positions)
        let text =
            switch format {
            case .dot: dot
            case .svg: try GraphvizContext.renderSVG(dot: dot, engine: useTidy ? "nop2" : "dot")
            }
        return Drawing(text: text, drawnNodes: pruned.drawnNodes, hiddenNodes: pruned.hiddenNodes)
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
