/// The legend box: one row per state with its colours.
enum Legend {
    /// The DOT node name of the legend; node ids are drawn as `n<id>`, so it cannot clash.
    static let nodeName = "legend"

    private static let treeStates: [DiagramNodeState] = [
        .active, .inactive, .detached, .leaked, .lateRelease, .unverified, .collapsed,
    ]
    private static let differenceStates = DiagramNodeState.differenceStates + [.collapsed]

    /// The states that the legend of `diagram` explains: those of a difference of two trees when
    /// it has a node in one of them, else those of a tree.
    static func states(of diagram: Diagram) -> [DiagramNodeState] {
        diagram.nodes.contains { DiagramNodeState.differenceStates.contains($0.state) } ? differenceStates : treeStates
    }
    private static let swatchWidth = 22.0
    private static let cellSpacing = 3.0
    private static let cellPadding = 2.0
    private static let fontSize = 10.0

    /// The legend's label for `states`, in DOT's `<…>` HTML form.
    static func html(_ states: [DiagramNodeState]) -> String {
        var rows = "<TR><TD COLSPAN=\"2\"><B>Legend</B></TD></TR>"
        for state in states {
            let style = NodeStyle.of(state)
            rows +=
                "<TR><TD BGCOLOR=\"\(style.fill)\" COLOR=\"\(style.border)\" BORDER=\"2\" "
                + "WIDTH=\"\(Int(swatchWidth))\"> </TD><TD ALIGN=\"LEFT\">\(style.legendName)</TD></TR>"
        }
        return "<<TABLE BORDER=\"1\" COLOR=\"#bdbdbd\" BGCOLOR=\"white\" CELLBORDER=\"0\" "
            + "CELLSPACING=\"\(Int(cellSpacing))\" CELLPADDING=\"\(Int(cellPadding))\">\(rows)</TABLE>>"
    }

    /// The size in points of the legend of `states`.
    static func estimatedSize(_ states: [DiagramNodeState]) -> (width: Double, height: Double) {
        let longest = states.map { LabelText.estimatedWidth(of: NodeStyle.of($0).legendName, bold: false) }.max() ?? 0
        let cell = 2 * cellPadding
        let width = swatchWidth + cell + longest * fontSize + cell + 3 * cellSpacing + 2
        let rowHeight = fontSize * 1.2 + cell + 4
        let height = Double(states.count + 1) * (rowHeight + cellSpacing) + cellSpacing + 2
        return (width.rounded(.up), height.rounded(.up))
    }
}
