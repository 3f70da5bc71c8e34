import Synchronization

/// The tracker's book of nodes: a plain value type with no locking and no clock, so that its
/// rules (which events a change produces, when a record may be forgotten) are tested directly.
///
/// A record lives from attach until the node is detached and every one of its objects has been
/// released; detached nodes with live objects stay, because they are the leak candidates that a
/// snapshot must include.
///
/// The layout is dense, because a host keeps one record per live node (target: 128 bytes a node
/// with four objects, docs/BENCHMARKS.md): records are fixed-size values in one chunked array
/// whose slots stay put (freed slots are reused); what nodes share (name, kind, origin; an object's
/// role and type name) is interned once and referred to by id; a node's objects sit in one
/// block of a shared pool (12 bytes an object); children are linked through their records
/// instead of arrays; the id-to-slot table holds slots only and compares ids in the records.
/// Weak references, principal objects and detach bookkeeping live in side tables for the nodes
/// that have them.
package struct NodeRegistry: Sendable {
    /// One node, 56 bytes, no reference counted fields (copying the array copies bytes).
    struct Node {
        /// The node's id; 0 marks a free slot.
        var id: UInt64 = 0
        /// The parent's id; 0 for a root.
        var parent: UInt64 = 0
        var attachedAt: UInt64 = 0
        /// Valid when ``isDetached``.
        var detachedAt: UInt64 = 0
        /// The first object's position in the object pool.
        var objectStart: UInt32 = 0
        /// The ``NodeDescriptor`` id.
        var descriptor: UInt32 = 0
        /// The last attached child's slot + 1; 0 when none.
        var lastChild: UInt32 = 0
        /// The slot + 1 of the sibling attached before this one under the same parent; 0 when none.
        var previousSibling: UInt32 = 0
        var objectCount: UInt16 = 0
        var aliveCount: UInt16 = 0
        /// The ``NodeState`` raw value; 0 when none was reported.
        var state: UInt8 = 0
        var flags: UInt8 = 0
        /// The object block holds `1 << blockClass` objects.
        var blockClass: UInt8 = 0

        static let detachedFlag: UInt8 = 1
        static let principalFlag: UInt8 = 2

        var isDetached: Bool { flags & Self.detachedFlag != 0 }
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

    // MARK: Storage

    private var nodes = ChunkedArray<Node>()
    /// The free slots, as a list through their records (a free slot's record has id 0, and its
    /// `parent` holds the next free slot + 1): the first one's slot + 1, 0 when none. (An array
    /// of them cost a uniqueness check and a call at each attach and each forgotten node.)
    private var freeSlotHead: UInt64 = 0
    package private(set) var count = 0
    /// Id-to-slot: open addressing with linear probing and a multiplicative hash; a bucket
    /// holds slot + 1 (0: empty), and the id is compared in the record. Deletion shifts the
    /// following entries back, so no tombstones build up.
    private var buckets: [UInt32] = Array(repeating: 0, count: 16)
    /// The node attached last and its slot (id 0: none): its objects, added right after it,
    /// find it without a probe.
    private var lastAttached: (id: UInt64, slot: Int) = (0, 0)

    /// Objects, by pool position: where each is (for the retainer analysis; never a
    /// reference: see ``ObfuscatedAddress``) and a word with its ``ObjectDescriptor`` id and flags.
    private var objectAddresses = ChunkedArray<ObfuscatedAddress>()
    private var objectWords = ChunkedArray<UInt32>()
    /// The free object blocks of each class (a block of class k holds `1 << k` objects), as lists
    /// through the blocks' first words (a free block's first word holds the next free block's
    /// position + 1): each first one's position + 1, 0 when none. Nothing reads the words of a
    /// block that no record holds.
    private var freeBlockHeads = InlineArray<17, UInt32>(repeating: 0)
    private static let aliveBit: UInt32 = 1 << 31
    private static let weakBit: UInt32 = 1 << 30
    private static let descriptorMask: UInt32 = (1 << 30) - 1

    private var nodeDescriptors = InternTable<NodeDescriptor>()
    private var objectDescriptors = InternTable<ObjectDescriptor>()
    /// Tells this registry's descriptor ids from another's (copies share it: they share ids).
    private let identity = registryIdentities.wrappingAdd(1, ordering: .relaxed).newValue

    /// What a cache of facts keyed by descriptor id must match to stay valid: the registry, and
    /// how many times each descriptor table has swept (a sweep may give an id to another
    /// descriptor; nothing else changes what an id means).
    package var descriptorEpoch: DescriptorEpoch {
        DescriptorEpoch(registry: identity, nodeSweeps: nodeDescriptors.sweeps, objectSweeps: objectDescriptors.sweeps)
    }
    private var objectKeys = ObjectKeyCache(sweeps: 0)
    private var nodeKeys = NodeKeyCache(sweeps: 0)

    /// What picks a node's descriptor, in words: the principal's type (when the name is its),
    /// the bits of the name and kind strings, the site's words, the test's id.
    private struct NodeKey: Equatable, Sendable {
        var type: UInt
        var name: (UInt64, UInt64)
        var kind: (UInt64, UInt64)
        var site: (UInt, UInt)
        var test: UInt64

        static func == (lhs: NodeKey, rhs: NodeKey) -> Bool {
            lhs.type == rhs.type && lhs.name == rhs.name && lhs.kind == rhs.kind && lhs.site == rhs.site
                && lhs.test == rhs.test
        }

        func entry(of size: Int) -> Int {
            let mixed = UInt64(type) ^ name.0 ^ name.1 ^ kind.0 ^ kind.1 ^ UInt64(site.0) ^ UInt64(site.1) ^ test
            return Int(truncatingIfNeeded: (mixed &* 0x9E37_79B9_7F4A_7C15) >> 32) & (size - 1)
        }
    }

    /// Recent node keys and their descriptor ids; emptied when the descriptor table sweeps.
    private struct NodeKeyCache: Sendable {
        static var size: Int { 16 }
        var sweeps: Int
        var keys = [NodeKey?](repeating: nil, count: size)
        /// Held so that the name's and kind's bits stay their strings'.
        var held = [(String?, NodeKind)](repeating: (nil, NodeKind(rawValue: "")), count: size)
        var ids = [UInt32](repeating: 0, count: size)
    }

    /// Recent (type, role) pairs and their object descriptor ids; emptied when the descriptor
    /// table sweeps (an id may then be given to another descriptor).
    private struct ObjectKeyCache: Sendable {
        static var size: Int { 64 }
        var sweeps: Int
        /// A pair and its id, read together (one bounds check, one cache line).
        struct Entry {
            /// The type's metadata address; 0 for an empty entry.
            var type: UInt = 0
            var roleBits: (UInt64, UInt64) = (0, 0)
            var id: UInt32 = 0
        }
        var entries = [Entry](repeating: Entry(), count: size)
        /// Held so that a role's bits stay its string's.
        var roles = [ObjectRole](repeating: ObjectRole(rawValue: ""), count: size)
    }
    /// The weak references of objects that cannot report their own release, by pool position.
    private var weakReferences: [UInt32: WeakReference] = [:]

    private(set) var pending: [PendingRelease] = []
    /// Principal objects (the one passed to `attach`) by identity, for parent look-ups by object.
    private var principals: [ObfuscatedAddress: (object: WeakReference, node: NodeID)] = [:]
    /// The principal's identity of each node that has one.
    private var principalKeys: [UInt64: ObfuscatedAddress] = [:]
    /// Detached nodes that had an object alive at their detach and whose holders have not been
    /// explained, in detach order (detach times never decrease); entries before `unexplainedHead`
    /// are done. Entries whose node was released since are dropped as they are met.
    private var unexplained: [(node: NodeID, detachedAt: UInt64)] = []
    private var unexplainedHead = 0
    /// The length at which released entries are swept out of `unexplained`.
    private var unexplainedSweepAt = 64
    /// The node noted last, kept apart from `unexplained` until another is noted or the list is
    /// read: most nodes are released right after their detach, and then leave without the list
    /// being touched (an append and a removal cost about 45 instructions a node).
    private var lastUnexplained: (node: NodeID, detachedAt: UInt64)?

    /// How many node and object descriptors are kept (used or awaiting a sweep).
    var descriptorCounts: (nodes: Int, objects: Int) { (nodeDescriptors.count, objectDescriptors.count) }

    /// Makes the tables of records and objects this value's own, written from now on without
    /// asking whether a copy shares them: for a holder that never copies the registry but through
    /// ``readingCopy()`` (the tracker, which applies every change an app makes to it; a debug
    /// build checks the promise).
    mutating func holdTablesAlone() {
        nodes.holdTableAlone()
        objectAddresses.holdTableAlone()
        objectWords.holdTableAlone()
    }

    /// A copy to read elsewhere (a snapshot, the retainer analysis) for a holder of
    /// ``holdTablesAlone()``: it shares the records and objects, each side copying a chunk of them
    /// before writing it, but no table.
    mutating func readingCopy() -> NodeRegistry {
        var copy = self
        copy.nodes = nodes.readingCopy()
        copy.objectAddresses = objectAddresses.readingCopy()
        copy.objectWords = objectWords.readingCopy()
        return copy
    }

    func contains(_ node: NodeID) -> Bool { slot(of: node.rawValue) != nil }

    func isAttached(_ node: NodeID) -> Bool { slot(of: node.rawValue).map { !nodes[$0].isDetached } ?? false }

    /// The node registered for the principal object with identity `key`, with a weak
    /// reference to that object: the caller checks that it is still the same object, because an
    /// identity is reused once its object is gone.
    func principal(_ key: ObfuscatedAddress) -> (object: WeakReference, node: NodeID)? {
        principals[key]
    }

    // MARK: Changes

    /// Registers a node; `expectedObjects` sizes its first block of objects.
    mutating func attach(
        _ node: NodeID, parent: NodeID?, kind: NodeKind, name: String, time: UInt64, principal: WeakReference?,
        origin: NodeOrigin = .unknown, expectedObjects: Int = 1
    ) -> DebugInformation.Change {
        sweepNodeDescriptorsIfDue()
        let descriptor = NodeDescriptor(name: name, kind: kind, origin: origin)
        let id = nodeDescriptors.id(of: descriptor, hint: descriptor.hint)
        let slot = attach(node, parent: parent, descriptor: id, time: time, expectedObjects: expectedObjects)
        if let principal {
            principals[principal.address] = (principal, node)
            principalKeys[node.rawValue] = principal.address
            nodes[slot].flags |= Node.principalFlag
        }
        return .attached(parent: parent, kind: kind, name: name)
    }

    /// Registers a node whose name is `name`, or else its principal's type's name (looked up
    /// only for a type, kind and origin not met recently: applying an attach compares a few
    /// words instead of hashing its strings). Returns the id of its descriptor (for
    /// ``nodeDescriptor(_:)``).
    mutating func attach(
        _ node: NodeID, parent: NodeID?, type: AnyObject.Type, name: String?, kind: NodeKind, time: UInt64,
        origin: NodeOrigin, expectedObjects: Int
    ) -> UInt32 {
        sweepNodeDescriptorsIfDue()
        let id = nodeDescriptorID(type: type, name: name, kind: kind, origin: origin)
        _ = attach(node, parent: parent, descriptor: id, time: time, expectedObjects: expectedObjects)
        return id
    }

    /// The name, kind and origin of a node's descriptor.
    package func nodeDescriptor(_ id: UInt32) -> NodeDescriptor {
        nodeDescriptors[id]
    }

    /// Inlined, its miss outlined (as ``objectDescriptorID(type:role:)``).
    @inline(__always)
    private mutating func nodeDescriptorID(type: AnyObject.Type, name: String?, kind: NodeKind, origin: NodeOrigin)
        -> UInt32
    {
        guard let site = origin.site.map({ $0.words }) ?? (0, 0) else {
            let descriptor = NodeDescriptor(
                name: name ?? TypeNameCache.shared.name(of: type), kind: kind, origin: origin)
            return nodeDescriptors.id(of: descriptor, hint: descriptor.hint)
        }
        if nodeKeys.sweeps != nodeDescriptors.sweeps { nodeKeys = NodeKeyCache(sweeps: nodeDescriptors.sweeps) }
        let key = NodeKey(
            type: name == nil ? UInt(bitPattern: ObjectIdentifier(type)) : 0,
            name: name.map { unsafeBitCast($0, to: (UInt64, UInt64).self) } ?? (0, 0),
            kind: unsafeBitCast(kind.rawValue, to: (UInt64, UInt64).self), site: site, test: origin.test?.id ?? 0)
        let entry = key.entry(of: NodeKeyCache.size)
        if let cached = nodeKeys.keys[entry], cached == key { return nodeKeys.ids[entry] }
        return nodeDescriptorIDNotCached(type: type, name: name, kind: kind, origin: origin, key: key, entry: entry)
    }

    @inline(never)
    private mutating func nodeDescriptorIDNotCached(
        type: AnyObject.Type, name: String?, kind: NodeKind, origin: NodeOrigin, key: NodeKey, entry: Int
    ) -> UInt32 {
        let descriptor = NodeDescriptor(name: name ?? TypeNameCache.shared.name(of: type), kind: kind, origin: origin)
        let id = nodeDescriptors.id(of: descriptor, hint: descriptor.hint)
        nodeKeys.keys[entry] = key
        nodeKeys.held[entry] = (name, kind)
        nodeKeys.ids[entry] = id
        return id
    }

    private mutating func attach(
        _ node: NodeID, parent: NodeID?, descriptor: UInt32, time: UInt64, expectedObjects: Int
    ) -> Int {
        var record = Node()
        record.id = node.rawValue
        record.parent = parent?.rawValue ?? 0
        record.attachedAt = time
        record.descriptor = descriptor
        record.blockClass = Self.blockClass(for: expectedObjects)
        record.objectStart = allocateBlock(class: record.blockClass)
        // Linked under its parent in the record it is written with (one write fewer).
        let parentSlot = parent.flatMap { self.slot(of: $0.rawValue) }
        if let parentSlot { record.previousSibling = nodes[parentSlot].lastChild }
        let slot: Int
        if freeSlotHead != 0 {
            slot = Int(truncatingIfNeeded: freeSlotHead &- 1)
            freeSlotHead = nodes[slot].parent
            nodes[slot] = record
        } else {
            slot = nodes.count
            nodes.append(record)
        }
        count += 1
        insertSlot(slot, for: node.rawValue)
        lastAttached = (node.rawValue, slot)
        if let parentSlot { nodes[parentSlot].lastChild = UInt32(slot + 1) }
        return slot
    }

    /// Adds an object; returns its index, or nil when the node is unknown or full.
    /// A node whose objects were all released after its detach (kept only to name a ghost's path)
    /// takes no new object: it has been judged released.
    mutating func addObject(
        to node: NodeID, role: ObjectRole, typeName: String, weak: WeakReference?, address: ObfuscatedAddress
    ) -> UInt16? {
        sweepObjectDescriptorsIfDue()
        guard let slot = objectSlot(for: node) else { return nil }
        let descriptor = ObjectDescriptor(role: role, typeName: typeName)
        let id = objectDescriptors.id(of: descriptor, hint: descriptor.hint)
        let index = addObject(in: slot, descriptor: id, address: address)
        if let weak {
            let position = nodes[slot].objectStart &+ UInt32(index)
            objectWords[Int(position)] |= Self.weakBit
            weakReferences[position] = weak
            if nodes[slot].isDetached {
                pending.append(PendingRelease(node: node, index: index, aliveAt: nodes[slot].detachedAt))
            }
        }
        return index
    }

    /// Adds an object that reports its own release, of `type` in `role`; returns its index and
    /// its descriptor's id (for ``objectDescriptor(_:)``), or nil when the node is unknown or
    /// full. The type's name is looked up only for a type and role not met recently: the
    /// applying of an attach's objects, one of the writer's most frequent steps, compares two
    /// words instead of hashing a name.
    mutating func addObject(
        to node: NodeID, type: AnyObject.Type, role: ObjectRole, address: ObfuscatedAddress
    ) -> (index: UInt16, descriptor: UInt32)? {
        sweepObjectDescriptorsIfDue()
        guard let slot = objectSlot(for: node) else { return nil }
        let id = objectDescriptorID(type: type, role: role)
        return (addObject(in: slot, descriptor: id, address: address), id)
    }

    /// Objects being added to one node together (an attach's): the node's record, read once
    /// and written back once by ``finishAdding(_:)``.
    struct AddingObjects {
        fileprivate let slot: Int
        fileprivate var record: Node
        /// The node's block of objects, written in place (nil when it spans two chunks): an
        /// added object then costs no check of the tables. Valid until the block grows.
        fileprivate var block: (addresses: UnsafeMutablePointer<ObfuscatedAddress>, words: UnsafeMutablePointer<UInt32>)?
    }

    /// Begins adding objects that report their own release to `node` (``add(_:type:role:address:)``
    /// for each, then ``finishAdding(_:)``); nil when the node is unknown or may take none.
    @inline(__always)
    mutating func beginAdding(to node: NodeID) -> AddingObjects? {
        sweepObjectDescriptorsIfDue()
        // ``objectSlot(for:)``'s test on the record read once.
        guard let slot = slot(of: node.rawValue) else { return nil }
        let record = nodes[slot]
        guard record.objectCount < UInt16.max, !record.isDetached || record.aliveCount > 0 else { return nil }
        return AddingObjects(slot: slot, record: record, block: writableBlock(of: record))
    }

    /// The objects of `record`'s block, to be written in place, when it lies in one chunk.
    @inline(__always)
    private mutating func writableBlock(
        of record: Node
    ) -> (addresses: UnsafeMutablePointer<ObfuscatedAddress>, words: UnsafeMutablePointer<UInt32>)? {
        let (start, length) = (Int(record.objectStart), 1 &<< Int(record.blockClass))
        guard let addresses = objectAddresses.writableRun(at: start, length: length),
            let words = objectWords.writableRun(at: start, length: length)
        else { return nil }
        return (addresses, words)
    }

    /// Adds an object of `type` in `role` to the node of `adding`; returns its index and its
    /// descriptor's id (for ``objectDescriptor(_:)``), or nil when the node is full.
    @inline(__always)
    mutating func add(
        _ adding: inout AddingObjects, type: AnyObject.Type, role: ObjectRole, address: ObfuscatedAddress
    ) -> (index: UInt16, descriptor: UInt32)? {
        let index = adding.record.objectCount
        guard index < UInt16.max else { return nil }
        let id = objectDescriptorID(type: type, role: role)
        // Wrapping arithmetic: the counts are bounded (an index below UInt16.max, a block class
        // at most 16), and the checked forms cost a third of an added object's work.
        if Int(index) == 1 &<< Int(adding.record.blockClass) {
            nodes[adding.slot] = adding.record
            growBlock(of: adding.slot)
            adding.record = nodes[adding.slot]
            adding.block = writableBlock(of: adding.record)
        }
        if let block = adding.block {
            block.addresses[Int(index)] = address
            block.words[Int(index)] = id | Self.aliveBit
        } else {
            let position = Int(adding.record.objectStart &+ UInt32(index))
            objectAddresses[position] = address
            objectWords[position] = id | Self.aliveBit
        }
        adding.record.objectCount = index &+ 1
        adding.record.aliveCount &+= 1
        return (index, id)
    }

    /// Writes back the record of the node that `adding` added objects to.
    @inline(__always)
    mutating func finishAdding(_ adding: AddingObjects) {
        nodes[adding.slot] = adding.record
    }

    /// The slot of `node` if it may take another object. Inlined: called on its own, it ran on a
    /// copy of the whole registry (336 bytes) that the writer's loop made for each added object.
    @inline(__always)
    private func objectSlot(for node: NodeID) -> Int? {
        guard let slot = slot(of: node.rawValue),
            nodes[slot].objectCount < UInt16.max,
            !nodes[slot].isDetached || nodes[slot].aliveCount > 0
        else { return nil }
        return slot
    }

    /// Adds an object that reports its own release (the caller adds a weak reference's
    /// bookkeeping).
    private mutating func addObject(in slot: Int, descriptor: UInt32, address: ObfuscatedAddress) -> UInt16 {
        var node = nodes[slot]
        let index = node.objectCount
        if Int(index) == 1 &<< Int(node.blockClass) {
            growBlock(of: slot)
            node = nodes[slot]
        }
        let position = Int(node.objectStart &+ UInt32(index))
        objectAddresses[position] = address
        objectWords[position] = descriptor | Self.aliveBit
        node.objectCount = index &+ 1
        node.aliveCount &+= 1
        nodes[slot] = node
        return index
    }

    /// The id of the descriptor of `type` in `role`, counting one more use: from the small cache
    /// of recent pairs when there (a role is compared by its string's bits, which are the same
    /// string's while the cache holds it), else by the type's name.
    /// Inlined, its miss outlined: called once per added object, its prologue and epilogue
    /// cost a quarter of a hit.
    @inline(__always)
    private mutating func objectDescriptorID(type: AnyObject.Type, role: ObjectRole) -> UInt32 {
        if objectKeys.sweeps != objectDescriptors.sweeps { objectKeys = ObjectKeyCache(sweeps: objectDescriptors.sweeps) }
        let typeBits = UInt(bitPattern: ObjectIdentifier(type))
        let roleBits = unsafeBitCast(role.rawValue, to: (UInt64, UInt64).self)
        // Two ways: the pair's entry and its neighbour, so that two pairs that meet on an entry
        // do not evict each other on every node.
        let mixed = (UInt64(typeBits) &* 0x9E37_79B9_7F4A_7C15) ^ (roleBits.0 &* 0xC2B2_AE3D_27D4_EB4F) ^ roleBits.1
        let home = Int(truncatingIfNeeded: (mixed &* 0x9E37_79B9_7F4A_7C15) >> 58)
        var entry = home
        for _ in 0..<2 {
            let cached = objectKeys.entries[entry]
            if cached.type == typeBits, cached.roleBits == roleBits { return cached.id }
            entry ^= 1
        }
        return objectDescriptorIDNotCached(type: type, role: role, typeBits: typeBits, roleBits: roleBits, home: home)
    }

    @inline(never)
    private mutating func objectDescriptorIDNotCached(
        type: AnyObject.Type, role: ObjectRole, typeBits: UInt, roleBits: (UInt64, UInt64), home: Int
    ) -> UInt32 {
        let descriptor = ObjectDescriptor(role: role, typeName: TypeNameCache.shared.name(of: type))
        let id = objectDescriptors.id(of: descriptor, hint: descriptor.hint)
        let entry = objectKeys.entries[home].type == 0 || objectKeys.entries[home ^ 1].type != 0 ? home : home ^ 1
        objectKeys.entries[entry] = ObjectKeyCache.Entry(type: typeBits, roleBits: roleBits, id: id)
        objectKeys.roles[entry] = role
        return id
    }

    /// The role and type name of an object's descriptor.
    package func objectDescriptor(_ id: UInt32) -> ObjectDescriptor {
        objectDescriptors[id]
    }

    /// Sets the node's state; returns its attach time, or nil when the node is unknown.
    @inline(__always)
    mutating func setState(_ state: NodeState, of node: NodeID) -> UInt64? {
        guard let slot = slot(of: node.rawValue) else { return nil }
        return Self.set(state, in: &nodes[slot])
    }

    /// Marks a record detached at `time`, in one access to it.
    @inline(__always)
    private static func markDetached(_ record: inout Node, at time: UInt64) {
        record.flags |= Node.detachedFlag
        record.detachedAt = time
    }

    /// Sets a record's state and returns its attach time, in one access to the record.
    @inline(__always)
    private static func set(_ state: NodeState, in record: inout Node) -> UInt64 {
        record.state = state.rawValue
        return record.attachedAt
    }

    /// Detaches `node` and, deepest first, any descendant still attached. Returns the ids in
    /// the order their `detached` events must be emitted.
    mutating func detach(_ node: NodeID, time: UInt64) -> [NodeID] {
        var order: [NodeID] = []
        detach(node, time: time, into: &order)
        return order
    }

    /// ``detach(_:time:)``, appending the ids to `order` (a buffer the caller reuses).
    mutating func detach(_ node: NodeID, time: UInt64, into order: inout [NodeID]) {
        guard let slot = slot(of: node.rawValue), !nodes[slot].isDetached else { return }
        let first = order.count
        if nodes[slot].lastChild != 0 {
            // Last attached first; the ids are taken before any of them changes the links.
            var children: [UInt64] = []
            var child = nodes[slot].lastChild
            while child != 0 {
                children.append(nodes[Int(child - 1)].id)
                child = nodes[Int(child - 1)].previousSibling
            }
            for child in children { detach(NodeID(rawValue: child), time: time, into: &order) }
        }
        guard let current = self.slot(of: node.rawValue) else {
            order.append(node)
            return
        }
        Self.markDetached(&nodes[current], at: time)
        order.append(node)
        let start = Int(nodes[current].objectStart)
        for index in 0..<Int(nodes[current].objectCount)
        where objectWords[start + index] & (Self.aliveBit | Self.weakBit) == Self.aliveBit | Self.weakBit {
            pending.append(PendingRelease(node: node, index: UInt16(index), aliveAt: time))
        }
        // Forgotten at once when nothing of it is alive and nothing hangs below it.
        if nodes[current].aliveCount == 0, nodes[current].lastChild == 0 { forget(current) }
        for id in order[first...] {
            guard let slot = self.slot(of: id.rawValue), nodes[slot].aliveCount > 0 else { continue }
            noteUnexplained(id, detachedAt: time)
        }
    }

    /// Marks an object released. Returns its role and type name when this changed anything.
    mutating func release(_ node: NodeID, index: UInt16) -> (role: ObjectRole, typeName: String)? {
        releaseObject(node, index: index).map { id in
            let descriptor = objectDescriptors[id]
            return (descriptor.role, descriptor.typeName)
        }
    }

    /// ``release(_:index:)``, giving the object's descriptor id rather than its names. They stay
    /// readable with ``objectDescriptor(_:)`` until the next attach or added object, even when
    /// this release was the descriptor's last use (the descriptor table sweeps only then).
    @inline(__always)
    mutating func releaseObject(_ node: NodeID, index: UInt16) -> UInt32? {
        guard let slot = slot(of: node.rawValue) else { return nil }
        // The record read once, its count written once.
        var record = nodes[slot]
        guard index < record.objectCount else { return nil }
        let position = record.objectStart &+ UInt32(index)
        let word = objectWords[Int(position)]
        guard word & Self.aliveBit != 0 else { return nil }
        if word & Self.weakBit != 0 { weakReferences[position] = nil }
        objectWords[Int(position)] = word & Self.descriptorMask
        // It was alive: the count is at least 1.
        record.aliveCount &-= 1
        nodes[slot].aliveCount = record.aliveCount
        if record.aliveCount == 0, record.isDetached, record.lastChild == 0 { forget(slot) }
        return word & Self.descriptorMask
    }

    /// The weak references to check for pending objects still alive here. The caller checks
    /// them without the tracker's lock: loading a weak reference can end its object's life, and
    /// that object's `deinit` may call the tracker.
    func pendingReferences() -> [(entry: PendingRelease, reference: WeakReference?)] {
        pending.compactMap { entry in
            guard let position = alivePosition(entry.node, entry.index) else { return nil }
            return (entry, weakReferences[position])
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
        let registry = self
        pending.removeAll { entry in registry.alivePosition(entry.node, entry.index) == nil }
        // Entries added after the poll began were not looked at: they keep their own time.
        for position in pending.indices where pending[position].aliveAt < pollStart {
            pending[position].aliveAt = pollStart
        }
        return released
    }

    // MARK: Reading

    /// Every record in attach order.
    func snapshotNodes() -> [NodeSnapshot] {
        liveSlotsInAttachOrder().map { slot in
            let node = nodes[slot]
            let descriptor = nodeDescriptors[node.descriptor]
            let start = Int(node.objectStart)
            return NodeSnapshot(
                id: NodeID(rawValue: node.id), parent: node.parent == 0 ? nil : NodeID(rawValue: node.parent),
                kind: descriptor.kind, name: descriptor.name, state: NodeState(rawValue: node.state),
                attachedAt: node.attachedAt, detachedAt: node.isDetached ? node.detachedAt : nil,
                objects: (0..<Int(node.objectCount)).map { index in
                    let word = objectWords[start + index]
                    let object = objectDescriptors[word & Self.descriptorMask]
                    return ObjectSnapshot(
                        index: UInt16(index), role: object.role, typeName: object.typeName,
                        isAlive: word & Self.aliveBit != 0)
                }, origin: descriptor.origin)
        }
    }

    /// Detached nodes that still have live objects, with their detach times, in attach order.
    /// (A released ancestor kept only to name a ghost's path is not one of them.)
    func detachedAlive() -> [(node: NodeID, detachedAt: UInt64)] {
        liveSlotsInAttachOrder().compactMap { slot in
            let node = nodes[slot]
            guard node.aliveCount > 0, node.isDetached else { return nil }
            return (NodeID(rawValue: node.id), node.detachedAt)
        }
    }

    /// Calls `body` for each alive object of each node that is attached or has an object alive:
    /// the node, whether it is attached, the object's index, its address, and its descriptor id
    /// (for ``typeName(ofDescriptor:)``), in attach order (the retainer analysis takes the
    /// first of equally short paths, so the order of its roots decides which one it names).
    package func forEachAliveObject(
        _ body: (_ node: UInt64, _ isAttached: Bool, _ index: UInt16, _ address: ObfuscatedAddress, _ descriptor: UInt32) ->
            Void
    ) {
        for slot in liveSlotsInAttachOrder() {
            let node = nodes[slot]
            guard !node.isDetached || node.aliveCount > 0 else { continue }
            let start = Int(node.objectStart)
            for index in 0..<Int(node.objectCount) where objectWords[start + index] & Self.aliveBit != 0 {
                body(
                    node.id, !node.isDetached, UInt16(index), objectAddresses[start + index],
                    objectWords[start + index] & Self.descriptorMask)
            }
        }
    }

    /// The role name of an object descriptor id from ``forEachAliveObject(_:)``.
    package func roleName(ofDescriptor descriptor: UInt32) -> String {
        objectDescriptors[descriptor].role.rawValue
    }

    /// The type name of an object descriptor id from ``forEachAliveObject(_:)``.
    package func typeName(ofDescriptor descriptor: UInt32) -> String {
        objectDescriptors[descriptor].typeName
    }

    // MARK: Retainer analysis

    /// The detach time of the earliest detached node that still has an object alive and whose
    /// holders have not been explained.
    mutating func oldestUnexplained() -> UInt64? {
        flushLastUnexplained()
        while unexplainedHead < unexplained.count {
            let entry = unexplained[unexplainedHead]
            if aliveCount(of: entry.node) > 0 { return entry.detachedAt }
            unexplainedHead += 1
        }
        return nil
    }

    /// Takes the detached nodes with an object alive, detached at or before `detachedBy`, whose
    /// holders have not been explained, oldest first, as long as their alive objects number at
    /// most `maxObjects` (always at least one node): they count as explained from now on.
    mutating func takeUnexplained(detachedBy: UInt64, maxObjects: Int) -> [NodeID] {
        flushLastUnexplained()
        var taken: [NodeID] = []
        var objects = 0
        while unexplainedHead < unexplained.count {
            let entry = unexplained[unexplainedHead]
            let alive = aliveCount(of: entry.node)
            guard alive > 0 else {
                unexplainedHead += 1
                continue
            }
            guard entry.detachedAt <= detachedBy, taken.isEmpty || objects + alive <= maxObjects else {
                break
            }
            objects += alive
            taken.append(entry.node)
            unexplainedHead += 1
        }
        if unexplainedHead == unexplained.count {
            unexplained.removeAll(keepingCapacity: true)
            unexplainedHead = 0
        }
        return taken
    }

    @inline(__always)
    private mutating func noteUnexplained(_ node: NodeID, detachedAt: UInt64) {
        flushLastUnexplained()
        lastUnexplained = (node, detachedAt)
    }

    @inline(__always)
    private mutating func flushLastUnexplained() {
        guard let last = lastUnexplained else { return }
        lastUnexplained = nil
        appendUnexplained(last.node, detachedAt: last.detachedAt)
    }

    private mutating func appendUnexplained(_ node: NodeID, detachedAt: UInt64) {
        if unexplained.count >= unexplainedSweepAt {
            // Leaks that nobody explains (no collector of version 2) must not make the list grow
            // with every detach behind them: keep only the nodes still alive, in place.
            let registry = self
            unexplained.removeFirst(unexplainedHead)
            unexplained.removeAll { entry in registry.aliveCount(of: entry.node) == 0 }
            unexplainedHead = 0
            unexplainedSweepAt = max(64, unexplained.count * 2)
        }
        unexplained.append((node, detachedAt))
    }

    private func aliveCount(of node: NodeID) -> Int {
        slot(of: node.rawValue).map { Int(nodes[$0].aliveCount) } ?? 0
    }

    // MARK: Forgetting

    /// Forgets the node in `slot`, detached, fully released and without children. (A detached,
    /// fully released node with detached nodes still hanging below it stays, so that a snapshot
    /// names a ghost's whole path, until its last descendant goes, and then goes with it.)
    private mutating func forget(_ slot: Int) {
        let record = nodes[slot]
        let node = NodeID(rawValue: record.id)
        let parentSlot = record.parent != 0 ? self.slot(of: record.parent) : nil
        if let parentSlot { unlink(slot, from: parentSlot) }
        if record.flags & Node.principalFlag != 0, let key = principalKeys.removeValue(forKey: record.id),
            principals[key]?.node == node
        {
            principals[key] = nil
        }
        let start = Int(record.objectStart)
        for index in 0..<Int(record.objectCount) where objectWords[start + index] & Self.weakBit != 0 {
            weakReferences[UInt32(start + index)] = nil
        }
        freeBlock(at: record.objectStart, class: record.blockClass)
        // The node noted last as unexplained (detached with objects alive, then released, as
        // most nodes are) is forgotten there now rather than swept out of the list later.
        if lastUnexplained?.node == node { lastUnexplained = nil }
        removeSlot(slot, for: record.id)
        var free = Node()
        free.parent = freeSlotHead
        nodes[slot] = free
        freeSlotHead = UInt64(slot &+ 1)
        count -= 1
        // Slots stay put: the parent's is still its own.
        if let parentSlot, nodes[parentSlot].isDetached, nodes[parentSlot].aliveCount == 0,
            nodes[parentSlot].lastChild == 0
        {
            forget(parentSlot)
        }
    }

    /// Sweeps the node descriptors when due (``InternTable/isSweepDue``), keeping those that a
    /// record holds. Called before an attach takes an id.
    @inline(__always)
    private mutating func sweepNodeDescriptorsIfDue() {
        if nodeDescriptors.isSweepDue { sweepNodeDescriptors() }
    }

    @inline(never)
    private mutating func sweepNodeDescriptors() {
        var used = [Bool](repeating: false, count: nodeDescriptors.idLimit)
        for slot in 0..<nodes.count where nodes[slot].id != 0 { used[Int(nodes[slot].descriptor)] = true }
        nodeDescriptors.sweep(keeping: used)
    }

    /// Sweeps the object descriptors when due, keeping those that an object of a record holds
    /// (released or not: a kept record still names its released objects). Called before objects
    /// are added.
    @inline(__always)
    private mutating func sweepObjectDescriptorsIfDue() {
        if objectDescriptors.isSweepDue { sweepObjectDescriptors() }
    }

    @inline(never)
    private mutating func sweepObjectDescriptors() {
        var used = [Bool](repeating: false, count: objectDescriptors.idLimit)
        for slot in 0..<nodes.count where nodes[slot].id != 0 {
            let record = nodes[slot]
            let start = Int(record.objectStart)
            for index in 0..<Int(record.objectCount) {
                used[Int(objectWords[start + index] & Self.descriptorMask)] = true
            }
        }
        objectDescriptors.sweep(keeping: used)
    }

    /// Takes the child in `slot` out of the parent's list of children.
    @inline(__always)
    private mutating func unlink(_ slot: Int, from parentSlot: Int) {
        let link = UInt32(slot + 1)
        if nodes[parentSlot].lastChild == link {
            nodes[parentSlot].lastChild = nodes[slot].previousSibling
        } else {
            // From the last child back (a child usually goes soon after it came).
            var next = Int(nodes[parentSlot].lastChild)
            while next != 0 {
                let previous = nodes[next - 1].previousSibling
                if previous == link {
                    nodes[next - 1].previousSibling = nodes[slot].previousSibling
                    break
                }
                next = Int(previous)
            }
        }
        // The child's own link is left: its record is cleared next (``forget(_:)``).
    }

    // MARK: Objects

    /// The smallest block class that holds `count` objects.
    @inline(__always)
    private static func blockClass(for count: Int) -> UInt8 {
        // The bits of `count - 1` (a loop of checked shifts cost about 20 instructions an attach).
        guard count > 1 else { return 0 }
        return UInt8(truncatingIfNeeded: Swift.min(16, Int.bitWidth &- (count &- 1).leadingZeroBitCount))
    }

    @inline(__always)
    private mutating func allocateBlock(class blockClass: UInt8) -> UInt32 {
        let head = freeBlockHeads[Int(blockClass)]
        if head != 0 {
            freeBlockHeads[Int(blockClass)] = objectWords[Int(head &- 1)]
            return head &- 1
        }
        let start = UInt32(objectWords.count)
        let size = 1 << Int(blockClass)
        objectWords.append(0, count: size)
        objectAddresses.append(.unknown, count: size)
        return start
    }

    /// Puts the block at `start` at the head of its class's free list.
    @inline(__always)
    private mutating func freeBlock(at start: UInt32, class blockClass: UInt8) {
        objectWords[Int(start)] = freeBlockHeads[Int(blockClass)]
        freeBlockHeads[Int(blockClass)] = start &+ 1
    }

    /// Moves the node's objects into a block twice as large.
    private mutating func growBlock(of slot: Int) {
        let oldClass = nodes[slot].blockClass
        let oldStart = nodes[slot].objectStart
        let newStart = allocateBlock(class: oldClass + 1)
        for index in 0..<(UInt32(1) << UInt32(oldClass)) {
            let (from, to) = (oldStart + index, newStart + index)
            objectWords[Int(to)] = objectWords[Int(from)]
            objectAddresses[Int(to)] = objectAddresses[Int(from)]
            if objectWords[Int(from)] & Self.weakBit != 0 {
                weakReferences[to] = weakReferences.removeValue(forKey: from)
            }
            objectWords[Int(from)] = 0
        }
        freeBlock(at: oldStart, class: oldClass)
        nodes[slot].blockClass = oldClass + 1
        nodes[slot].objectStart = newStart
    }

    /// The pool position of object `index` of `node` if it is alive.
    private func alivePosition(_ node: NodeID, _ index: UInt16) -> UInt32? {
        guard let slot = slot(of: node.rawValue), index < nodes[slot].objectCount else { return nil }
        let position = nodes[slot].objectStart &+ UInt32(index)
        return objectWords[Int(position)] & Self.aliveBit != 0 ? position : nil
    }

    // MARK: Slots

    private func liveSlotsInAttachOrder() -> [Int] {
        (0..<nodes.count).filter { nodes[$0].id != 0 }.sorted { nodes[$0].id < nodes[$1].id }
    }

    @inline(__always)
    private func home(of key: UInt64) -> Int {
        // Fibonacci hashing: spreads sequential ids over the table.
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 20) & (buckets.count - 1)
    }

    /// The slot of the node with id `key`, if present: the node attached last without a probe
    /// (its objects, state changes, detach and releases mostly follow its attach).
    @inline(__always)
    private func slot(of key: UInt64) -> Int? {
        if key == lastAttached.id, key != 0 { return lastAttached.slot }
        let mask = buckets.count - 1
        var index = home(of: key)
        while true {
            let found = buckets[index]
            if found == 0 { return nil }
            if nodes[Int(found - 1)].id == key { return Int(found - 1) }
            index = (index &+ 1) & mask
        }
    }

    @inline(__always)
    private mutating func insertSlot(_ slot: Int, for key: UInt64) {
        if count * 2 > buckets.count { growBuckets() }
        let mask = buckets.count - 1
        var index = home(of: key)
        while buckets[index] != 0 {
            if nodes[Int(buckets[index] - 1)].id == key { break }
            index = (index &+ 1) & mask
        }
        buckets[index] = UInt32(slot + 1)
    }

    /// Removes `key`, whose record is in `slot` (its id still set).
    @inline(__always)
    private mutating func removeSlot(_ slot: Int, for key: UInt64) {
        if lastAttached.id == key { lastAttached = (0, 0) }
        let mask = buckets.count - 1
        var index = home(of: key)
        while buckets[index] != UInt32(slot + 1) {
            if buckets[index] == 0 { return }
            index = (index &+ 1) & mask
        }
        buckets[index] = 0
        // Backward-shift: move later entries of the same probe run into the hole.
        var hole = index
        var next = (index &+ 1) & mask
        while buckets[next] != 0 {
            let home = home(of: nodes[Int(buckets[next] - 1)].id)
            // The entry at `next` may move to `hole` only if its home is not in (hole, next].
            if (next &- home) & mask >= (next &- hole) & mask {
                buckets[hole] = buckets[next]
                buckets[next] = 0
                hole = next
            }
            next = (next &+ 1) & mask
        }
    }

    private mutating func growBuckets() {
        let old = buckets
        buckets = Array(repeating: 0, count: old.count * 2)
        let mask = buckets.count - 1
        for entry in old where entry != 0 {
            var index = home(of: nodes[Int(entry - 1)].id)
            while buckets[index] != 0 { index = (index &+ 1) & mask }
            buckets[index] = entry
        }
    }
}

/// See ``NodeRegistry/descriptorEpoch``.
package struct DescriptorEpoch: Sendable {
    package let registry: UInt64
    package let nodeSweeps: Int
    package let objectSweeps: Int

    /// No registry's (registry identities start at 1).
    package static let none = DescriptorEpoch(registry: 0, nodeSweeps: 0, objectSweeps: 0)
}

/// The last identity given to a registry (see ``NodeRegistry/descriptorEpoch``): 0 is never given.
private let registryIdentities = Atomic<UInt64>(0)

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
