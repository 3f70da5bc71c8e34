/// The size of an SVG that Graphviz wrote, read from and written to its root element's `width`
/// and `height` (in points); the `viewBox` stays, so viewers scale the whole drawing.
enum SVGSize {
    /// The width and height in points of `svg`'s root element, or `nil` when it has none.
    static func size(of svg: String) -> (width: Double, height: Double)? {
        guard let root = rootRange(of: svg),
            let width = attribute("width", in: svg[root]).flatMap({ points($0.value) }),
            let height = attribute("height", in: svg[root]).flatMap({ points($0.value) })
        else { return nil }
        return (width, height)
    }

    /// `svg` with its root element's size multiplied by `scale`.
    static func scaled(_ svg: String, by scale: Double) -> String {
        guard let root = rootRange(of: svg), let size = size(of: svg),
            let width = attribute("width", in: svg[root]), let height = attribute("height", in: svg[root])
        else { return svg }
        var text = svg
        // The later attribute first, so the earlier range stays valid.
        let edits = [(width.range, size.width * scale), (height.range, size.height * scale)].sorted { $0.0.lowerBound > $1.0.lowerBound }
        for (range, value) in edits {
            text.replaceSubrange(range, with: "\(DotNumber.format(value, decimals: 2))pt")
        }
        return text
    }

    /// The range of the `<svg …>` start tag.
    private static func rootRange(of svg: String) -> Range<String.Index>? {
        guard let start = svg.firstRange(of: "<svg") else { return nil }
        guard let end = svg[start.upperBound...].firstIndex(of: ">") else { return nil }
        return start.lowerBound..<end
    }

    /// The value of `name="…"` in `tag`, and the value's range.
    private static func attribute(_ name: String, in tag: Substring) -> (value: Substring, range: Range<String.Index>)? {
        // Graphviz separates attributes with a space or a newline; `viewBox` holds no `width="`.
        guard let found = tag.firstRange(of: " \(name)=\"") ?? tag.firstRange(of: "\n\(name)=\"") else { return nil }
        let valueStart = found.upperBound
        guard let valueEnd = tag[valueStart...].firstIndex(of: "\"") else { return nil }
        return (tag[valueStart..<valueEnd], valueStart..<valueEnd)
    }

    /// "123.5pt" (or a bare number) in points.
    private static func points(_ value: Substring) -> Double? {
        Double(value.hasSuffix("pt") ? value.dropLast(2) : value)
    }
}
