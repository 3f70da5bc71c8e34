/// Turns a ``Diagram`` into Graphviz DOT text: one box per node, edges from parents to children,
/// colours by state, and an optional legend.
///
/// The text depends only on the diagram (node order included), so it can be compared with a
/// stored snapshot. Every user string is escaped; nothing in a title or part name can change the
/// structure of the graph.
public enum DotWriter {
    /// Diagrams with up to this many nodes get rich labels (bold titles, struck-through released
    /// parts); bigger ones get plain text labels.
    ///
    /// Graphviz 2.42 leaks about 70 bytes for every line of an HTML-like label it draws, and
    /// parses them about twice as slowly as plain labels. Past this size the drawing is an
    /// overview, so the plain form keeps a long-lived process from growing by tens of megabytes
    /// per render.
    public static let richLabelLimit = 2_000

    /// The DOT text of `diagram`.
    ///
    /// - Parameters:
    ///   - diagram: The nodes to draw, usually the output of ``DiagramRenderer/prepare(_:options:)``.
    ///   - positions: Box centres from ``TidyLayout``. When given, every box is pinned there and
    ///     the graph asks for Graphviz's `nop2` engine (as `neato -n2` does), so Graphviz only
    ///     draws. When `nil`, Graphviz's `dot` engine places the boxes.
    ///   - orientation: For Graphviz's `dot` engine (no positions): left-to-right asks for
    ///     `rankdir=LR`; otherwise the tree grows top-down.
    public static func dot(
        for diagram: Diagram, positions: TidyLayout.Result? = nil, orientation: DiagramOrientation = .topDown
    ) -> String {
        dot(for: diagram, positions: positions, richLabels: diagram.nodes.count <= richLabelLimit, orientation: orientation)
    }

    static func dot(
        for diagram: Diagram, positions: TidyLayout.Result?, richLabels: Bool, orientation: DiagramOrientation = .topDown
    ) -> String {
        let tree = DiagramTree(diagram.nodes)
        var out = "digraph nodescope {\n"
        out.reserveCapacity(1_000 + diagram.nodes.count * 400)
        out += "  graph [fontname=\"\(NodeLabel.fontName)\", fontsize=\(Int(titleSize)), labelloc=t, labeljust=l"
        if !diagram.title.isEmpty {
            // A plain label: Graphviz leaks the text of HTML-like labels.
            // A subtitle goes on a line of its own (`\l` ends a left-justified line).
            let label =
                diagram.subtitle.isEmpty
                ? LabelText.quoted(diagram.title)
                : LabelText.quoted(diagram.title) + "\\l" + LabelText.quoted(diagram.subtitle) + "\\l"
            out += ", label=\"\(label)\""
        }
        out += ", bgcolor=\"white\", pad=\"0.3\", nodesep=0.25, ranksep=0.5, ordering=out"
        out += ", outputorder=edgesfirst"
        if positions != nil {
            out += ", layout=nop2, notranslate=true, splines=line, overlap=true"
        } else if orientation == .leftToRight {
            out += ", rankdir=LR"
        }
        out += "];\n"
        // Square corners on pinned (big) drawings: a rounded box is a 25-point path in the SVG.
        let rounded = positions == nil
        let common = NodeStyle.of(.active)
        out += "  node [fontname=\"\(NodeLabel.fontName)\", fontsize=\(DotNumber.format(NodeLabel.partSize, decimals: 1))"
        out += ", margin=\"\(inches(NodeLabel.margin.x)),\(inches(NodeLabel.margin.y))\""
        out += ", \(styleAttributes(common, rounded: rounded))];\n"
        // Parents are always above their children, so edges need no arrowheads.
        out += "  edge [color=\"#78909c\", arrowhead=none, penwidth=1.2];\n"

        for index in diagram.nodes.indices where tree.isIncluded[index] {
            let node = diagram.nodes[index]
            out += "  n\(node.id) ["
            var separator = ""
            if node.state != .active {
                out += styleAttributes(NodeStyle.of(node.state), rounded: rounded)
                separator = ", "
            }
            if let positions {
                let center = positions.positions[node.id] ?? TidyLayout.Point(x: 0, y: 0)
                out += "\(separator)pos=\"\(point(center.x)),\(point(positions.height - center.y))!\", "
            } else {
                out += separator
            }
            // The estimate is a minimum size: it leaves room for fonts wider than Graphviz's
            // built-in metrics, and it is the size the tidy layout spaced the boxes by.
            let size = NodeLabel.estimatedSize(of: node)
            let label = richLabels ? NodeLabel.html(for: node) : NodeLabel.plain(for: node)
            out += "width=\(inches(size.width)), height=\(inches(size.height)), label=\(label)"
            if let tooltip = node.tooltip, !tooltip.isEmpty {
                let lines = tooltip.split(separator: "\n", omittingEmptySubsequences: false).map { LabelText.quoted(String($0)) }
                out += ", tooltip=\"\(lines.joined(separator: "\\n"))\""
            }
            out += "];\n"
        }

        for index in diagram.nodes.indices where tree.parentIndex[index] >= 0 {
            let node = diagram.nodes[index]
            let parent = diagram.nodes[tree.parentIndex[index]]
            out += "  n\(parent.id) -> n\(node.id)"
            var attributes: [String] = []
            if node.state == .collapsed {
                attributes.append("style=dotted")
            } else if node.state.isDetachedFromParent {
                attributes.append("style=dashed, color=\"\(NodeStyle.of(node.state).accent)\"")
            } else if node.state == .added {
                attributes.append("color=\"\(NodeStyle.of(node.state).accent)\", penwidth=2")
            }
            if let positions, let route = positions.edgeRoutes[node.id], let start = route.first {
                // A polyline as the cubic B-spline Graphviz expects: each segment's control
                // points sit on its ends.
                var points = [start]
                for (from, to) in zip(route, route.dropFirst()) { points += [from, to, to] }
                let spline = points.map { "\(point($0.x)),\(point(positions.height - $0.y))" }.joined(separator: " ")
                attributes.append("pos=\"\(spline)\"")
            }
            if !attributes.isEmpty { out += " [\(attributes.joined(separator: ", "))]" }
            out += ";\n"
        }

        if diagram.showLegend {
            let states = Legend.states(of: diagram)
            let legend = "\(Legend.nodeName) [shape=plain, style=\"\", label=\(Legend.html(states))"
            if let positions {
                // To the right of the tree, top-aligned.
                let size = Legend.estimatedSize(states)
                let x = positions.width + legendGap + size.width / 2
                out += "  \(legend), pos=\"\(point(x)),\(point(positions.height - size.height / 2))!\"];\n"
            } else {
                // A free node: dot puts it beside the root. (Constraining its rank, for example
                // with rank=sink, makes Graphviz 2.42's mincross crash now and then.)
                out += "  \(legend)];\n"
            }
        }
        out += "}\n"
        return out
    }

    /// The size in points of the box that ``dot(for:positions:)`` draws for `node`, estimated

    public static func estimatedBoxSize(of node: DiagramNode) -> (width: Double, height: Double) {
        NodeLabel.estimatedSize(of: node)
    }

    private static func styleAttributes(_ style: NodeStyle, rounded: Bool) -> String {
        "shape=\(style.shape), style=\"\(style.style(rounded: rounded))\", color=\"\(style.border)\""
            + ", fillcolor=\"\(style.fill)\", penwidth=\(DotNumber.format(style.penWidth, decimals: 2))"
    }

    /// Space between the tree and the legend, in points.
    static let legendGap = 40.0
    /// The size of the diagram's title, in points.
    static let titleSize = 16.0
    /// The space around the drawing (Graphviz's `pad`), in points.
    static let padding = 0.3 * 72

    private static func point(_ value: Double) -> String { DotNumber.format(value, decimals: 1) }
    private static func inches(_ points: Double) -> String { DotNumber.format(points / 72, decimals: 3) }
}
