/// The tracker's book of nodes: a plain value type with no locking and no clock, so that its
/// rules (which events a change produces, when a record may be forgotten) are tested directly.
///
/// A record lives from attach until the node is detached and every one of its objects has been
/// released; detached nodes with live objects stay, because they are the leak candidates that a
/// snapshot must include.
///
/// Records sit in one dense array with an id-to-slot index; every change goes through the array
/// element in place (reading a record out of a dictionary would copy it and its arrays).
struct NodeRegistry {
    struct Object {
        // In this order, the object takes 64 bytes: the address fits before the weak
        // reference, and the flag after its optional's tag.
        var role: ObjectRole
        var typeName: String
        /// Where the object is, for the retainer analysis (never a reference: see
        /// ``ObfuscatedAddress``).
        var address: ObfuscatedAddress
        /// Set for objects that cannot report their own release; polled after detach.
        var weak: WeakReference?
        var isAlive: Bool
    }

    struct Record {
        var id: NodeID
        var parent: NodeID?
        var kind: NodeKind
        var name: String
        var state: NodeState?
        var attachedAt: UInt64
        var detachedAt: UInt64?
        var objects: [Object] = []
        var aliveCount = 0
        var children: [NodeID] = []
        var principalKey: ObfuscatedAddress?
        var origin = NodeOrigin.unknown
    }

    /// A weak-watched object of a detached node, polled until it is gone.
    struct PendingRelease: Hashable {
        var node: NodeID
        var index: UInt16
        /// The latest time the object is known to have been alive (its detach, then the start of
        /// each poll that found it): its release, once noticed, is stamped with this time, which
        /// is never later than the release itself.
        var aliveAt: UInt64
    }

    private var records: [Record] = []
    private var slots = NodeSlotTable()
    private(set) var pending: [PendingRelease] = []
    /// Principal objects (the one passed to `attach`) by identity, for parent look-ups by object.
    private var principals: [ObfuscatedAddress: (object: WeakReference, node: NodeID)] = [:]
    /// Detached nodes that had an object alive at their detach and whose holders have not been
    /// explained, in detach order (detach times never decrease); entries before `unexplainedHead`
    /// are done. Entries whose node was released since are dropped as they are met.
    private var unexplained: [(node: NodeID, detachedAt: UInt64)] = []
    private var unexplainedHead = 0
    /// The length at which released entries are swept out of `unexplained`.
    private var unexplainedSweepAt = 64

    var count: Int { records.count }

    func contains(_ node: NodeID) -> Bool { slots[node.rawValue] != nil }

    func isAttached(_ node: NodeID) -> Bool { slots[node.rawValue].map { records[$0].detachedAt == nil } ?? false }

    /// The node registered for the principal object with identity `key`, with a weak
    /// reference to that object: the caller checks that it is still the same object, because an
    /// identity is reused once its object is gone.
    func principal(_ key: ObfuscatedAddress) -> (object: WeakReference, node: NodeID)? {
        principals[key]
    }

    mutating func attach(
        _ node: NodeID, parent: NodeID?, kind: NodeKind, name: String, time: UInt64, principal: WeakReference?,
        origin: NodeOrigin = .unknown
    ) -> DebugInformation.Change {
        var record = Record(id: node, parent: parent, kind: kind, name: name, attachedAt: time)
        record.origin = origin
        if let principal {
            principals[principal.address] = (principal, node)
            record.principalKey = principal.address
        }
        slots.set(node.rawValue, to: records.count)
        records.append(record)
        if let parent, let parentSlot = slots[parent.rawValue] { records[parentSlot].children.append(node) }
        return .attached(parent: parent, kind: kind, name: name)
    }

    /// Adds an object; returns its index, or nil when the node is unknown or full.
    /// A node whose objects were all released after its detach (kept only to name a ghost's path)
    /// takes no new object: it has been judged released.
    mutating func addObject(
        to node: NodeID, role: ObjectRole, typeName: String, weak: WeakReference?, address: ObfuscatedAddress
    ) -> UInt16? {
        guard let slot = slots[node.rawValue], records[slot].objects.count < Int(UInt16.max),
            records[slot].detachedAt == nil || records[slot].aliveCount > 0
        else { return nil }
        let index = UInt16(records[slot].objects.count)
        records[slot].objects.append(Object(role: role, typeName: typeName, address: address, weak: weak, isAlive: true))
        records[slot].aliveCount += 1
        if let detachedAt = records[slot].detachedAt, weak != nil {
            pending.append(PendingRelease(node: node, index: index, aliveAt: detachedAt))
        }
        return index
    }

    /// Sets the node's state; returns its attach time, or nil when the node is unknown.
    mutating func setState(_ state: NodeState, of node: NodeID) -> UInt64? {
        guard let slot = slots[node.rawValue] else { return nil }
        records[slot].state = state
        return records[slot].attachedAt
    }

    /// Detaches `node` and, deepest first, any descendant still attached. Returns the ids in
    /// the order their `detached` events must be emitted.
    mutating func detach(_ node: NodeID, time: UInt64) -> [NodeID] {
        guard let slot = slots[node.rawValue], records[slot].detachedAt == nil else { return [] }
        var order: [NodeID] = []
        if !records[slot].children.isEmpty {
            for child in records[slot].children.reversed() { order += detach(child, time: time) }
        }
        // The recursion may have moved records; look the slot up again.
        guard let current = slots[node.rawValue] else { return order + [node] }
        records[current].detachedAt = time
        order.append(node)
        for index in records[current].objects.indices
        where records[current].objects[index].isAlive && records[current].objects[index].weak != nil {
            pending.append(PendingRelease(node: node, index: UInt16(index), aliveAt: time))
        }
        forgetIfReleased(node)
        for id in order {
            guard let slot = slots[id.rawValue], records[slot].aliveCount > 0 else { continue }
            noteUnexplained(id, detachedAt: time)
        }
        return order
    }

    /// Marks an object released. Returns its role and type name when this changed anything.
    mutating func release(_ node: NodeID, index: UInt16) -> (role: ObjectRole, typeName: String)? {
        guard let slot = slots[node.rawValue] else { return nil }
        let position = Int(index)
        guard position < records[slot].objects.count, records[slot].objects[position].isAlive else { return nil }
        records[slot].objects[position].isAlive = false
        records[slot].objects[position].weak = nil
        records[slot].aliveCount -= 1
        let released = (records[slot].objects[position].role, records[slot].objects[position].typeName)
        if records[slot].aliveCount == 0, records[slot].detachedAt != nil { forgetIfReleased(node) }
        return released
    }

    /// The weak references to check for pending objects still alive here. The caller checks
    /// them without the tracker's lock: loading a weak reference can end its object's life, and
    /// that object's `deinit` may call the tracker.
    func pendingReferences() -> [(entry: PendingRelease, reference: WeakReference?)] {
        pending.compactMap { entry in
            guard let slot = slots[entry.node.rawValue], Int(entry.index) < records[slot].objects.count,
                records[slot].objects[Int(entry.index)].isAlive
            else { return nil }
            return (entry, records[slot].objects[Int(entry.index)].weak)
        }
    }

    /// Applies a poll that started at `pollStart`: marks `gone` released, each stamped with the
    /// last time it was known alive; notes that the other polled entries were alive at
    /// `pollStart`; drops every entry no longer alive from the pending list. Returns what changed.
    mutating func applyDeallocated(
        _ gone: [PendingRelease], pollStart: UInt64
    ) -> [(node: NodeID, index: UInt16, role: ObjectRole, typeName: String, time: UInt64)] {
        let released = gone.compactMap { entry in
            release(entry.node, index: entry.index).map { (entry.node, entry.index, $0.role, $0.typeName, entry.aliveAt) }
        }
        pending.removeAll { entry in
            guard let slot = slots[entry.node.rawValue], Int(entry.index) < records[slot].objects.count else { return true }
            return !records[slot].objects[Int(entry.index)].isAlive
        }
        // Entries added after the poll began were not looked at: they keep their own time.
        for position in pending.indices where pending[position].aliveAt < pollStart {
            pending[position].aliveAt = pollStart
        }
        return released
    }

    /// The records as they are (a copy-on-write reference: cheap under the lock); build the
    /// snapshot from it with ``snapshotNodes(of:)`` after releasing the lock.
    var currentRecords: [Record] { records }

    /// Every record in attach order.
    func snapshotNodes() -> [NodeSnapshot] {
        Self.snapshotNodes(of: records)
    }

    /// The snapshot of `records`, in attach order.
    static func snapshotNodes(of records: [Record]) -> [NodeSnapshot] {
        records.sorted { $0.id < $1.id }.map { record in
            NodeSnapshot(
                id: record.id, parent: record.parent, kind: record.kind, name: record.name, state: record.state,
                attachedAt: record.attachedAt, detachedAt: record.detachedAt,
                objects: record.objects.enumerated().map { index, object in
                    ObjectSnapshot(
                        index: UInt16(index), role: object.role, typeName: object.typeName, isAlive: object.isAlive)
                }, origin: record.origin)
        }
    }

    /// Detached nodes that still have live objects, with their detach times.
    /// (A released ancestor kept only to name a ghost's path is not one of them.)
    func detachedAlive() -> [(node: NodeID, detachedAt: UInt64)] {
        records.compactMap { record in
            guard record.aliveCount > 0 else { return nil }
            return record.detachedAt.map { (record.id, $0) }
        }
    }

    // MARK: Retainer analysis

    /// The detach time of the earliest detached node that still has an object alive and whose
    /// holders have not been explained.
    mutating func oldestUnexplained() -> UInt64? {
        while unexplainedHead < unexplained.count {
            let entry = unexplained[unexplainedHead]
            if let slot = slots[entry.node.rawValue], records[slot].aliveCount > 0 { return entry.detachedAt }
            unexplainedHead += 1
        }
        return nil
    }

    /// Takes the detached nodes with an object alive, detached at or before `detachedBy`, whose
    /// holders have not been explained, oldest first, as long as their alive objects number at
    /// most `maxObjects` (always at least one node): they count as explained from now on.
    mutating func takeUnexplained(detachedBy: UInt64, maxObjects: Int) -> [NodeID] {
        var taken: [NodeID] = []
        var objects = 0
        while unexplainedHead < unexplained.count {
            let entry = unexplained[unexplainedHead]
            guard let slot = slots[entry.node.rawValue], records[slot].aliveCount > 0 else {
                unexplainedHead += 1
                continue
            }
            guard entry.detachedAt <= detachedBy, taken.isEmpty || objects + records[slot].aliveCount <= maxObjects else {
                break
            }
            objects += records[slot].aliveCount
            taken.append(entry.node)
            unexplainedHead += 1
        }
        if unexplainedHead == unexplained.count {
            unexplained.removeAll(keepingCapacity: true)
            unexplainedHead = 0
        }
        return taken
    }

    private mutating func noteUnexplained(_ node: NodeID, detachedAt: UInt64) {
        if unexplained.count >= unexplainedSweepAt {
            // Leaks that nobody explains (no collector of version 2) must not make the list grow
            // with every detach behind them: keep only the nodes still alive, in place.
            let (slots, records) = (self.slots, self.records)
            unexplained.removeFirst(unexplainedHead)
            unexplained.removeAll { entry in slots[entry.node.rawValue].map { records[$0].aliveCount == 0 } ?? true }
            unexplainedHead = 0
            unexplainedSweepAt = max(64, unexplained.count * 2)
        }
        unexplained.append((node, detachedAt))
    }

    /// Forgets a detached, fully released node, unless detached nodes still hang below it: a
    /// released ancestor stays (so that a snapshot names a ghost's whole path) until its last
    /// descendant goes, and then goes with it.
    private mutating func forgetIfReleased(_ node: NodeID) {
        guard let slot = slots[node.rawValue], records[slot].detachedAt != nil, records[slot].aliveCount == 0,
            records[slot].children.isEmpty
        else { return }
        let parent = records[slot].parent
        if let parent, let parentSlot = slots[parent.rawValue] {
            records[parentSlot].children.removeAll { $0 == node }
        }
        if let key = records[slot].principalKey, principals[key]?.node == node { principals[key] = nil }
        // Swap-remove: the last record takes the freed slot.
        let last = records.count - 1
        if slot != last {
            records.swapAt(slot, last)
            slots.set(records[slot].id.rawValue, to: slot)
        }
        records.removeLast()
        slots.remove(node.rawValue)
        if let parent { forgetIfReleased(parent) }
    }
}

/// A weak reference to any object, for watching objects that cannot report their own release.
///
/// It is only ever nil-checked or compared by identity, never used to call the object, and a
/// weak load is atomic in the Swift runtime: that is what makes it safe to share.
public struct WeakReference: @unchecked Sendable {
    private weak var referent: AnyObject?
    /// Where the object was when it was referenced (kept obfuscated, so that this reference
    /// never reads as a strong one to the retainer analysis).
    let address: ObfuscatedAddress

    /// References `object` weakly.
    public init(_ object: AnyObject) {
        self.referent = object
        self.address = ObfuscatedAddress(object)
    }

    /// The identity of the object when it was referenced.
    public var key: ObjectIdentifier { unsafeBitCast(address.address, to: ObjectIdentifier.self) }

    /// Whether the object has been deallocated.
    public var isReleased: Bool { referent == nil }

    /// Whether the reference still points at `object` (identities are reused after release).
    public func refers(to object: AnyObject) -> Bool { referent === object }
}
