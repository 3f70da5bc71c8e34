/// The colours and line style of one ``DiagramNodeState``.
struct NodeStyle: Sendable {
    /// Graphviz `shape`.
    var shape: String
    /// Graphviz `style` of the box, without the corner rounding that ``style(rounded:)`` adds.
    var style: String
    /// Border colour; leaked nodes use the plain name "red" so that every renderer keeps it.
    var border: String
    /// Fill colour.
    var fill: String
    /// Border width in points.
    var penWidth: Double
    /// Colour of the node's note line and of its edge from the parent.
    var accent: String
    /// What the legend calls the state.
    var legendName: String

    /// The Graphviz `style` attribute, with rounded corners on boxes when `rounded` is true.
    func style(rounded: Bool) -> String {
        rounded && shape == "box" ? "rounded,\(style)" : style
    }

    /// The style of `state`.
    static func of(_ state: DiagramNodeState) -> NodeStyle {
        switch state {
        case .active:
            NodeStyle(
                shape: "box", style: "filled", border: "#2e7d32", fill: "#e8f5e9",
                penWidth: 1.4, accent: "#2e7d32", legendName: "active")
        case .inactive:
            NodeStyle(
                shape: "box", style: "filled", border: "#9e9e9e", fill: "#f5f5f5",
                penWidth: 1, accent: "#757575", legendName: "inactive")
        case .detached:
            NodeStyle(
                shape: "box", style: "filled,dashed", border: "#ef6c00", fill: "#fff3e0",
                penWidth: 1.6, accent: "#e65100", legendName: "detached, awaiting release")
        case .leaked:
            NodeStyle(
                shape: "box", style: "filled", border: "red", fill: "#f8d7da",
                penWidth: 2.5, accent: "red", legendName: "leaked")
        case .lateRelease:
            NodeStyle(
                shape: "box", style: "filled,dotted", border: "#7b1fa2", fill: "#f3e5f5",
                penWidth: 1.8, accent: "#7b1fa2", legendName: "released late")
        case .unverified:
            NodeStyle(
                shape: "box", style: "filled,dashed", border: "#616161", fill: "#eeeeee",
                penWidth: 1.2, accent: "#616161", legendName: "unverified (process ended)")
        case .collapsed:
            NodeStyle(
                shape: "note", style: "filled", border: "#9e9e9e", fill: "#ffffff",
                penWidth: 1, accent: "#757575", legendName: "hidden nodes")
        case .added:
            NodeStyle(
                shape: "box", style: "filled", border: "#2e7d32", fill: "#c8e6c9",
                penWidth: 2.2, accent: "#1b5e20", legendName: "+ added (only in the second)")
        case .removed:
            NodeStyle(
                shape: "box", style: "filled,dashed", border: "red", fill: "#ffebee",
                penWidth: 2.2, accent: "#c62828", legendName: "\u{2212} removed (only in the first)")
        case .changed:
            NodeStyle(
                shape: "box", style: "filled", border: "#ff8f00", fill: "#fff8e1",
                penWidth: 2.2, accent: "#e65100", legendName: "~ changed (kind, objects, state)")
        case .unchanged:
            NodeStyle(
                shape: "box", style: "filled", border: "#bdbdbd", fill: "#fafafa",
                penWidth: 1, accent: "#9e9e9e", legendName: "the same in both")
        }
    }
}
