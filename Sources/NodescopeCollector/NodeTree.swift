/// The compact store of one host's tree: node records in a slot array, an id-to-slot index, child
/// lists of slots, and the roots.
///
/// Every operation is O(1) (amortized) except where noted; there are no scans per event. It knows
/// nothing of leaks or of the wire: ``HostSession`` drives it.
struct NodeTree {
    /// "No slot": the parent of a root, or "no leak record".
    static let noSlot = UInt32.max

    /// The node records; a slot whose id is 0 is free.
    var slots: [NodeSlot] = []
    /// Node id to slot.
    private(set) var slotByID: [UInt64: UInt32] = [:]
    /// Free slots for reuse.
    private var freeSlots: [UInt32] = []
    /// Root slots, unordered.
    private(set) var roots: [UInt32] = []
    /// Nodes stored (placeholders included).
    private(set) var count = 0
    /// Objects stored over all nodes.
    private(set) var objectCount = 0

    /// The slot of node `id`, if stored.
    @inline(__always)
    func slot(of id: UInt64) -> UInt32? {
        slotByID[id]
    }

    /// Stores a new node under `parent` (``noSlot`` for a root) and returns its slot. The id must
    /// not be stored yet.
    mutating func insert(
        id: UInt64, parent: UInt32, kind: UInt32, name: UInt32, attachedAt: UInt64, phase: NodePhase
    ) -> UInt32 {
        var node = NodeSlot.free
        node.id = id
        node.kind = kind
        node.name = name
        node.attachedAt = attachedAt
        node.phase = phase
        node.parent = parent
        let slot: UInt32
        if let reused = freeSlots.popLast() {
            slot = reused
        } else {
            slot = UInt32(truncatingIfNeeded: slots.count)
            slots.append(.free)
        }
        if parent == Self.noSlot {
            node.indexInParent = UInt32(truncatingIfNeeded: roots.count)
            roots.append(slot)
        } else {
            node.depth = slots[Int(parent)].depth &+ 1
            node.indexInParent = UInt32(truncatingIfNeeded: slots[Int(parent)].children.count)
            slots[Int(parent)].children.append(slot)
        }
        slots[Int(slot)] = node
        slotByID[id] = slot
        count += 1
        return slot
    }

    /// Removes a node that has no children (a node with children is left alone: returns false).
    @discardableResult
    mutating func remove(_ slot: UInt32) -> Bool {
        guard slots[Int(slot)].children.isEmpty else { return false }
        unlinkFromParent(slot)
        slotByID[slots[Int(slot)].id] = nil
        objectCount -= slots[Int(slot)].objects.count
        slots[Int(slot)] = .free
        freeSlots.append(slot)
        count -= 1
        return true
    }

    /// Removes `slot` and then its ancestors, while each is a placeholder (an anchor or an
    /// unknown parent) without children; returns the ids removed, nearest first.
    mutating func removeEmptyPlaceholders(from slot: UInt32) -> [UInt64] {
        var removedIDs: [UInt64] = []
        var current = slot
        while current != Self.noSlot, slots[Int(current)].isPlaceholder, slots[Int(current)].children.isEmpty {
            let next = slots[Int(current)].parent
            removedIDs.append(slots[Int(current)].id)
            remove(current)
            current = next
        }
        return removedIDs
    }

    /// Moves a root under `parent`. Depths below it are not updated: call ``recomputeDepths()``.
    mutating func attachRoot(_ slot: UInt32, under parent: UInt32) {
        guard slots[Int(slot)].parent == Self.noSlot, parent != slot else { return }
        unlinkFromParent(slot)
        slots[Int(slot)].parent = parent
        slots[Int(slot)].indexInParent = UInt32(truncatingIfNeeded: slots[Int(parent)].children.count)
        slots[Int(parent)].children.append(slot)
    }

    /// Sets every node's depth from its position (O(n)).
    mutating func recomputeDepths() {
        recomputeDepths(startingAt: roots.map { ($0, 0) })
    }

    /// Sets the depths in the subtree of `slot` from its parent's depth (O(subtree)).
    mutating func recomputeDepths(below slot: UInt32) {
        let parent = slots[Int(slot)].parent
        recomputeDepths(startingAt: [(slot, parent == Self.noSlot ? 0 : slots[Int(parent)].depth &+ 1)])
    }

    private mutating func recomputeDepths(startingAt start: [(UInt32, UInt32)]) {
        var stack = start
        while let (slot, depth) = stack.popLast() {
            slots[Int(slot)].depth = depth
            for child in slots[Int(slot)].children { stack.append((child, depth &+ 1)) }
        }
    }

    /// Adds an object to a node; false if its index is already used.
    mutating func addObject(_ object: ObjectSlot, to slot: UInt32) -> Bool {
        guard let position = slots[Int(slot)].objectInsertionPoint(object.index) else { return false }
        if position == slots[Int(slot)].objects.count {
            slots[Int(slot)].objects.append(object)
        } else {
            slots[Int(slot)].objects.insert(object, at: position)
        }
        if object.isAlive { slots[Int(slot)].aliveCount &+= 1 }
        objectCount += 1
        return true
    }

    /// Marks an object released; false if the node has no such object alive.
    mutating func releaseObject(_ index: UInt16, of slot: UInt32) -> Bool {
        guard let position = slots[Int(slot)].objectPosition(index),
            slots[Int(slot)].objects[position].isAlive
        else { return false }
        slots[Int(slot)].objects[position].isAlive = false
        slots[Int(slot)].aliveCount &-= 1
        return true
    }

    /// Whether `ancestor` is `slot` or one of its ancestors (O(depth)).
    func isAncestor(_ ancestor: UInt32, of slot: UInt32) -> Bool {
        var current = slot
        while current != Self.noSlot {
            if current == ancestor { return true }
            current = slots[Int(current)].parent
        }
        return false
    }

    /// The slots in use, in slot order.
    var usedSlots: [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(count)
        for index in slots.indices where slots[index].id != 0 { result.append(UInt32(truncatingIfNeeded: index)) }
        return result
    }

    /// The roots, or the children of `slot`, sorted by id (attach order).
    func sortedChildren(of slot: UInt32?) -> [UInt32] {
        let list = slot.map { slots[Int($0)].children } ?? roots
        var sorted = list
        sorted.sort { slots[Int($0)].id < slots[Int($1)].id }
        return sorted
    }

    private mutating func unlinkFromParent(_ slot: UInt32) {
        let parent = slots[Int(slot)].parent
        let position = Int(slots[Int(slot)].indexInParent)
        let moved: UInt32?
        if parent == Self.noSlot {
            moved = Self.swapRemove(position, from: &roots)
        } else {
            moved = Self.swapRemove(position, from: &slots[Int(parent)].children)
        }
        if let moved { slots[Int(moved)].indexInParent = UInt32(truncatingIfNeeded: position) }
        slots[Int(slot)].parent = Self.noSlot
    }

    /// Removes `list[position]` by moving the last element into its place; returns the moved
    /// element, if any moved.
    private static func swapRemove(_ position: Int, from list: inout [UInt32]) -> UInt32? {
        guard position < list.count else { return nil }
        let last = list.removeLast()
        guard position < list.count else { return nil }
        list[position] = last
        return last
    }
}
