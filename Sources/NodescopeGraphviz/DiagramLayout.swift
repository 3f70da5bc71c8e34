/// How a diagram's boxes are placed.
public enum DiagramLayout: String, Sendable, CaseIterable {
    /// `tidy` when the diagram has more nodes than ``DiagramOptions/autoTidyThreshold``, else `dot`.
    case auto
    /// Graphviz's `dot` engine: the nicest drawing, but quadratic on big trees.
    case dot
    /// A linear-time tidy-tree layout computed in Swift (``TidyLayout``), drawn by Graphviz with
    /// the positions pinned.
    case tidy
}
