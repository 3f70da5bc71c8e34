/// Draws ``Diagram``s as SVG (through Graphviz) or as DOT text.
///
/// There is one renderer, ``shared``, because there is one Graphviz context per process: Graphviz
/// is not thread-safe, so renders from any number of threads are run one at a time. Preparing a
/// diagram, the tidy layout and writing DOT happen outside that lock.
public final class DiagramRenderer: Sendable {
    /// The renderer for the process.
    public static let shared = DiagramRenderer()

    private init() {}

    /// Draws `diagram`.
    ///
    /// The diagram is first cut down by ``prepare(_:options:)``. The layout is Graphviz's `dot`
    /// engine, or for big diagrams (see ``DiagramOptions/autoTidyThreshold``) the linear-time
    /// ``TidyLayout`` with Graphviz only drawing.
    ///
    /// - Returns: SVG text, or DOT text (which needs no Graphviz).
    public func render(_ diagram: Diagram, format: DiagramFormat, options: DiagramOptions = .init()) throws(RenderError) -> String {
        let prepared = try prepare(diagram, options: options)
        let useTidy = switch options.layout {
        case .dot: false
        case .tidy: true
        case .auto: prepared.nodes.count > options.autoTidyThreshold
        }
        let positions = useTidy ? TidyLayout.layout(prepared) : nil
        let dot = DotWriter.dot(for: prepared, positions: positions)
        switch format {
        case .dot:
            return dot
        case .svg:
            return try GraphvizContext.renderSVG(dot: dot, engine: useTidy ? "nop2" : "dot")
        }
    }

    /// What ``render(_:format:options:)`` draws: the subtree of ``DiagramOptions/rootID``, cut at
    /// ``DiagramOptions/maxDepth``, with long runs of same-title siblings folded into placeholders.
    /// Nodes come out in pre-order with children in their original order; placeholders get ids
    /// from the top of the id space that no node uses.
    ///
    /// - Throws: ``RenderError/Code/emptyDiagram`` when there is no node, and
    ///   ``RenderError/Code/unknownRoot`` when the root id is not in the diagram.
    public func prepare(_ diagram: Diagram, options: DiagramOptions) throws(RenderError) -> Diagram {
        try DiagramPruner(options: options).prune(diagram)
    }
}
