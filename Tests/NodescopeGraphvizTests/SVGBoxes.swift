/// The geometry of a drawn SVG: the root's size and each node's box, read from the polygons.
struct SVGBoxes {
    struct Box {
        var title: String
        var minX, maxX, minY, maxY: Double
    }

    var width: Double
    var height: Double
    /// One per node group except the legend.
    var boxes: [Box]

    init(_ svg: String) throws {
        let document = SVGDocument(svg)
        if let error = document.parseError { throw SVGError(message: "the SVG does not parse: \(error)") }
        guard let width = document.rootSize.width, let height = document.rootSize.height else {
            throw SVGError(message: "the SVG root has no size")
        }
        self.width = width
        self.height = height
        boxes = try document.nodes.filter { $0.title != "legend" }.map { node in
            // A polygon's points, or a rounded box's path ("M x,y C x,y …"): pairs of numbers.
            guard let points = node.outline["points"] ?? node.outline["d"] else {
                throw SVGError(message: "node \(node.title) has no outline")
            }
            let coordinates = points.split(whereSeparator: { !($0.isNumber || $0 == "." || $0 == "-") }).compactMap { Double($0) }
            let xs = stride(from: 0, to: coordinates.count, by: 2).map { coordinates[$0] }
            let ys = stride(from: 1, to: coordinates.count, by: 2).map { coordinates[$0] }
            return Box(title: node.title, minX: xs.min() ?? 0, maxX: xs.max() ?? 0, minY: ys.min() ?? 0, maxY: ys.max() ?? 0)
        }
    }

    /// Width divided by height of the whole SVG.
    var aspect: Double { width / height }

    /// Pairs of node boxes that overlap by more than a hundredth of a point.
    func overlaps() -> [(String, String)] {
        let sorted = boxes.sorted { $0.minX < $1.minX }
        var found: [(String, String)] = []
        for (index, box) in sorted.enumerated() {
            for other in sorted[(index + 1)...] {
                if other.minX >= box.maxX - 0.01 { break }
                if other.minY < box.maxY - 0.01 && box.minY < other.maxY - 0.01 { found.append((box.title, other.title)) }
            }
        }
        return found
    }
}

struct SVGError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
