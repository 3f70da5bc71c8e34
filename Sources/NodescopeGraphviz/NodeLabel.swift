/// The label of a node box, in a rich (HTML-like) or a plain form, and an estimate of the box's
/// size that fits either.
///
/// Both live here so that the estimate follows the labels: the tidy layout spaces boxes by the
/// estimate, and Graphviz draws them from the label.
enum NodeLabel {
    static let fontName = "Helvetica,Arial,sans-serif"
    static let titleSize = 12.0
    static let kindSize = 9.0
    static let partSize = 10.0
    static let noteSize = 9.0
    /// The smallest text in a box: the kind and the note in rich labels; plain labels use one size.
    static func smallestTextSize(richLabels: Bool) -> Double {
        richLabels ? Swift.min(kindSize, noteSize, partSize, titleSize) : partSize
    }
    /// Horizontal and vertical space between the label and the border, in points per side.
    static let margin = (x: 10.0, y: 5.0)
    static let kindColor = "#616161"
    static let releasedColor = "#9e9e9e"
    /// What marks a released part in a plain label, which cannot strike text through.
    static let releasedMark = "\u{2717} "

    /// The rich label of `node`, in DOT's `<…>` HTML form: the title in bold, the kind small,
    /// one line per part, released parts struck through and grey, the note in the state's colour.
    static func html(for node: DiagramNode) -> String {
        let style = NodeStyle.of(node.state)
        if node.state == .collapsed {
            var label = "<<I>\(LabelText.html(node.title))</I>"
            if let note = node.note, !note.isEmpty {
                label +=
                    "<BR/><FONT POINT-SIZE=\"\(format(noteSize))\" COLOR=\"\(style.accent)\">"
                    + "\(LabelText.html(note))</FONT>"
            }
            return label + ">"
        }
        var rows = "<TR><TD><FONT POINT-SIZE=\"\(format(titleSize))\"><B>\(LabelText.html(node.title))</B></FONT></TD></TR>"
        if !node.kind.isEmpty {
            rows +=
                "<TR><TD><FONT POINT-SIZE=\"\(format(kindSize))\" COLOR=\"\(kindColor)\">"
                + "\(LabelText.html(node.kind))</FONT></TD></TR>"
        }
        for part in node.parts {
            rows += "<TR><TD ALIGN=\"LEFT\">\(LabelText.html(part))</TD></TR>"
        }
        for part in node.releasedParts {
            rows +=
                "<TR><TD ALIGN=\"LEFT\"><FONT COLOR=\"\(releasedColor)\"><S>"
                + "\(LabelText.html(part))</S></FONT></TD></TR>"
        }
        for line in noteLines(of: node) {
            rows +=
                "<TR><TD><FONT POINT-SIZE=\"\(format(noteSize))\" COLOR=\"\(style.accent)\"><I>"
                + "\(LabelText.html(line))</I></FONT></TD></TR>"
        }
        return "<<TABLE BORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"1\">\(rows)</TABLE>>"
    }

    /// The plain label of `node`, as a DOT quoted string: the title and «kind» centred, parts
    /// left-aligned, released parts marked with ✗, the note centred.
    static func plain(for node: DiagramNode) -> String {
        var label = "\"\(LabelText.quoted(node.title))\\n"
        if !node.kind.isEmpty {
            label += "\u{AB}\(LabelText.quoted(node.kind))\u{BB}\\n"
        }
        for part in node.parts {
            label += "\(LabelText.quoted(part))\\l"
        }
        for part in node.releasedParts {
            label += "\(releasedMark)\(LabelText.quoted(part))\\l"
        }
        for line in noteLines(of: node) {
            label += "\(LabelText.quoted(line))\\n"
        }
        return label + "\""
    }

    /// The size in points that Graphviz will give the box of `node` with either label, estimated
    /// from its text and erring on the large side.
    static func estimatedSize(of node: DiagramNode) -> (width: Double, height: Double) {
        var rich: [(width: Double, height: Double)] = []
        var plain: [(width: Double, height: Double)] = []
        func line(_ text: String, size: Double, bold: Bool = false, plainPrefix: String = "") {
            rich.append((LabelText.estimatedWidth(of: text, bold: bold) * size, lineHeight(size)))
            plain.append((LabelText.estimatedWidth(of: plainPrefix + text, bold: false) * partSize, lineHeight(partSize)))
        }
        if node.state == .collapsed {
            line(node.title, size: partSize)
            if let note = node.note, !note.isEmpty { line(note, size: noteSize) }
            // The note shape has a folded corner.
            return box(max(rich, plain), extraWidth: 8)
        }
        line(node.title, size: titleSize, bold: true)
        if !node.kind.isEmpty { line(node.kind, size: kindSize, plainPrefix: "\u{AB}\u{BB}") }
        for part in node.parts { line(part, size: partSize) }
        for part in node.releasedParts { line(part, size: partSize, plainPrefix: releasedMark) }
        for note in noteLines(of: node) { line(note, size: noteSize) }
        // Each table cell of the rich label has one point of padding on every side.
        return box(max(rich.map { ($0.width + 2, $0.height + 2) }, plain), extraWidth: 0)
    }

    /// The lines of a node's note (none when it has no note).
    static func noteLines(of node: DiagramNode) -> [String] {
        guard let note = node.note, !note.isEmpty else { return [] }
        return note.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The wider and the taller of two sets of lines.
    private static func max(
        _ first: [(width: Double, height: Double)], _ second: [(width: Double, height: Double)]
    ) -> (width: Double, height: Double) {
        let width = Swift.max(first.map(\.width).max() ?? 0, second.map(\.width).max() ?? 0)
        let height = Swift.max(first.reduce(0) { $0 + $1.height }, second.reduce(0) { $0 + $1.height })
        return (width, height)
    }

    private static func box(_ text: (width: Double, height: Double), extraWidth: Double) -> (width: Double, height: Double) {
        let width = (text.width + 2 * margin.x + extraWidth).rounded(.up)
        let height = (text.height + 2 * margin.y).rounded(.up)
        return (Swift.max(width, 40), Swift.max(height, 24))
    }

    /// Graphviz's line height for a font size: 1.2 times the size.
    private static func lineHeight(_ size: Double) -> Double { size * 1.2 }

    private static func format(_ value: Double) -> String { DotNumber.format(value, decimals: 1) }
}
