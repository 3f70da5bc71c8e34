/// The parent/child structure of a ``Diagram``, indexed by array position.
///
/// The same rules apply everywhere a diagram is read: the first node with an id wins and later
/// duplicates are ignored; a node whose parent is not listed before it is a root. So every parent
/// has a smaller index than its children, and the structure is a forest whatever the input says.
struct DiagramTree {
    /// Whether the node at each index takes part (false for a duplicate id).
    private(set) var isIncluded: [Bool]
    /// The index of each node's parent, or -1 for a root or an excluded node.
    private(set) var parentIndex: [Int]
    /// The indices of the roots, in diagram order.
    private(set) var roots: [Int]
    /// Children of node `i` are `childList[childStart[i] ..< childStart[i + 1]]`, in diagram order.
    private var childStart: [Int]
    private var childList: [Int]
    /// The index of each included id.
    let indexByID: [UInt64: Int]

    init(_ nodes: [DiagramNode]) {
        let count = nodes.count
        var indexByID = [UInt64: Int](minimumCapacity: count)
        var isIncluded = [Bool](repeating: true, count: count)
        var parentIndex = [Int](repeating: -1, count: count)
        var childCount = [Int](repeating: 0, count: count + 1)
        var roots: [Int] = []
        for (index, node) in nodes.enumerated() {
            if indexByID[node.id] != nil {
                isIncluded[index] = false
                continue
            }
            indexByID[node.id] = index
            if let parent = node.parent, let parentAt = indexByID[parent], parentAt < index {
                parentIndex[index] = parentAt
                childCount[parentAt] += 1
            } else {
                roots.append(index)
            }
        }
        var childStart = [Int](repeating: 0, count: count + 1)
        for index in 0..<count {
            childStart[index + 1] = childStart[index] + childCount[index]
        }
        var fill = childStart
        var childList = [Int](repeating: 0, count: childStart[count])
        for index in 0..<count where parentIndex[index] >= 0 {
            let parent = parentIndex[index]
            childList[fill[parent]] = index
            fill[parent] += 1
        }
        self.isIncluded = isIncluded
        self.parentIndex = parentIndex
        self.roots = roots
        self.childStart = childStart
        self.childList = childList
        self.indexByID = indexByID
    }

    /// The children of the node at `index`, in diagram order.
    func children(of index: Int) -> ArraySlice<Int> {
        childList[childStart[index]..<childStart[index + 1]]
    }

    /// How many children the node at `index` has.
    func childCount(of index: Int) -> Int {
        childStart[index + 1] - childStart[index]
    }
}
