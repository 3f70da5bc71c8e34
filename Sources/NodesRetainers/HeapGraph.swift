import NodesTracking

/// The references between the heap blocks of a snapshot: which words of a block may be strong
/// references to another block, and how to name such a reference.
///
/// A Swift object's references are its strong fields (weak and unowned ones hold none); an
/// array's, its elements up to its count; a dictionary's or a set's, its occupied buckets; a
/// closure context's, its captures; any other block's, every word. A word is a reference when it
/// is the start of a block in use. Side tables of weak references are never entered: a weak
/// reference points at one, and the table points back at its object.
final class HeapGraph {
    let snapshot: MemorySnapshot
    let index: HeapIndex
    let catalog: TypeCatalog
    /// The free part of the Swift metadata allocator's current pool: what the memory held before
    /// the runtime took it, never written since (stale words of freed blocks). Its block, if the
    /// pool is a heap block, and where in the block the free part begins.
    let metadataPoolFree: Range<UInt>?
    let metadataPoolTail: (block: Int32, from: Int)?
    /// The blocks of the async task that runs the analysis and of its parents: like the calling
    /// thread's stack, their frames are the caller's own locals and its callers' (and what
    /// earlier frames left there), never a holder.
    let ownTasks: [Int32]
    /// The slabs of those tasks' frames that are blocks of their own (past the first, which is in
    /// the task): a stale word elsewhere may lead to one directly.
    let ownSlabs: [Int32]

    /// The graph of the blocks of `index`, read with `catalog`; `ownTasks` are the addresses of
    /// the task that analyzes and of its parents, if any.
    init(snapshot: MemorySnapshot, index: HeapIndex, catalog: TypeCatalog, ownTasks: [UInt] = []) {
        self.snapshot = snapshot
        self.index = index
        self.catalog = catalog
        let free = Self.metadataPoolFree(snapshot: snapshot, catalog: catalog)
        metadataPoolFree = free
        metadataPoolTail = free.flatMap { Self.tail(free: $0, index: index, poolSize: catalog.metadataPoolSize) }
        let tasks = ownTasks.map { index.block(at: $0) }.filter { $0 >= 0 }
        self.ownTasks = tasks
        ownSlabs = Self.slabs(of: tasks, index: index, catalog: catalog)
    }

    /// The same graph for a second thread (``ReadAhead``): an index with caches of its own, and
    /// a catalog of its own (``TypeCatalog/copyForAnotherThread()``), so that the two threads
    /// share nothing that either one writes.
    init(sharing other: HeapGraph) {
        snapshot = other.snapshot
        index = HeapIndex(sharing: other.index)
        catalog = other.catalog.copyForAnotherThread()
        (metadataPoolFree, metadataPoolTail) = (other.metadataPoolFree, other.metadataPoolTail)
        (ownTasks, ownSlabs) = (other.ownTasks, other.ownSlabs)
    }

    /// The slab blocks of the tasks `tasks`: from the first slab (inside the task), the chain of
    /// next slabs.
    private static func slabs(of tasks: [Int32], index: HeapIndex, catalog: TypeCatalog) -> [Int32] {
        guard let marker = catalog.slabMetadata else { return [] }
        var slabs: [Int32] = []
        for task in tasks {
            let (base, size) = index.contents(of: task)
            guard let offset = slabInside(base, size: size, marker: marker) else { continue }
            var next = base.load(fromByteOffset: offset + 8, as: UInt.self)
            while next != 0, slabs.count < 4_096 {
                let slab = index.block(at: next)
                guard slab >= 0, !slabs.contains(slab) else { break }
                let (slabBase, slabSize) = index.contents(of: slab)
                guard slabSize >= 32, slabBase.load(as: UInt.self) == marker else { break }
                slabs.append(slab)
                next = slabBase.load(fromByteOffset: 8, as: UInt.self)
            }
        }
        return slabs
    }

    /// The free part of the metadata allocator's current pool, as the snapshot has it (or as it
    /// is now, when the runtime's data is not in the snapshot).
    private static func metadataPoolFree(snapshot: MemorySnapshot, catalog: TypeCatalog) -> Range<UInt>? {
        func word(_ address: UInt) -> UInt? { snapshot.word(at: address) ?? ProcessMemory.word(at: address) }
        guard let pool = catalog.metadataPool, let poolSize = catalog.metadataPoolSize,
            let begin = word(pool), let remaining = word(pool &+ 8),
            remaining > 0, remaining <= max(poolSize, 1 << 20), begin <= UInt.max - remaining
        else { return nil }
        return begin..<begin + remaining
    }

    /// The heap block of a pool whose free part is `free`: a pool ends where its free part does,
    /// so it starts a pool's size before (the first pool is in the runtime's own data, no block).
    private static func tail(free: Range<UInt>, index: HeapIndex, poolSize: UInt?) -> (block: Int32, from: Int)? {
        guard let poolSize, free.upperBound >= poolSize else { return nil }
        let start = free.upperBound - poolSize
        let block = index.block(at: start)
        guard block >= 0, free.lowerBound >= start, Int(free.lowerBound - start) <= index.contents(of: block).size else {
            return nil
        }
        return (block, Int(free.lowerBound - start))
    }

    /// The number of blocks.
    var count: Int { index.count }

    /// The copy of block `block`, and how many of its bytes were copied.
    @inline(__always)
    func contents(of block: Int32) -> (base: UnsafeRawPointer, size: Int) {
        index.contents(of: block)
    }

    /// The offset of the word of `block` (of shape `shape`) that may be left over from the
    /// block's last use rather than written by its owner, or -1 when it has none.
    ///
    /// glibc gives a request of `n` bytes a chunk of `(n + 8 + 15) & ~15` bytes, of which all
    /// but the first 8 are usable: when `n` is a multiple of 16 the last usable word lies past the
    /// request, and nothing writes it (a closure's context of two words of captures asks for 32
    /// bytes and gets 40, the last word still what the chunk's previous block held). A class
    /// instance's size is in its metadata and a collection's count in its header; the size of a
    /// closure's context and of a block of no known shape is not known, so their last word is
    /// doubtful, unless it is the first they have.
    @inline(__always)
    func doubtfulWord(of block: Int32, shape: TypeCatalog.Shape) -> Int {
        let first: Int
        switch shape {
        case .plain: first = 0
        case .closureContext(let firstCapture): first = firstCapture
        case .object, .array, .dictionary, .set, .task, .taskSlab: return -1
        }
        let last = (contents(of: block).size & ~7) - 8
        return last > first ? last : -1
    }

    /// The shape of block `block`.
    func shape(of block: Int32) -> TypeCatalog.Shape {
        let (base, size) = contents(of: block)
        guard size >= 16 else { return .plain }
        return catalog.shape(isa: base.load(as: UInt.self), blockSize: size)
    }

    /// Calls `body` with the offset and the target of every reference in `block`, until it
    /// returns true.
    @inline(__always)
    func forEachReference(from block: Int32, _ body: (_ offset: Int, _ target: Int32) -> Bool) {
        forEachReference(from: block, shape: shape(of: block), body)
    }

    /// ``forEachReference(from:_:)`` for a block whose ``shape(of:)`` is known.
    @inline(__always)
    func forEachReference(
        from block: Int32, shape: TypeCatalog.Shape, _ body: (_ offset: Int, _ target: Int32) -> Bool
    ) {
        let (base, size) = contents(of: block)
        guard size >= 8 else { return }
        if let tail = metadataPoolTail, tail.block == block {
            // Metadata, witness tables and caches: never an object's own block.
            _ = scan(base, 0..<tail.from, body)
            return
        }
        switch shape {
        case .plain:
            // malloc(64) gives 72 usable bytes, or 88 when glibc hands over a 96-byte chunk
            // whole (what would be left of it is smaller than a chunk can be).
            if size <= 88, size >= 64, isCachedContinuation(base) { return }
            _ = scan(base, 0..<size, body)
        case .object(let type):
            let plan = catalog.plans[type]
            if plan.scansAll {
                if scan(base, 16..<min(plan.instanceSize, size), body) { return }
            } else {
                for position in plan.first..<plan.first + plan.count
                where scan(base, catalog.planRanges[position].clamped(to: 0..<size), body) {
                    return
                }
            }
            if plan.scansTail { _ = scan(base, min(plan.instanceSize, size)..<size, body) }
        case .closureContext(let firstCapture):
            _ = scan(base, firstCapture..<size, body)
        case .taskSlab:
            if ownSlabs.contains(block) { return }
            _ = scanSlab(base, at: 0, size: size, body)
        case .task:
            // The analyzing task's own frames and its parents': the caller's, like its stack.
            if ownTasks.contains(block) { return }
            // The task's first slab is inside it: what lies past the slab's used part is left
            // over from frames that have returned.
            guard let marker = catalog.slabMetadata, let slab = Self.slabInside(base, size: size, marker: marker) else {
                _ = scan(base, 16..<size, body)
                return
            }
            if scan(base, 16..<slab, body) { return }
            _ = scanSlab(base, at: slab, size: size, body)
        case .array(let kind):
            guard let elements = arrayElements(base, size: size, collection: catalog.collections[kind]) else {
                _ = scan(base, 16..<size, body)
                return
            }
            let element = catalog.collections[kind].element
            guard element.scanned else { return }
            guard element.hasPadding else {
                _ = scan(base, elements, body)
                return
            }
            // Element by element, without the padding: a stale word of a freed block that lies
            // there is no reference (an enum of a String and a byte leaves 7 bytes unwritten).
            for start in stride(from: elements.lowerBound, to: elements.upperBound, by: element.stride)
            where scan(base, start..<start + element.used, body) {
                return
            }
        case .dictionary(let kind), .set(let kind):
            let collection = catalog.collections[kind]
            let start = index.starts[Int(block)]
            guard let buckets = hashedBuckets(base, at: start, size: size, collection: collection) else {
                _ = scan(base, 16..<size, body)
                return
            }
            for bucket in buckets.occupied {
                // Each key and value within its size: its padding is never written.
                if let key = collection.key, key.scanned,
                    scan(base, buckets.keys + bucket * key.stride..<buckets.keys + bucket * key.stride + key.used, body)
                {
                    return
                }
                let element = collection.element
                if element.scanned,
                    scan(
                        base, buckets.values + bucket * element.stride..<buckets.values + bucket * element.stride + element.used, body)
                {
                    return
                }
            }
        }
    }

    /// The references of a task allocator's slab at `slab`: its next slab, and the part in use
    /// (frames of async functions that have not returned).
    private func scanSlab(_ base: UnsafeRawPointer, at slab: Int, size: Int, _ body: (Int, Int32) -> Bool) -> Bool {
        guard slab + 32 <= size else { return false }
        if scan(base, slab + 8..<slab + 16, body) { return true }
        let used = Int(base.load(fromByteOffset: slab + 20, as: UInt32.self))
        return scan(base, slab + 32..<min(size, slab + 32 + used), body)
    }

    /// Where the first slab of a task's allocator is inside the task: the word that marks it.
    private static func slabInside(_ base: UnsafeRawPointer, size: Int, marker: UInt) -> Int? {
        var offset = 16
        while offset + 32 <= size {
            if base.load(fromByteOffset: offset, as: UInt.self) == marker { return offset }
            offset += 16
        }
        return nil
    }

    /// Whether the block of a 64-byte request in `base` is a dispatch continuation that libdispatch keeps in a
    /// thread's cache for reuse (free): a cached continuation's `do_next` (+16) is the next one
    /// in the cache, and its `dc_cache_cnt` (the low half of +8) counts down the chain to 1 at
    /// the last, whose `do_next` is null. Its other words are left from its last use (the context
    /// of a block long run, at +40), no reference.
    private func isCachedContinuation(_ base: UnsafeRawPointer) -> Bool {
        let count = base.load(fromByteOffset: 8, as: UInt32.self)
        let next = base.load(fromByteOffset: 16, as: UInt.self)
        guard count >= 1, count <= 1 << 16 else { return false }
        if count == 1 { return next == 0 }
        let following = index.block(at: next)
        guard following >= 0 else { return false }
        let (nextBase, nextSize) = contents(of: following)
        return nextSize >= 24 && nextBase.load(fromByteOffset: 8, as: UInt32.self) == count - 1
    }

    /// Whether `block` is an async task or a slab of its frames.
    func isTask(_ block: Int32) -> Bool {
        switch shape(of: block) {
        case .task, .taskSlab: true
        default: false
        }
    }

    /// Whether `block` is the side table of a weak reference: its first word is an object whose
    /// reference count word marks a side table at this block; or it is the side table of an
    /// object that is gone, which weak references keep until they are read or dropped.
    ///
    /// A side table (`HeapObjectSideTableEntry`) is the object's address, a word of padding,
    /// the reference counts as the object had them (bit 32: deinit has begun; bit 63 is never
    /// set there), then the weak count. Once its object is gone, its first word is stale: the
    /// address may be a new object's, which the table does not hold.
    ///
    /// The padding is never written: it is usually zero, but a block that glibc takes from one
    /// of its bins rather than its per-thread cache keeps a list link there. So a table whose
    /// padding is not zero is known by the counts of an object that is gone and freed alone:
    /// deinit begun, no strong or unowned count left (bit 0 may mark a pure Swift deallocation).
    func isSideTable(_ block: Int32) -> Bool {
        let (base, size) = contents(of: block)
        guard size >= 16 else { return false }
        if size >= 32, size <= 56 {
            let counts = base.load(fromByteOffset: 16, as: UInt64.self)
            let weak = base.load(fromByteOffset: 24, as: UInt32.self)
            if counts >> 63 == 0, counts >> 32 & 1 == 1, weak != 0,
                base.load(fromByteOffset: 8, as: UInt.self) == 0 || counts & ~1 == 1 << 32
            {
                return true
            }
        }
        let object = index.block(at: base.load(as: UInt.self))
        guard object >= 0 else { return false }
        let (objectBase, objectSize) = contents(of: object)
        guard objectSize >= 16 else { return false }
        let counts = objectBase.load(fromByteOffset: 8, as: UInt.self)
        // Bits 63 (use slow RC) and 62 (side table mark); the table's address shifted right by 3.
        guard counts >> 62 == 3 else { return false }
        return (counts & ((1 << 62) - 1)) << 3 == index.starts[Int(block)]
    }

    // MARK: Layouts

    /// The byte range of an array storage's elements (after isa, reference counts, count and
    /// capacity), up to its count.
    func arrayElements(_ base: UnsafeRawPointer, size: Int, collection: TypeCatalog.CollectionInfo) -> Range<Int>? {
        let count = base.load(fromByteOffset: 16, as: Int.self)
        let element = collection.element
        let first = (32 + element.alignment - 1) / element.alignment * element.alignment
        guard count >= 0, first <= size, count <= (size - first) / element.stride else { return nil }
        return first..<first + count * element.stride
    }

    /// Where a dictionary's or a set's keys and values are, and which buckets are occupied.
    /// (A dictionary storage: count, capacity, scale (a byte), age, seed, the keys' and the
    /// values' addresses, then the occupancy bitmap; a set's has no values' address.)
    func hashedBuckets(
        _ base: UnsafeRawPointer, at blockStart: UInt, size: Int, collection: TypeCatalog.CollectionInfo
    ) -> (keys: Int, values: Int, occupied: [Int])? {
        let scale = Int(base.load(fromByteOffset: 32, as: UInt8.self))
        guard scale < 40 else { return nil }
        let bucketCount = 1 << scale
        let bitmapWords = (bucketCount + 63) / 64
        let isDictionary = collection.key != nil
        let bitmap = isDictionary ? 64 : 56
        let keysAddress = base.load(fromByteOffset: 48, as: UInt.self)
        let valuesAddress = isDictionary ? base.load(fromByteOffset: 56, as: UInt.self) : keysAddress
        let keyStride = collection.key?.stride ?? collection.element.stride
        // The words are whatever the block holds (a storage being made still has its previous
        // occupant's bytes past its header): every offset and product is bounded by the block
        // before it is used, so that no garbage can overflow.
        guard keysAddress >= blockStart, keysAddress - blockStart <= UInt(size),
            valuesAddress >= blockStart, valuesAddress - blockStart <= UInt(size)
        else { return nil }
        let keys = Int(keysAddress - blockStart)
        let values = Int(valuesAddress - blockStart)
        let elementStride = max(collection.element.stride, 1)
        guard keys == bitmap + bitmapWords * 8, keyStride >= 1, bucketCount <= (size - keys) / keyStride else { return nil }
        guard
            !isDictionary
                || (values >= keys + bucketCount * keyStride && bucketCount <= (size - values) / elementStride)
        else { return nil }
        var occupied: [Int] = []
        for word in 0..<bitmapWords {
            var bits = base.load(fromByteOffset: bitmap + word * 8, as: UInt64.self)
            if word == bitmapWords - 1, bucketCount < 64 { bits &= (UInt64(1) << UInt64(bucketCount)) - 1 }
            while bits != 0 {
                occupied.append(word * 64 + bits.trailingZeroBitCount)
                bits &= bits - 1
            }
        }
        return (keys, values, occupied)
    }

    /// Calls `body` for every word of `range` of a block that starts a block in use, until it
    /// returns true; returns whether it did.
    @inline(__always)
    private func scan(_ base: UnsafeRawPointer, _ range: Range<Int>, _ body: (Int, Int32) -> Bool) -> Bool {
        var offset = (range.lowerBound + 7) & ~7
        while offset + 8 <= range.upperBound {
            let word = base.load(fromByteOffset: offset, as: UInt.self)
            if word & 15 == 0 {
                let target = index.block(at: word)
                if target >= 0, body(offset, target) { return true }
            }
            offset += 8
        }
        return false
    }
}
