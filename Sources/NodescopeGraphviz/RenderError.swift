/// Why a diagram could not be drawn, with a message that says what to do about it.
public struct RenderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// The Graphviz library or one of its plugins (the layout engine, the SVG renderer)
        /// could not be loaded.
        case graphvizUnavailable
        /// Graphviz could not read or lay out the generated graph.
        case layoutFailed
        /// Graphviz laid the graph out but could not produce the output format.
        case renderFailed
        /// There is nothing to draw.
        case emptyDiagram
        /// ``DiagramOptions/rootID`` names no node of the diagram.
        case unknownRoot
        /// The options contradict each other, such as the compact layout grown left to right.
        case invalidOptions
        /// The SVG would draw more boxes than ``DiagramRenderer/maxSVGNodes``.
        case tooLarge
    }

    /// What went wrong.
    public var code: Code
    /// What happened and what to do, in one or two sentences.
    public var message: String
    /// What Graphviz itself reported, if anything.
    public var underlying: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: String? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The message, with Graphviz's own report when there is one.
    public var description: String {
        if let underlying, !underlying.isEmpty {
            return "render: \(message) (graphviz: \(underlying))"
        }
        return "render: \(message)"
    }
}
