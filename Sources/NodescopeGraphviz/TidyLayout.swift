/// A tidy tree layout in linear time: Walker's algorithm in the form of Buchheim, Jünger and
/// Leipert ("Improving Walker's algorithm to run in linear time", 2002), with boxes of any width.
///
/// Each depth is a horizontal band as tall as its tallest box; boxes in a band are top-aligned.
/// Siblings keep their order left to right, a parent is centred over its children, and subtrees
/// are pushed apart only as far as their outlines need, so boxes never overlap.
///
/// A parent whose children are all leaves, at least ``stackMinimum`` of them, gets them stacked
/// in a column under its left side, like an outline, joined to it by a rail. Leaves are most of a big tree, and side by side they would make the
/// drawing hundreds of times wider than tall. The column is laid out as a chain, one leaf per
/// depth, with every leaf as wide as the column, so the algorithm keeps other subtrees clear of
/// it; the leaves are then packed closer together inside the room the chain reserved.
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

    /// Lays out `diagram` as a tree (or a forest, when it has several roots).
    ///
    /// - Parameters:
    ///   - diagram: The nodes; a node whose parent is not listed before it is treated as a root,
    ///     and a repeated id is ignored after its first occurrence.
    ///   - nodeSize: The size in points of a node's box.
    public static func layout(
        _ diagram: Diagram,
        nodeSize: (DiagramNode) -> (width: Double, height: Double) = DotWriter.estimatedBoxSize(of:)
    ) -> Result {
        let tree = DiagramTree(diagram.nodes)
        var walker = Walker(tree: tree, nodes: diagram.nodes, nodeSize: nodeSize)
        walker.run()
        return walker.result(nodes: diagram.nodes)
    }
}

extension TidyLayout {
    /// The state of one run of the algorithm, in arrays indexed by slot: slot 0 is a virtual root
    /// above the diagram's roots, and node `i` of the diagram is slot `i + 1`, so a parent always
    /// has a smaller slot than its children. "Layout" parents and children are the diagram's,
    /// except that stacked leaves form a chain below their parent.
    private struct Walker {
        let count: Int
        /// Layout parent of each slot, or -1 for the virtual root and excluded slots.
        var parent: [Int]
        var childStart: [Int]
        var childList: [Int]
        /// Position of each slot among its layout siblings.
        var number: [Int]
        /// The width the algorithm reserves: the box's, or a stacked column's.
        var width: [Double]
        /// The box's own size.
        var boxWidth: [Double]
        var height: [Double]
        var included: [Bool]
        /// For a parent whose leaves are stacked, the first leaf's slot; else -1.
        var stackHead: [Int]
        /// For a stacked leaf, the parent it is drawn under; else -1.
        var stackParent: [Int]
        /// For a parent whose leaves are stacked, how far left of its centre the rail runs.
        var railOffset: [Double]
        var prelim: [Double]
        var modifier: [Double]
        var shift: [Double]
        var change: [Double]
        var thread: [Int]
        var ancestor: [Int]

        init(tree: DiagramTree, nodes: [DiagramNode], nodeSize: (DiagramNode) -> (width: Double, height: Double)) {
            let count = nodes.count + 1
            self.count = count
            parent = [Int](repeating: -1, count: count)
            boxWidth = [Double](repeating: 0, count: count)
            height = [Double](repeating: 0, count: count)
            included = [Bool](repeating: true, count: count)
            number = [Int](repeating: 0, count: count)
            stackHead = [Int](repeating: -1, count: count)
            stackParent = [Int](repeating: -1, count: count)
            railOffset = [Double](repeating: 0, count: count)
            for index in nodes.indices {
                let slot = index + 1
                included[slot] = tree.isIncluded[index]
                guard included[slot] else { continue }
                let size = nodeSize(nodes[index])
                boxWidth[slot] = max(0, size.width.isFinite ? size.width : 0)
                height[slot] = max(0, size.height.isFinite ? size.height : 0)
                parent[slot] = tree.parentIndex[index] + 1
            }
            width = boxWidth

            // Which parents stack their leaves, and how wide each column must be.
            var chainNext = [Int](repeating: -1, count: count)
            let boxWidth = boxWidth
            for index in nodes.indices where tree.childCount(of: index) >= TidyLayout.stackMinimum {
                let children = tree.children(of: index)
                guard children.allSatisfy({ tree.childCount(of: $0) == 0 }) else { continue }
                let slot = index + 1
                let widest = children.reduce(0) { max($0, boxWidth[$1 + 1]) }
                let reach = TidyLayout.stackIndent + widest
                // The rail runs under the parent's left side; the column is centred on the parent,
                // so it must reach as far left of the centre as its leaves reach right of the rail.
                railOffset[slot] = min(max(0, boxWidth[slot] / 2 - TidyLayout.railInset), reach / 2)
                let columnWidth = 2 * (reach - railOffset[slot])
                stackHead[slot] = children.first! + 1
                var previous = slot
                for child in children {
                    stackParent[child + 1] = slot
                    width[child + 1] = columnWidth
                    parent[child + 1] = previous
                    if previous != slot { chainNext[previous] = child + 1 }
                    previous = child + 1
                }
            }

            childStart = [Int](repeating: 0, count: count + 1)
            childList = []
            childList.reserveCapacity(count)
            for (position, root) in tree.roots.enumerated() {
                childList.append(root + 1)
                number[root + 1] = position
            }
            childStart[1] = childList.count
            for index in nodes.indices {
                let slot = index + 1
                if stackHead[slot] >= 0 {
                    childList.append(stackHead[slot])
                } else if chainNext[slot] >= 0 {
                    childList.append(chainNext[slot])
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
            return (width[left] + width[right]) / 2 + gap
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

        /// The second walk, top-down: absolute x from the sums of modifiers, y from depth bands;
        /// then stacked leaves are packed into their columns.
        func result(nodes: [DiagramNode]) -> Result {
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
            for v in 1..<count where included[v] && stackParent[v] < 0 {
                y[v] = bandTop[depth[v]] + height[v] / 2
            }

            // Stacked leaves hang from a rail under the parent's left side, top to bottom. The
            // chain reserved the column's full width at every depth it spans, and the packed
            // column is never taller than those bands, so it stays clear of every other box.
            var railX = [Double](repeating: 0, count: count)
            for v in 1..<count where stackHead[v] >= 0 {
                var top = bandTop[depth[v] + 1]
                var leaf = stackHead[v]
                let rail = x[v] - railOffset[v]
                railX[v] = rail
                while leaf >= 0 {
                    x[leaf] = rail + TidyLayout.stackIndent + boxWidth[leaf] / 2
                    y[leaf] = top + height[leaf] / 2
                    top += height[leaf] + TidyLayout.stackGap
                    leaf = childStart[leaf] < childStart[leaf + 1] ? childList[childStart[leaf]] : -1
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
            guard minLeft.isFinite else { return Result(positions: [:], width: 0, height: 0) }
            var positions = [UInt64: Point](minimumCapacity: count)
            var routes: [UInt64: [Point]] = [:]
            routes.reserveCapacity(count)
            for v in 1..<count where included[v] {
                let centre = Point(x: x[v] - minLeft, y: y[v])
                positions[nodes[v - 1].id] = centre
                if stackParent[v] >= 0 {
                    // Down the rail, then right into the leaf's left side.
                    let owner = stackParent[v]
                    let rail = railX[owner] - minLeft
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
                        let middle = bandTop[depth[v]] - TidyLayout.levelGap / 2
                        routes[nodes[v - 1].id] = [from, Point(x: from.x, y: middle), Point(x: to.x, y: middle), to]
                    }
                }
            }
            return Result(positions: positions, edgeRoutes: routes, width: maxRight - minLeft, height: maxBottom)
        }
    }
}
