import NodescopeCollector

extension TimelineChart {
    /// The colours of a bar: before its detach, after it, and its outline.
    struct Palette {
        var attached: String
        var detached: String
        var stroke: String
        var dashed: Bool

        static func of(_ outcome: NodeLifetime.Outcome) -> Palette {
            switch outcome {
            case .attached, .released: Palette(attached: "#64b5f6", detached: "#b0bec5", stroke: "#1e88e5", dashed: false)
            case .awaitingRelease: Palette(attached: "#64b5f6", detached: "#ffb74d", stroke: "#ef6c00", dashed: false)
            case .leaked: Palette(attached: "#ef9a9a", detached: "#e53935", stroke: "red", dashed: false)
            case .lateRelease: Palette(attached: "#64b5f6", detached: "#8e24aa", stroke: "#6a1b9a", dashed: false)
            case .unverified: Palette(attached: "#64b5f6", detached: "#9e9e9e", stroke: "#616161", dashed: true)
            }
        }
    }

    /// The legend's entries: a swatch's colours and what it means.
    static let legend: [(outcome: NodeLifetime.Outcome, text: String)] = [
        (.released, "attached \u{2192} detached \u{2192} released"),
        (.awaitingRelease, "awaiting release"),
        (.leaked, "leaked"),
        (.lateRelease, "released late"),
        (.unverified, "unverified"),
    ]

    /// The SVG text of `layout`.
    package static func svg(_ layout: Layout) -> String {
        let plotLeft = margin + layout.labelWidth
        let plotWidth = max(layout.options.plotWidth, 100)
        let width = (plotLeft + plotWidth + margin + 40).rounded(.up)
        let axisTop = margin + titleHeight
        let rowsTop = axisTop + axisHeight
        let rowsBottom = rowsTop + Double(layout.rows.count) * rowHeight
        let noteHeight = layout.hiddenRows > 0 || layout.rows.isEmpty ? rowHeight + 4 : 0
        let legendTop = rowsBottom + noteHeight + 12
        let height = (legendTop + legendHeight + margin).rounded(.up)

        var out = ""
        out.reserveCapacity(2_000 + layout.rows.reduce(0) { $0 + 120 + $1.bars.count * 260 })
        out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(width))\" height=\"\(n(height))\" "
        out += "viewBox=\"0 0 \(n(width)) \(n(height))\" font-family=\"Helvetica,Arial,sans-serif\" font-size=\"\(n(fontSize))\">\n"
        out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        out +=
            "<text x=\"\(n(margin))\" y=\"\(n(margin + 14))\" font-size=\"15\" font-weight=\"bold\">\(SVGText.escaped(capped(layout.options.title)))</text>\n"

        // Bands, then the grid, then the bars over them.
        for (index, row) in layout.rows.enumerated() where row.band {
            let y = rowsTop + Double(index) * rowHeight
            out +=
                "<rect x=\"\(n(margin))\" y=\"\(n(y))\" width=\"\(n(plotLeft + plotWidth - margin))\" height=\"\(n(rowHeight))\" fill=\"#f3f6f9\"/>\n"
        }
        out += "<g stroke=\"#e0e0e0\" stroke-width=\"1\">\n"
        for tick in layout.ticks {
            let x = plotLeft + tick.x
            out += "<line x1=\"\(n(x))\" y1=\"\(n(rowsTop - 4))\" x2=\"\(n(x))\" y2=\"\(n(max(rowsBottom, rowsTop + 4)))\"/>\n"
        }
        out += "</g>\n"
        out += "<g font-size=\"10\" fill=\"#424242\" text-anchor=\"middle\">\n"
        for tick in layout.ticks {
            out += "<text x=\"\(n(plotLeft + tick.x))\" y=\"\(n(axisTop + 12))\">\(SVGText.escaped(tick.label))</text>\n"
        }
        out += "</g>\n"
        out +=
            "<line x1=\"\(n(plotLeft))\" y1=\"\(n(rowsTop - 4))\" x2=\"\(n(plotLeft + plotWidth))\" y2=\"\(n(rowsTop - 4))\" stroke=\"#757575\"/>\n"

        for (index, row) in layout.rows.enumerated() {
            let y = rowsTop + Double(index) * rowHeight
            if !row.label.isEmpty {
                out += "<text x=\"\(n(plotLeft - 8))\" y=\"\(n(y + rowHeight / 2 + 4))\" text-anchor=\"end\">"
                out += "<title>\(SVGText.escaped(row.path))</title>\(SVGText.escaped(row.label))</text>\n"
            }
            for bar in row.bars { out += svg(bar, left: plotLeft, rowTop: y) }
        }

        if layout.rows.isEmpty {
            out +=
                "<text x=\"\(n(plotLeft))\" y=\"\(n(rowsBottom + 14))\" fill=\"#616161\">no node lived in this part of the recording</text>\n"
        } else if layout.hiddenRows > 0 {
            let rows = layout.hiddenRows == 1 ? "row" : "rows"
            let nodes = layout.hiddenNodes == 1 ? "node" : "nodes"
            out += "<text x=\"\(n(plotLeft))\" y=\"\(n(rowsBottom + 14))\" fill=\"#616161\" font-style=\"italic\">"
            out += "\u{2026} \(layout.hiddenRows) more \(rows) (\(layout.hiddenNodes) \(nodes)) not drawn: "
            out += "--max-rows draws more, --start and --end draw a part</text>\n"
        }
        out += legendSVG(left: plotLeft, top: legendTop)
        out += "</svg>\n"
        return out
    }

    /// One bar, its detach tick, its flag mark and its arrow when it goes on past the window.
    static func svg(_ bar: Bar, left: Double, rowTop: Double) -> String {
        let palette = Palette.of(bar.outcome)
        let top = rowTop + (rowHeight - barHeight) / 2
        let x0 = left + bar.x0
        let x1 = left + max(bar.x1, bar.x0 + 1.5)
        var out = "<g><title>\(SVGText.escaped(bar.tooltip, keepingLineBreaks: true))</title>"
        let dash = palette.dashed ? " stroke-dasharray=\"3,2\"" : ""
        if let detach = bar.detachX.map({ left + $0 }), detach > x0, detach < x1 {
            out += rect(x0, top, detach - x0, palette.attached)
            out += rect(detach, top, x1 - detach, palette.detached)
        } else {
            // Detached at its end (released at once), or several nodes in one bar: the colour
            // of its life, except that a bar with a leak in it is red.
            out += rect(x0, top, x1 - x0, bar.count > 1 && bar.outcome == .leaked ? palette.detached : palette.attached)
        }
        out += "<rect x=\"\(n(x0))\" y=\"\(n(top))\" width=\"\(n(x1 - x0))\" height=\"\(n(barHeight))\" fill=\"none\" "
        out += "stroke=\"\(palette.stroke)\" stroke-width=\"\(bar.outcome == .leaked ? "1.5" : "0.8")\"\(dash)/>"
        if let detach = bar.detachX.map({ left + $0 }) {
            out += "<line x1=\"\(n(detach))\" y1=\"\(n(rowTop + 1))\" x2=\"\(n(detach))\" y2=\"\(n(rowTop + rowHeight - 1))\" "
            out += "stroke=\"#212121\" stroke-width=\"1.6\"/>"
        }
        if let flag = bar.flagX.map({ left + $0 }) {
            out += "<path d=\"M\(n(flag - 4)) \(n(top - 4))h8l-4 5z\" fill=\"#b71c1c\"/>"
        }
        if bar.continues {
            let middle = top + barHeight / 2
            out += "<path d=\"M\(n(x1 + 1)) \(n(middle - 5))l6 5l-6 5z\" fill=\"\(palette.stroke)\"/>"
        }
        return out + "</g>\n"
    }

    /// The legend: a swatch per outcome, then the detach tick, the flag mark and the arrow.
    static func legendSVG(left: Double, top: Double) -> String {
        var out = "<g font-size=\"10\" fill=\"#424242\">\n"
        var x = left
        let swatch = 30.0
        for entry in legend {
            let palette = Palette.of(entry.outcome)
            let dash = palette.dashed ? " stroke-dasharray=\"3,2\"" : ""
            out += rect(x, top, swatch / 2, palette.attached) + rect(x + swatch / 2, top, swatch / 2, palette.detached)
            out += "<rect x=\"\(n(x))\" y=\"\(n(top))\" width=\"\(n(swatch))\" height=\"\(n(barHeight))\" fill=\"none\" "
            out += "stroke=\"\(palette.stroke)\"\(dash)/>"
            out += "<line x1=\"\(n(x + swatch / 2))\" y1=\"\(n(top - 3))\" x2=\"\(n(x + swatch / 2))\" y2=\"\(n(top + barHeight + 3))\" "
            out += "stroke=\"#212121\" stroke-width=\"1.6\"/>"
            out += "<text x=\"\(n(x + swatch + 5))\" y=\"\(n(top + 9))\">\(entry.text)</text>\n"
            x += swatch + 12 + Double(entry.text.count) * 5.6
        }
        let second = top + 22
        out += "<line x1=\"\(n(left + 4))\" y1=\"\(n(second - 3))\" x2=\"\(n(left + 4))\" y2=\"\(n(second + barHeight + 3))\" "
        out += "stroke=\"#212121\" stroke-width=\"1.6\"/>"
        out += "<text x=\"\(n(left + 12))\" y=\"\(n(second + 9))\">detach</text>"
        out += "<path d=\"M\(n(left + 66)) \(n(second))h8l-4 5z\" fill=\"#b71c1c\"/>"
        out += "<text x=\"\(n(left + 80))\" y=\"\(n(second + 9))\">flagged (the grace ran out)</text>"
        out += "<path d=\"M\(n(left + 230)) \(n(second))l6 5l-6 5z\" fill=\"#1e88e5\"/>"
        out += "<text x=\"\(n(left + 242))\" y=\"\(n(second + 9))\">alive at the end</text>"
        out += "<text x=\"\(n(left + 340))\" y=\"\(n(second + 9))\" fill=\"#757575\">(point at a bar for its times)</text>\n"
        return out + "</g>\n"
    }

    private static func rect(_ x: Double, _ y: Double, _ width: Double, _ fill: String) -> String {
        "<rect x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(max(width, 0)))\" height=\"\(n(barHeight))\" fill=\"\(fill)\"/>"
    }

    /// A coordinate with at most one decimal.
    static func n(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        guard tenths.isFinite, tenths.magnitude < 1e12 else { return "0" }
        let whole = Int64(tenths)
        return whole % 10 == 0 ? String(whole / 10) : fixed(Double(whole) / 10, decimals: 1)
    }
}

/// Text for SVG: control characters made visible as a terminal shows them (``VisibleText``),
/// then escaped by the one XML escaper (``XMLText``).
enum SVGText {
    /// `text` escaped; with `keepingLineBreaks`, its line feeds stay (a tooltip shows them).
    static func escaped(_ text: String, keepingLineBreaks: Bool = false) -> String {
        if keepingLineBreaks {
            return text.split(separator: "\n", omittingEmptySubsequences: false).map { escaped(String($0)) }.joined(separator: "\n")
        }
        return XMLText.escaped(VisibleText.escaped(text))
    }
}
