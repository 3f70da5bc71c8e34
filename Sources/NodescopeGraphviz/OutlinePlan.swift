/// Which parts of a tree ``TidyLayout`` draws as indented outlines, and how their lines are
/// chained so that the tidy algorithm reserves their room. Arrays are indexed by the layout's
/// slots: node `i` of the diagram is slot `i + 1`.
///
/// - Without a limit (the tidy layout), a parent whose children are all leaves, at least
///   ``TidyLayout/stackMinimum`` of them, hangs them in a column under its left side.
/// - With a limit (the compact layout), every subtree of at most `limit` nodes under a parent
///   whose subtree is bigger is drawn as lines: the subtree's root, then its descendants in
///   pre-order, each indented under its parent's rail. Consecutive such siblings share a column
///   of up to `limit` lines, which hangs from a rail that the parent's edge comes down to. A root
///   of the forest whose whole tree is that small becomes one outline under itself.
struct OutlinePlan {
    /// The parent each slot has in the layout: the previous line for a line of a chain, else
    /// -1 (the diagram's parent).
    var layoutParent: [Int]
    /// The next line of a chain, or -1.
    var chainNext: [Int]
    /// For a node drawn as a box of the tree that hangs an outline under itself, its first line.
    var outlineRows: [Int]
    /// For a line, what its position is measured from: the outline's root, or its column's
    /// first line; else -1.
    var outlineOwner: [Int]
    /// For a line, its parent in the diagram.
    var diagramParent: [Int]
    /// For a line, its box's left side relative to the root's left side or the column's rail.
    var offset: [Double]
    /// For a line that is a child of a box of the tree, the first line of its column.
    var memberOf: [Int]
    /// Whether a slot is the first line of a column.
    var isColumnHead: [Bool]
    /// The room reserved left and right of a slot's x, for outlines and their lines; -1 where
    /// the box's own half widths apply.
    var leftExtent: [Double]
    var rightExtent: [Double]
    /// For a parent with columns, its layout children (boxes and first lines of columns) are
    /// `customChildren[customStart[slot]..<customEnd[slot]]`; else `customStart` is -1.
    var customStart: [Int]
    var customEnd: [Int]
    var customChildren: [Int]

    init(tree: DiagramTree, boxWidth: [Double], stackLeaves: Bool, limit: Int) {
        let nodeCount = boxWidth.count - 1
        let count = boxWidth.count
        layoutParent = [Int](repeating: -1, count: count)
        chainNext = [Int](repeating: -1, count: count)
        outlineRows = [Int](repeating: -1, count: count)
        outlineOwner = [Int](repeating: -1, count: count)
        diagramParent = [Int](repeating: -1, count: count)
        offset = [Double](repeating: 0, count: count)
        memberOf = [Int](repeating: -1, count: count)
        isColumnHead = [Bool](repeating: false, count: count)
        leftExtent = [Double](repeating: -1, count: count)
        rightExtent = [Double](repeating: -1, count: count)
        customStart = [Int](repeating: -1, count: count)
        customEnd = [Int](repeating: -1, count: count)
        customChildren = []

        var subtreeSize = [Int](repeating: 1, count: nodeCount)
        for index in stride(from: nodeCount - 1, through: 0, by: -1) where tree.parentIndex[index] >= 0 {
            subtreeSize[tree.parentIndex[index]] += subtreeSize[index]
        }
        var inOutline = [Bool](repeating: false, count: nodeCount)
        var pending: [(index: Int, owner: Int)] = []

        for index in 0..<nodeCount where tree.isIncluded[index] && !inOutline[index] && tree.childCount(of: index) > 0 {
            let slot = index + 1
            let children = tree.children(of: index)
            if limit <= 0 {
                let leafColumn =
                    stackLeaves && children.count >= TidyLayout.stackMinimum
                    && children.allSatisfy { tree.childCount(of: $0) == 0 }
                if leafColumn { hangOutline(under: index, tree: tree, boxWidth: boxWidth, inOutline: &inOutline, pending: &pending) }
                continue
            }
            if tree.parentIndex[index] < 0 && subtreeSize[index] <= limit {
                hangOutline(under: index, tree: tree, boxWidth: boxWidth, inOutline: &inOutline, pending: &pending)
                continue
            }
            guard children.contains(where: { subtreeSize[$0] <= limit }) else { continue }
            // Runs of small children share columns; a big child stays a box of the tree.
            customStart[slot] = customChildren.count
            var head = -1
            var tail = -1
            var lines = 0
            var widest = 0.0
            for child in children {
                guard subtreeSize[child] <= limit else {
                    closeColumn(head, widest: widest)
                    head = -1
                    customChildren.append(child + 1)
                    continue
                }
                if head < 0 || lines + subtreeSize[child] > limit {
                    closeColumn(head, widest: widest)
                    head = child + 1
                    tail = -1
                    lines = 0
                    widest = 0
                    isColumnHead[head] = true
                    customChildren.append(head)
                }
                lines += subtreeSize[child]
                // The child and its subtree in pre-order: the child right of the rail, each
                // descendant indented under its parent's rail.
                pending.removeAll(keepingCapacity: true)
                pending.append((child, slot))
                while let (line, owner) = pending.popLast() {
                    let lineSlot = line + 1
                    inOutline[line] = true
                    outlineOwner[lineSlot] = head
                    diagramParent[lineSlot] = owner
                    if owner == slot {
                        memberOf[lineSlot] = head
                        offset[lineSlot] = TidyLayout.stackIndent
                    } else {
                        offset[lineSlot] = offset[owner] + min(TidyLayout.railInset, boxWidth[owner] / 2) + TidyLayout.stackIndent
                    }
                    widest = max(widest, offset[lineSlot] + boxWidth[lineSlot])
                    if tail < 0 {
                        layoutParent[lineSlot] = slot
                    } else {
                        layoutParent[lineSlot] = tail
                        chainNext[tail] = lineSlot
                    }
                    tail = lineSlot
                    for grandchild in tree.children(of: line).reversed() { pending.append((grandchild, lineSlot)) }
                }
            }
            closeColumn(head, widest: widest)
            customEnd[slot] = customChildren.count
        }
    }

    /// Gives every line of the column that starts at `head` the column's room: nothing left of
    /// the rail, `widest` right of it.
    private mutating func closeColumn(_ head: Int, widest: Double) {
        var line = head
        while line >= 0 {
            (leftExtent[line], rightExtent[line]) = (0, widest)
            line = chainNext[line]
        }
    }

    /// Makes the subtree of `index` an outline under its root's box: the descendants in
    /// pre-order, each indented one step right of its parent's rail.
    private mutating func hangOutline(
        under index: Int, tree: DiagramTree, boxWidth: [Double], inOutline: inout [Bool], pending: inout [(index: Int, owner: Int)]
    ) {
        inOutline[index] = true
        let root = index + 1
        var widest = boxWidth[root]
        var previous = root
        pending.removeAll(keepingCapacity: true)
        for child in tree.children(of: index).reversed() { pending.append((child, root)) }
        while let (child, owner) = pending.popLast() {
            let slot = child + 1
            inOutline[child] = true
            outlineOwner[slot] = root
            diagramParent[slot] = owner
            let ownerLeft = owner == root ? 0 : offset[owner]
            offset[slot] = ownerLeft + min(TidyLayout.railInset, boxWidth[owner] / 2) + TidyLayout.stackIndent
            widest = max(widest, offset[slot] + boxWidth[slot])
            layoutParent[slot] = previous
            if previous == root { outlineRows[root] = slot } else { chainNext[previous] = slot }
            previous = slot
            for grandchild in tree.children(of: child).reversed() { pending.append((grandchild, slot)) }
        }
        // The root is placed like any box; the outline's lines reach right of its left side.
        let (left, right) = (boxWidth[root] / 2, widest - boxWidth[root] / 2)
        (leftExtent[root], rightExtent[root]) = (left, right)
        var line = outlineRows[root]
        while line >= 0 {
            (leftExtent[line], rightExtent[line]) = (left, right)
            line = chainNext[line]
        }
    }
}
