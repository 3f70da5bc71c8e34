/// How a diagram's boxes are placed.
public enum DiagramLayout: String, Sendable, CaseIterable {
    /// The layout and orientation that fit the page best (see ``LayoutChoice``): Graphviz's `dot`
    /// for small trees that fit as they are, else `tidy` or `compact`.
    case auto
    /// Graphviz's `dot` engine: the nicest drawing, but quadratic on big trees.
    case dot
    /// A linear-time tidy-tree layout computed in Swift (``TidyLayout``), drawn by Graphviz with
    /// the positions pinned: top-down or left-to-right.
    case tidy
    /// The tidy layout for the top of the tree, with every subtree below a size drawn as an
    /// indented outline under its root: wide trees become a row of columns instead of a strip.
    /// The size is chosen to fit the page. Top-down only.
    case compact
}
