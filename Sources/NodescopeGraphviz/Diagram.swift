/// A tree of nodes to draw, independent of where the tree came from.
public struct Diagram: Sendable, Equatable {
    /// The caption drawn above the tree, such as the process name, its pid and the time.
    public var title: String
    /// A second line under the title (the process's counts), or empty.
    public var subtitle: String = ""
    /// The nodes in pre-order: every parent comes before its children. A node whose parent is
    /// not listed before it is drawn as a root.
    public var nodes: [DiagramNode]
    /// Whether to draw a legend that shows each state's colours.
    public var showLegend: Bool

    /// Creates a diagram.
    public init(title: String, subtitle: String = "", nodes: [DiagramNode], showLegend: Bool = true) {
        self.title = title
        self.subtitle = subtitle
        self.nodes = nodes
        self.showLegend = showLegend
    }
}
