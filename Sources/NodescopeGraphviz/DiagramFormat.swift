/// The text that ``DiagramRenderer/render(_:format:options:)`` produces.
public enum DiagramFormat: String, Sendable, CaseIterable {
    /// An SVG document drawn by Graphviz.
    case svg
    /// The Graphviz DOT source of the drawing (see ``DotWriter``); needs no Graphviz at all.
    case dot
}
