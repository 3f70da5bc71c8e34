/// A tidy tree layout in linear time: Walker's algorithm in the form of Buchheim, Jünger and
/// Leipert ("Improving Walker's algorithm to run in linear time", 2002), with boxes of any width.
///
/// Each depth is a band as deep as its deepest box; boxes in a band are aligned on the side
/// towards the root. Siblings keep their order, a parent is centred on its children, and subtrees
/// are pushed apart only as far as their outlines need, so boxes never overlap. Top-down, bands
/// are rows; left-to-right, the same algorithm runs on the transposed boxes and bands are columns.
///
/// Top-down, some subtrees are drawn as indented outlines, one box per line, each line hanging
/// from its parent's rail (see ``OutlinePlan``): without an `outlineLimit`, the leaves of a parent
/// whose children are all leaves, at least ``stackMinimum`` of them, in a column under its left
/// side; with one (the compact layout), every subtree of at most that many nodes, runs of them
/// sharing columns of at most that many lines. Leaves are most of a big tree, and side by side
/// they would make the drawing hundreds of times wider than tall. A column is laid out as a chain,
/// one line per depth, every line as wide as the whole column, so the algorithm keeps other
/// subtrees clear of it; the lines are then packed closer together inside the room the chain
/// reserved.
///
/// Everything is iterative: a chain of a million nodes does not exhaust the stack.
public enum TidyLayout {
    /// A point in the layout's coordinates: points (1/72 inch), x to the right, y downwards.
    public struct Point: Sendable, Equatable {
        /// Horizontal position.
        public var x: Double
        /// Vertical position, growing downwards.
        public var y: Double

        /// Creates a point.
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// Where every box goes.
    public struct Result: Sendable, Equatable {
        /// The centre of each node's box, by node id. The drawing starts at (0, 0) top left.
        public var positions: [UInt64: Point]
        /// The route of each edge, by the child's id: a polyline from the parent's box to the
        /// child's that crosses no box. Edges run down from the parent, along the middle of the
        /// gap above the child's band, and down into the child; stacked leaves hang from a rail.
        /// A drawing draws edges without a route as straight lines between the boxes.
        public var edgeRoutes: [UInt64: [Point]]
        /// The width of the drawing in points.
        public var width: Double
        /// The height of the drawing in points.
        public var height: Double

        /// Creates a result.
        public init(positions: [UInt64: Point], edgeRoutes: [UInt64: [Point]] = [:], width: Double, height: Double) {
            self.positions = positions
            self.edgeRoutes = edgeRoutes
            self.width = width
            self.height = height
        }
    }

    /// Space between neighbouring siblings, in points.
    static let siblingGap = 14.0
    /// Space between neighbouring boxes that are not siblings, in points.
    static let subtreeGap = 28.0
    /// Space between depth bands, in points.
    static let levelGap = 44.0
    /// How many leaf children a parent needs before they are stacked in a column.
    public static let stackMinimum = 3
    /// Space between stacked leaves, in points.
    static let stackGap = 8.0
    /// Horizontal distance from the rail to the stacked leaves, in points.
    static let stackIndent = 14.0
    /// How far inside the parent's left border the rail starts, in points.
    static let railInset = 16.0

    /// Space between an outline's root and its first line, in points.
    static let outlineGap = 12.0

    /// Lays out `diagram` as a tree (or a forest, when it has several roots).
    ///
    /// - Parameters:
    ///   - diagram: The nodes; a node whose parent is not listed before it is treated as a root,
    ///     and a repeated id is ignored after its first occurrence.
    ///   - orientation: Which way the tree grows; ``DiagramOrientation/auto`` is top-down.
    ///     Left-to-right draws no outlines: siblings are already one above the other.
    ///   - outlineLimit: Top-down, every subtree of at most this many nodes (its root included)
    ///     that is not inside a bigger one is drawn as an indented outline, and runs of such
    ///     siblings share columns of at most this many lines that hang from their parent. 0 draws
    ///     only the leaf columns.
    ///   - nodeSize: The size in points of a node's box.
    public static func layout(
        _ diagram: Diagram,
        orientation: DiagramOrientation = .topDown,
        outlineLimit: Int = 0,
        nodeSize: (DiagramNode) -> (width: Double, height: Double) = DotWriter.estimatedBoxSize(of:)
    ) -> Result {
        layout(Boxes(diagram, nodeSize: nodeSize), orientation: orientation, outlineLimit: outlineLimit)
    }

    /// A diagram's structure and box sizes, worked out once for several layouts.
    struct Boxes {
        let nodes: [DiagramNode]
        let tree: DiagramTree
        let sizes: [(width: Double, height: Double)]

        init(_ diagram: Diagram, nodeSize: (DiagramNode) -> (width: Double, height: Double) = DotWriter.estimatedBoxSize(of:)) {
            nodes = diagram.nodes
            tree = DiagramTree(diagram.nodes)
            sizes = diagram.nodes.map(nodeSize)
        }
    }

    /// ``layout(_:orientation:outlineLimit:nodeSize:)`` of boxes already measured.
    static func layout(_ boxes: Boxes, orientation: DiagramOrientation, outlineLimit: Int) -> Result {
        let walker = makeWalker(boxes, orientation: orientation, outlineLimit: outlineLimit)
        let placed = walker.place()
        let result = walker.result(placed, nodes: boxes.nodes)
        return orientation == .leftToRight ? result.transposed() : result
    }

    /// The width and height of ``layout(_:orientation:outlineLimit:nodeSize:)``'s drawing, without
    /// the positions and routes, which cost more to build than the layout itself.
    static func extent(
        _ boxes: Boxes, orientation: DiagramOrientation = .topDown, outlineLimit: Int = 0, stackLeaves: Bool = true
    ) -> (width: Double, height: Double, outlines: Int) {
        let walker = makeWalker(boxes, orientation: orientation, outlineLimit: outlineLimit, stackLeaves: stackLeaves)
        let placed = walker.place()
        let outlines = walker.outlineRows.count { $0 >= 0 } + walker.isColumnHead.count { $0 }
        return orientation == .leftToRight
            ? (placed.height, placed.width, outlines) : (placed.width, placed.height, outlines)
    }

    private static func makeWalker(
        _ boxes: Boxes, orientation: DiagramOrientation, outlineLimit: Int, stackLeaves: Bool = true
    ) -> Walker {
        let transposed = orientation == .leftToRight
        var walker = Walker(
            tree: boxes.tree, sizes: boxes.sizes, transposed: transposed, stackLeaves: stackLeaves && !transposed,
            outlineLimit: transposed ? 0 : outlineLimit)
        walker.run()
        return walker
    }
}

extension TidyLayout.Result {
    /// The same drawing with x and y swapped: a top-down layout of transposed boxes becomes a
    /// left-to-right layout of the real ones.
    func transposed() -> TidyLayout.Result {
        func swap(_ point: TidyLayout.Point) -> TidyLayout.Point { TidyLayout.Point(x: point.y, y: point.x) }
        return TidyLayout.Result(
            positions: positions.mapValues(swap), edgeRoutes: edgeRoutes.mapValues { $0.map(swap) }, width: height, height: width)
    }
}

extension TidyLayout {
    /// The state of one run of the algorithm, in arrays indexed by slot: slot 0 is a virtual root
    /// above the diagram's roots, and node `i` of the diagram is slot `i + 1`, so a parent always
    /// has a smaller slot than its children. "Layout" parents and children are the diagram's,
    /// except that the lines of an outline or a column form a chain.
    private struct Walker {
        let count: Int
        /// Layout parent of each slot, or -1 for the virtual root and excluded slots.
        var parent: [Int]
        var childStart: [Int]
        var childList: [Int]
        /// Position of each slot among its layout siblings.
        var number: [Int]
        /// The room the algorithm reserves left of a slot's x: half its box, or for an outline (its
        /// root and every line) half the root's box, so the root is placed like any box.
        var leftExtent: [Double]
        /// The room reserved right of a slot's x: half its box, or the rest of an outline's width.
        var rightExtent: [Double]
        /// The box's own size.
        var boxWidth: [Double]
        var height: [Double]
        var included: [Bool]
        /// For the root of an outline, its first line's slot; else -1.
        var outlineRows: [Int]
        /// For a line of an outline, the root of the outline; else -1.
        var outlineOwner: [Int]
        /// For a line of an outline, its parent in the diagram; else -1.
        var diagramParent: [Int]
        /// For a line of an outline, how far its box's left side is right of the outline root's
        /// left side, or of its column's rail.
        var indent: [Double]
        /// For a line that is a child of a parent drawn as a box of the tree, the first line of
        /// its column (whose x is the column's rail); else -1.
        var memberOf: [Int]
        /// Whether a slot is the first line of a column that hangs from a parent's rail.
        var isColumnHead: [Bool]
        var prelim: [Double]
        var modifier: [Double]
        var shift: [Double]
        var change: [Double]
        var thread: [Int]
        var ancestor: [Int]

        init(
            tree: DiagramTree, sizes: [(width: Double, height: Double)], transposed: Bool, stackLeaves: Bool, outlineLimit: Int
        ) {
            let count = sizes.count + 1
            self.count = count
            parent = [Int](repeating: -1, count: count)
            boxWidth = [Double](repeating: 0, count: count)
            height = [Double](repeating: 0, count: count)
            included = [Bool](repeating: true, count: count)
            number = [Int](repeating: 0, count: count)
            outlineRows = [Int](repeating: -1, count: count)
            outlineOwner = [Int](repeating: -1, count: count)
            diagramParent = [Int](repeating: -1, count: count)
            indent = [Double](repeating: 0, count: count)
            memberOf = []
            isColumnHead = []
            for index in sizes.indices {
                let slot = index + 1
                included[slot] = tree.isIncluded[index]
                guard included[slot] else { continue }
                let size = transposed ? (width: sizes[index].height, height: sizes[index].width) : sizes[index]
                boxWidth[slot] = max(0, size.width.isFinite ? size.width : 0)
                height[slot] = max(0, size.height.isFinite ? size.height : 0)
                parent[slot] = tree.parentIndex[index] + 1
            }
            leftExtent = boxWidth.map { $0 / 2 }
            rightExtent = leftExtent

            let plan = OutlinePlan(tree: tree, boxWidth: boxWidth, stackLeaves: stackLeaves, limit: outlineLimit)
            for slot in 1..<count where plan.layoutParent[slot] >= 0 { parent[slot] = plan.layoutParent[slot] }
            outlineRows = plan.outlineRows
            outlineOwner = plan.outlineOwner
            diagramParent = plan.diagramParent
            indent = plan.offset
            memberOf = plan.memberOf
            isColumnHead = plan.isColumnHead
            for slot in 1..<count where plan.rightExtent[slot] >= 0 {
                (leftExtent[slot], rightExtent[slot]) = (plan.leftExtent[slot], plan.rightExtent[slot])
            }

            childStart = [Int](repeating: 0, count: count + 1)
            childList = []
            childList.reserveCapacity(count)
            for (position, root) in tree.roots.enumerated() {
                childList.append(root + 1)
                number[root + 1] = position
            }
            childStart[1] = childList.count
            for index in sizes.indices {
                let slot = index + 1
                if outlineRows[slot] >= 0 {
                    childList.append(outlineRows[slot])
                } else if outlineOwner[slot] >= 0 {
                    if plan.chainNext[slot] >= 0 { childList.append(plan.chainNext[slot]) }
                } else if plan.customStart[slot] >= 0 {
                    for (position, child) in plan.customChildren[plan.customStart[slot]..<plan.customEnd[slot]].enumerated() {
                        childList.append(child)
                        number[child] = position
                    }
                } else {
                    for (position, child) in tree.children(of: index).enumerated() {
                        childList.append(child + 1)
                        number[child + 1] = position
                    }
                }
                childStart[slot + 1] = childList.count
            }
            prelim = [Double](repeating: 0, count: count)
            modifier = [Double](repeating: 0, count: count)
            shift = [Double](repeating: 0, count: count)
            change = [Double](repeating: 0, count: count)
            thread = [Int](repeating: -1, count: count)
            ancestor = Array(0..<count)
        }

        func firstChild(_ v: Int) -> Int { childStart[v] < childStart[v + 1] ? childList[childStart[v]] : -1 }
        func lastChild(_ v: Int) -> Int { childStart[v] < childStart[v + 1] ? childList[childStart[v + 1] - 1] : -1 }
        func nextLeft(_ v: Int) -> Int { childStart[v] < childStart[v + 1] ? childList[childStart[v]] : thread[v] }
        func nextRight(_ v: Int) -> Int { childStart[v] < childStart[v + 1] ? childList[childStart[v + 1] - 1] : thread[v] }

        func distance(_ left: Int, _ right: Int) -> Double {
            let gap = parent[left] == parent[right] && parent[left] != 0 ? TidyLayout.siblingGap : TidyLayout.subtreeGap
            return rightExtent[left] + leftExtent[right] + gap
        }

        /// The first walk, bottom-up. A node's own subtree is finished before its parent's turn
        /// (slots are visited from last to first), and the parent then places its children left
        /// to right exactly as the recursive formulation would after each child's walk.
        mutating func run() {
            var midpoint = [Double](repeating: 0, count: count)
            for v in stride(from: count - 1, through: 0, by: -1) where childStart[v] < childStart[v + 1] {
                let children = childStart[v]..<childStart[v + 1]
                var defaultAncestor = childList[children.lowerBound]
                var previous = -1
                for position in children {
                    let w = childList[position]
                    if previous < 0 {
                        prelim[w] = midpoint[w]
                    } else {
                        prelim[w] = prelim[previous] + distance(previous, w)
                        if childStart[w] < childStart[w + 1] {
                            modifier[w] = prelim[w] - midpoint[w]
                        }
                        defaultAncestor = apportion(w, leftSibling: previous, defaultAncestor: defaultAncestor)
                    }
                    previous = w
                }
                executeShifts(v)
                midpoint[v] = (prelim[firstChild(v)] + prelim[lastChild(v)]) / 2
            }
        }

        mutating func apportion(_ v: Int, leftSibling: Int, defaultAncestor: Int) -> Int {
            var defaultAncestor = defaultAncestor
            var insideRight = v
            var outsideRight = v
            var insideLeft = leftSibling
            var outsideLeft = firstChild(parent[v])
            var sumInsideRight = modifier[insideRight]
            var sumOutsideRight = modifier[outsideRight]
            var sumInsideLeft = modifier[insideLeft]
            var sumOutsideLeft = modifier[outsideLeft]
            while nextRight(insideLeft) >= 0 && nextLeft(insideRight) >= 0 {
                insideLeft = nextRight(insideLeft)
                insideRight = nextLeft(insideRight)
                outsideLeft = nextLeft(outsideLeft)
                outsideRight = nextRight(outsideRight)
                ancestor[outsideRight] = v
                let needed =
                    (prelim[insideLeft] + sumInsideLeft) - (prelim[insideRight] + sumInsideRight)
                    + distance(insideLeft, insideRight)
                if needed > 0 {
                    let left = parent[ancestor[insideLeft]] == parent[v] ? ancestor[insideLeft] : defaultAncestor
                    moveSubtree(left, v, needed)
                    sumInsideRight += needed
                    sumOutsideRight += needed
                }
                sumInsideLeft += modifier[insideLeft]
                sumInsideRight += modifier[insideRight]
                sumOutsideLeft += modifier[outsideLeft]
                sumOutsideRight += modifier[outsideRight]
            }
            if nextRight(insideLeft) >= 0 && nextRight(outsideRight) < 0 {
                thread[outsideRight] = nextRight(insideLeft)
                modifier[outsideRight] += sumInsideLeft - sumOutsideRight
            }
            if nextLeft(insideRight) >= 0 && nextLeft(outsideLeft) < 0 {
                thread[outsideLeft] = nextLeft(insideRight)
                modifier[outsideLeft] += sumInsideRight - sumOutsideLeft
                defaultAncestor = v
            }
            return defaultAncestor
        }

        mutating func moveSubtree(_ left: Int, _ right: Int, _ amount: Double) {
            let subtrees = Double(number[right] - number[left])
            change[right] -= amount / subtrees
            shift[right] += amount
            change[left] += amount / subtrees
            prelim[right] += amount
            modifier[right] += amount
        }

        mutating func executeShifts(_ v: Int) {
            var accumulatedShift = 0.0
            var accumulatedChange = 0.0
            for position in stride(from: childStart[v + 1] - 1, through: childStart[v], by: -1) {
                let w = childList[position]
                prelim[w] += accumulatedShift
                modifier[w] += accumulatedShift
                accumulatedChange += change[w]
                accumulatedShift += shift[w] + accumulatedChange
            }
        }

        /// Where the boxes are: centres, depths, band tops and the drawing's size.
        struct Placement {
            var x: [Double]
            var y: [Double]
            var depth: [Int]
            var bandTop: [Double]
            /// For the first line of a column, the x of the column's rail.
            var rail: [Double]
            var minLeft: Double
            var width: Double
            var height: Double
            /// Whether there is no box at all.
            var isEmpty: Bool
        }

        /// The second walk, top-down: absolute x from the sums of modifiers, y from depth bands;
        /// then the lines of outlines are packed under their roots.
        func place() -> Placement {
            var x = [Double](repeating: 0, count: count)
            var y = [Double](repeating: 0, count: count)
            var modifierSum = [Double](repeating: 0, count: count)
            var depth = [Int](repeating: 0, count: count)
            var bandHeight: [Double] = []
            for v in 1..<count where included[v] {
                let p = parent[v]
                modifierSum[v] = modifierSum[p] + modifier[p]
                x[v] = prelim[v] + modifierSum[v]
                depth[v] = p == 0 ? 0 : depth[p] + 1
                if depth[v] == bandHeight.count { bandHeight.append(0) }
                bandHeight[depth[v]] = max(bandHeight[depth[v]], height[v])
            }
            var bandTop = [Double](repeating: 0, count: bandHeight.count + 1)
            for band in bandHeight.indices {
                bandTop[band + 1] = bandTop[band] + bandHeight[band] + TidyLayout.levelGap
            }
            for v in 1..<count where included[v] && outlineOwner[v] < 0 {
                y[v] = bandTop[depth[v]] + height[v] / 2
            }

            // An outline's lines, top to bottom under its root. The chain reserved the outline's
            // full width at every depth it spans, the root reserved it in its own band, and the
            // packed lines are never lower than the chain's bands, so they stay clear of every
            // other box.
            for v in 1..<count where outlineRows[v] >= 0 {
                let left = x[v] - boxWidth[v] / 2
                var top = y[v] + height[v] / 2 + TidyLayout.outlineGap
                var line = outlineRows[v]
                while line >= 0 {
                    x[line] = left + indent[line] + boxWidth[line] / 2
                    y[line] = top + height[line] / 2
                    top += height[line] + TidyLayout.stackGap
                    line = childStart[line] < childStart[line + 1] ? childList[childStart[line]] : -1
                }
            }
            // A column's lines, from the top of its band, right of its rail (the first line's x).
            var rail = [Double](repeating: 0, count: count)
            for head in 1..<count where isColumnHead[head] {
                rail[head] = x[head]
                var top = bandTop[depth[head]]
                var line = head
                while line >= 0 {
                    x[line] = rail[head] + indent[line] + boxWidth[line] / 2
                    y[line] = top + height[line] / 2
                    top += height[line] + TidyLayout.stackGap
                    line = childStart[line] < childStart[line + 1] ? childList[childStart[line]] : -1
                }
            }

            var minLeft = Double.infinity
            var maxRight = -Double.infinity
            var maxBottom = 0.0
            for v in 1..<count where included[v] {
                minLeft = min(minLeft, x[v] - boxWidth[v] / 2)
                maxRight = max(maxRight, x[v] + boxWidth[v] / 2)
                maxBottom = max(maxBottom, y[v] + height[v] / 2)
            }
            guard minLeft.isFinite else {
                return Placement(
                    x: x, y: y, depth: depth, bandTop: bandTop, rail: rail, minLeft: 0, width: 0, height: 0, isEmpty: true)
            }
            return Placement(
                x: x, y: y, depth: depth, bandTop: bandTop, rail: rail, minLeft: minLeft, width: maxRight - minLeft,
                height: maxBottom,
                isEmpty: false)
        }

        /// Positions by id, and the route of every edge.
        func result(_ placed: Placement, nodes: [DiagramNode]) -> Result {
            guard !placed.isEmpty else { return Result(positions: [:], width: 0, height: 0) }
            let (x, y, minLeft) = (placed.x, placed.y, placed.minLeft)
            var positions = [UInt64: Point](minimumCapacity: count)
            var routes: [UInt64: [Point]] = [:]
            routes.reserveCapacity(count)
            for v in 1..<count where included[v] {
                let centre = Point(x: x[v] - minLeft, y: y[v])
                positions[nodes[v - 1].id] = centre
                if memberOf[v] >= 0 {
                    // Down from the parent, along the middle of the gap above the column, down
                    // the column's rail, and right into the line's left side.
                    let owner = diagramParent[v]
                    let head = memberOf[v]
                    let rail = placed.rail[head] - minLeft
                    let from = Point(x: x[owner] - minLeft, y: y[owner] + height[owner] / 2)
                    let end = [Point(x: rail, y: centre.y), Point(x: centre.x - boxWidth[v] / 2, y: centre.y)]
                    if abs(from.x - rail) < 0.05 {
                        routes[nodes[v - 1].id] = [from] + end
                    } else {
                        let middle = placed.bandTop[placed.depth[head]] - TidyLayout.levelGap / 2
                        routes[nodes[v - 1].id] = [from, Point(x: from.x, y: middle), Point(x: rail, y: middle)] + end
                    }
                } else if outlineOwner[v] >= 0 {
                    // Down the parent's rail, then right into the line's left side.
                    let owner = diagramParent[v]
                    let rail = x[owner] - boxWidth[owner] / 2 + min(TidyLayout.railInset, boxWidth[owner] / 2) - minLeft
                    routes[nodes[v - 1].id] = [
                        Point(x: rail, y: y[owner] + height[owner] / 2),
                        Point(x: rail, y: centre.y),
                        Point(x: centre.x - boxWidth[v] / 2, y: centre.y),
                    ]
                } else if parent[v] > 0 {
                    // Down from the parent, along the middle of the gap above the child's band
                    // (where there are no boxes), and down into the child's top.
                    let owner = parent[v]
                    let from = Point(x: x[owner] - minLeft, y: y[owner] + height[owner] / 2)
                    let to = Point(x: centre.x, y: centre.y - height[v] / 2)
                    if abs(from.x - to.x) < 0.05 {
                        routes[nodes[v - 1].id] = [from, Point(x: from.x, y: to.y)]
                    } else {
                        let middle = placed.bandTop[placed.depth[v]] - TidyLayout.levelGap / 2
                        routes[nodes[v - 1].id] = [from, Point(x: from.x, y: middle), Point(x: to.x, y: middle), to]
                    }
                }
            }
            return Result(positions: positions, edgeRoutes: routes, width: placed.width, height: placed.height)
        }
    }
}
