import NodesTracking
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The blocks in use in the copied malloc heaps, found by walking glibc's chunks, with a
/// constant-time answer to "is this word the start of a block in use, and which".
///
/// A chunk is `prev_size`, a size word (flags in its low bits: `PREV_INUSE` 1, `IS_MMAPPED` 2,
/// `NON_MAIN_ARENA` 4), then the block. A chunk is in use when the next chunk's `PREV_INUSE`
/// is set, except chunks kept in a thread's cache (`tcache`: their second word is the cache's
/// key) or in a fast bin (their first word is the next free chunk, mangled with the address).
/// Blocks are numbered in address order; a bitmap of 16-byte granules marks their starts.
final class HeapIndex {
    /// A walked heap: one copied region.
    struct Area {
        var start: UInt
        var end: UInt
        /// Where the copy of `start` is.
        var copy: UnsafeRawPointer
        /// Where its bitmap words begin in ``bitmap``.
        var bitmapOffset: Int
        var firstBlock: Int32
        var blockCount: Int32
    }

    /// The walked heaps, by address (``areaCount`` of them).
    let areas: UnsafeMutableBufferPointer<Area>
    /// One bit per 16-byte granule of each area: set where a block in use starts, with the
    /// number of the area's blocks before each word.
    private let bitmap: UnsafeMutableBufferPointer<BitmapWord>
    /// The blocks' addresses (what a reference to them holds), in address order (``count`` of them).
    let starts: UnsafeMutableBufferPointer<UInt>
    /// Their usable sizes in bytes.
    let sizes: UnsafeMutableBufferPointer<UInt32>
    /// What the walk found: the number of areas and blocks, the lowest and highest address, and
    /// whether a walk stopped early (in memory of its own, so that a walk in a forked child, see
    /// ``FrozenChild``, writes no heap block).
    private let summary: UnsafeMutablePointer<Summary>
    private let snapshot: MemorySnapshot
    /// The memory mapped for the buffers, to unmap.
    private let mapping: (base: UnsafeMutableRawPointer?, length: Int)

    /// 64 granules of an area: where blocks start, and how many blocks of the area start
    /// before them (side by side, so that finding a block reads one cache line).
    struct BitmapWord {
        var bits: UInt64 = 0
        var rank: UInt32 = 0
        var unused: UInt32 = 0
    }

    private struct Summary {
        var areaCount = 0
        var blockCount = 0
        var low: UInt = 0
        var high: UInt = 0
        var incomplete = false
    }

    /// The number of blocks.
    var count: Int { summary.pointee.blockCount }
    /// The number of walked heaps.
    var areaCount: Int { summary.pointee.areaCount }
    /// Whether a walk stopped at a chunk header that made no sense (another thread changing
    /// the heap while it was copied): blocks after it are unknown.
    var incomplete: Bool { summary.pointee.incomplete }

    /// Walks the heaps of `snapshot`.
    convenience init(snapshot: MemorySnapshot) {
        self.init(preparingFor: snapshot)
        walk()
    }

    /// An index for the heaps of `snapshot`, not walked yet (``walk()``): its buffers are mapped
    /// now, outside every malloc heap and as large as the heaps can need (pages are only used
    /// where written), so that the walk allocates nothing.
    init(preparingFor snapshot: MemorySnapshot) {
        self.snapshot = snapshot
        var areaCapacity = 1
        var bitmapWords = 1
        var blockCapacity = 1
        for region in snapshot.regions {
            switch region.kind {
            case .mainHeap, .arenaHeap, .mappedChunks:
                let bytes = Int(region.end - region.start)
                areaCapacity += 1
                bitmapWords += (bytes / 16 + 63) / 64
                blockCapacity += bytes / 32
            case .imageData, .stack:
                continue
            }
        }
        func aligned(_ value: Int) -> Int { (value + 63) & ~63 }
        let layout = [
            aligned(MemoryLayout<Summary>.stride), aligned(areaCapacity * MemoryLayout<Area>.stride),
            aligned(bitmapWords * MemoryLayout<BitmapWord>.stride), aligned(blockCapacity * 8), aligned(blockCapacity * 4),
        ]
        let length = layout.reduce(0, +)
        let mapped = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        var base: UnsafeMutableRawPointer
        if let mapped, mapped != UnsafeMutableRawPointer(bitPattern: -1) {
            base = mapped
            mapping = (mapped, length)
            // Large pages where the kernel gives them on request: a walk at 100,000 nodes writes
            // about 12 MiB here, in thousands of page faults otherwise (and the search reads it at
            // random, a TLB miss a block otherwise). Refused or ignored elsewhere, which is fine.
            _ = madvise(mapped, length, Self.hugePages)
        } else {
            // No address space for it: an index of nothing (every target is then "not in a block").
            base = .allocate(byteCount: layout[0] + 64 * 4, alignment: 64)
            mapping = (nil, 0)
            (areaCapacity, bitmapWords, blockCapacity) = (0, 0, 0)
        }
        var offset = 0
        func carve<Element>(_ count: Int, _ size: Int, as type: Element.Type) -> UnsafeMutableBufferPointer<Element> {
            defer { offset += size }
            return UnsafeMutableBufferPointer(start: (base + offset).bindMemory(to: type, capacity: count), count: count)
        }
        summary = carve(1, layout[0], as: Summary.self).baseAddress!
        summary.initialize(to: Summary())
        areas = carve(areaCapacity, mapping.base == nil ? 64 : layout[1], as: Area.self)
        bitmap = carve(bitmapWords, mapping.base == nil ? 64 : layout[2], as: BitmapWord.self)
        starts = carve(blockCapacity, mapping.base == nil ? 64 : layout[3], as: UInt.self)
        sizes = carve(blockCapacity, mapping.base == nil ? 64 : layout[4], as: UInt32.self)
        if mapping.base == nil { fallbackBase = base }
        // What a walk in a forked child would otherwise look up for the first time there.
        tcacheKey = Self.tcacheKey
    }

    /// An index of the same blocks for a second thread: the same tables, read only, with caches
    /// of its own (``lastArea``, ``lastBlockArea``); `other` outlives it.
    init(sharing other: HeapIndex) {
        (areas, bitmap, starts, sizes, summary) = (other.areas, other.bitmap, other.starts, other.sizes, other.summary)
        snapshot = other.snapshot
        mapping = (nil, 0)
        owner = other
        tcacheKey = other.tcacheKey
    }

    /// The index whose tables this one shares, kept alive by it.
    private var owner: HeapIndex?
    private var fallbackBase: UnsafeMutableRawPointer?
    /// Whether the processor counts a word's bits in one instruction: every lookup counts the
    /// blocks that start before its address in a bitmap word.
    private let countsInOne = ProcessMemory.countsBitsInOne()
    /// `MADV_HUGEPAGE`: asked of the index's buffers and of a search's tables.
    static let hugePages: Int32 = 14
    /// The area of the last address found in a block, and of the last block read: a search
    /// goes from a block to the blocks it refers to, mostly in the same heap. (One thread
    /// searches an index.)
    @exclusivity(unchecked) private var lastArea = 0
    @exclusivity(unchecked) private var lastBlockArea = 0

    /// Walks the heaps: finds their blocks in use. Allocates nothing.
    func walk() {
        var walker = Walker(
            tcacheKey: tcacheKey, areas: areas, bitmap: bitmap, starts: starts, sizes: sizes)
        for region in snapshot.regions {
            switch region.kind {
            case .mainHeap:
                walker.walk(region, from: region.start, mapped: false)
            case .arenaHeap(let first):
                var chunks = region.start + MemorySnapshot.heapInfoSize
                if first {
                    // After the arena's malloc_state, aligned so that the first block is.
                    chunks += MemorySnapshot.mallocStateSize
                    let misalignment = (chunks + 16) & 15
                    if misalignment != 0 { chunks += 16 - misalignment }
                }
                walker.walk(region, from: chunks, mapped: false)
            case .mappedChunks:
                walker.walk(region, from: region.start, mapped: true)
            case .imageData, .stack:
                continue
            }
        }
        summary.pointee = Summary(
            areaCount: walker.areaCount, blockCount: walker.blockCount,
            low: walker.areaCount > 0 ? areas[0].start : 0, high: walker.areaCount > 0 ? areas[walker.areaCount - 1].end : 0,
            incomplete: walker.incomplete)
    }

    deinit {
        if let base = mapping.base {
            munmap(base, mapping.length)
        } else if owner == nil {
            fallbackBase?.deallocate()
        }
    }

    /// The block that starts at `address`, or -1.
    @inline(__always)
    func block(at address: UInt) -> Int32 {
        let summary = self.summary.pointee
        guard address & 15 == 0, address >= summary.low, address < summary.high else { return -1 }
        // The references of a block mostly lead to the heap of the one before: try it first.
        var area = areas[lastArea]
        if address < area.start || address >= area.end {
            var lower = 0
            var upper = summary.areaCount
            while lower < upper {
                let middle = (lower + upper) >> 1
                if areas[middle].end <= address { lower = middle + 1 } else { upper = middle }
            }
            guard lower < summary.areaCount else { return -1 }
            area = areas[lower]
            guard area.start <= address else { return -1 }
            lastArea = lower
        }
        let granule = Int((address - area.start) >> 4)
        let word = area.bitmapOffset + (granule >> 6)
        let entry = bitmap[word]
        let bit = UInt64(1) << UInt64(granule & 63)
        guard entry.bits & bit != 0 else { return -1 }
        return area.firstBlock + Int32(entry.rank) + Int32(ProcessMemory.bitCount(entry.bits & (bit &- 1), inOne: countsInOne))
    }

    /// The block in use whose bytes hold `address` (from its start to its usable size), or -1.
    func block(containing address: UInt) -> Int32 {
        let summary = self.summary.pointee
        guard address >= summary.low, address < summary.high else { return -1 }
        var lower = 0
        var upper = summary.areaCount
        while lower < upper {
            let middle = (lower + upper) >> 1
            if areas[middle].end <= address { lower = middle + 1 } else { upper = middle }
        }
        guard lower < summary.areaCount, areas[lower].start <= address else { return -1 }
        let area = areas[lower]
        let granule = Int((address - area.start) >> 4)
        var word = area.bitmapOffset + (granule >> 6)
        // The starts at or below the address in its bitmap word, else the last start before it.
        var bits = bitmap[word].bits & (UInt64.max >> UInt64(63 - (granule & 63)))
        while bits == 0 {
            guard word > area.bitmapOffset else { return -1 }
            word -= 1
            bits = bitmap[word].bits
        }
        let block =
            area.firstBlock + Int32(bitmap[word].rank) + Int32(ProcessMemory.bitCount(bits, inOne: countsInOne)) - 1
        return address < starts[Int(block)] + UInt(sizes[Int(block)]) ? block : -1
    }

    /// The copy of block `block`, and how many of its bytes were copied.
    @inline(__always)
    func contents(of block: Int32) -> (base: UnsafeRawPointer, size: Int) {
        let area = areas[area(of: block)]
        let start = starts[Int(block)]
        return (area.copy + Int(start - area.start), min(Int(sizes[Int(block)]), Int(area.end - start)))
    }

    /// Brings the first bytes of block `block` (and what the index keeps about it) into the
    /// cache, for a search that will look at it soon.
    @inline(__always)
    func prefetch(_ block: Int32) {
        let area = areas[area(of: block)]
        let first = area.copy + Int(starts[Int(block)] &- area.start)
        ProcessMemory.prefetch(first)
        if sizes[Int(block)] > 48 { ProcessMemory.prefetch(first + 64) }
    }

    /// Brings where block `block` is and its size into the cache: the step before ``prefetch(_:)``,
    /// which reads them.
    @inline(__always)
    func prefetchPlace(_ block: Int32) {
        ProcessMemory.prefetch(UnsafeRawPointer(starts.baseAddress! + Int(block)))
        ProcessMemory.prefetch(UnsafeRawPointer(sizes.baseAddress! + Int(block)))
    }

    /// The index of the area that holds block `block` (areas are in block order).
    @inline(__always)
    private func area(of block: Int32) -> Int {
        let last = areas[lastBlockArea]
        if block >= last.firstBlock, block < last.firstBlock + last.blockCount { return lastBlockArea }
        var lower = 0
        var upper = summary.pointee.areaCount
        while lower < upper {
            let middle = (lower + upper) >> 1
            if areas[middle].firstBlock + areas[middle].blockCount <= block { lower = middle + 1 } else { upper = middle }
        }
        if lower < summary.pointee.areaCount { lastBlockArea = lower }
        return lower
    }

    // MARK: Walking

    /// Builds the index, heap by heap, into buffers given to it.
    private struct Walker {
        let tcacheKey: UInt?
        let areas: UnsafeMutableBufferPointer<Area>
        let bitmap: UnsafeMutableBufferPointer<BitmapWord>
        let starts: UnsafeMutableBufferPointer<UInt>
        let sizes: UnsafeMutableBufferPointer<UInt32>
        var areaCount = 0
        var bitmapCount = 0
        var blockCount = 0
        var incomplete = false

        init(
            tcacheKey: UInt?, areas: UnsafeMutableBufferPointer<Area>, bitmap: UnsafeMutableBufferPointer<BitmapWord>,
            starts: UnsafeMutableBufferPointer<UInt>,
            sizes: UnsafeMutableBufferPointer<UInt32>
        ) {
            (self.tcacheKey, self.areas, self.bitmap, self.starts, self.sizes) = (
                tcacheKey, areas, bitmap, starts, sizes
            )
        }

        /// How far ahead of the chunk it reads the walk asks for memory.
        static let walkAhead: UInt = 2_048

        mutating func walk(_ region: MemorySnapshot.Region, from first: UInt, mapped: Bool) {
            guard first >= region.start, first < region.end, areaCount < areas.count else { return }
            let granules = Int((region.end - region.start) >> 4)
            let bitmapOffset = bitmapCount
            let words = (granules + 63) / 64
            guard bitmapOffset + words <= bitmap.count else { return }
            // Mapped memory is zero until written; a buffer that an earlier walk used is not.
            for position in bitmapOffset..<bitmapOffset + words { bitmap[position] = BitmapWord() }
            bitmapCount += words
            let firstBlock = blockCount
            let copy = region.copy
            let base = region.start
            @inline(__always) func word(_ address: UInt) -> UInt {
                copy.load(fromByteOffset: Int(address - base), as: UInt.self)
            }
            var chunk = first
            // Each header gives the next one: ask for the memory well ahead of it now (chunks
            // lie in address order), so that the walk does not wait for every line in turn.
            let end = region.end
            while chunk + 32 <= end {
                if chunk + Self.walkAhead < end { ProcessMemory.prefetch(copy + Int(chunk + Self.walkAhead - base)) }
                let sizeWord = word(chunk + 8)
                let size = sizeWord & ~7
                guard size >= 32, size & 15 == 0 else {
                    // Fenceposts end a heap that is not its arena's last one; anything else is
                    // a header changed under the copy.
                    if size != 16 { incomplete = true }
                    break
                }
                // The top chunk, or one that grew past what was copied.
                guard size <= region.end - chunk else { break }
                let next = chunk + size
                let block = chunk + 16
                let inUse: Bool
                if mapped {
                    inUse = sizeWord & 2 != 0
                } else if next + 16 > region.end {
                    inUse = false  // the top chunk
                } else if word(next + 8) & 1 == 0 {
                    inUse = false
                } else if size <= 1_040 {
                    inUse = !isCached(block, size: size, in: region)
                } else {
                    inUse = true
                }
                if inUse, blockCount < starts.count {
                    let granule = Int((block - base) >> 4)
                    bitmap[bitmapOffset + (granule >> 6)].bits |= UInt64(1) << UInt64(granule & 63)
                    starts[blockCount] = block
                    sizes[blockCount] = UInt32(clamping: size - (mapped ? 16 : 8))
                    blockCount += 1
                }
                chunk = next
            }
            let areaBlocks = blockCount - firstBlock
            guard areaBlocks > 0 else {
                bitmapCount = bitmapOffset
                return
            }
            var before: UInt32 = 0
            for position in bitmapOffset..<bitmapCount {
                bitmap[position].rank = before
                before += UInt32(bitmap[position].bits.nonzeroBitCount)
            }
            areas[areaCount] = Area(
                start: base, end: region.end, copy: copy, bitmapOffset: bitmapOffset, firstBlock: Int32(firstBlock),
                blockCount: Int32(areaBlocks))
            areaCount += 1
        }

        /// Whether a chunk that looks in use is in fact free in a thread's cache or a fast bin.
        private func isCached(_ block: UInt, size: UInt, in region: MemorySnapshot.Region) -> Bool {
            let copy = region.copy
            let base = region.start
            func word(_ address: UInt) -> UInt { copy.load(fromByteOffset: Int(address - base), as: UInt.self) }
            if let tcacheKey, word(block + 8) == tcacheKey { return true }
            guard size <= 128 else { return false }
            // Safe-linking: the stored link is the next free block XOR (its own address >> 12).
            let next = word(block) ^ (block >> 12)
            if next == 0 { return true }
            guard next & 15 == 0, next >= region.start + 16, next + 8 <= region.end else { return false }
            return word(next - 8) & ~7 == size
        }
    }

    /// The key glibc writes into the second word of every block in a thread's cache (one random
    /// word for the process), as this index's walk takes it (looked up when the index is made).
    private let tcacheKey: UInt?

    /// The key, once a probe found it (``probeTcacheKey()``; asked again by each index made
    /// until then).
    static var tcacheKey: UInt? {
        let known = foundTcacheKey.load(ordering: .relaxed)
        if known != 0 { return known }
        guard let key = probeTcacheKey() else { return nil }
        foundTcacheKey.store(key, ordering: .relaxed)
        return key
    }
    private static let foundTcacheKey = Atomic<UInt>(0)

    /// Finds the key: read back from blocks freed into empty bins of a thread's cache, for three
    /// sizes, two of which must agree. The blocks are freed on a thread made for the probe, whose
    /// cache starts empty. (A probe on the calling thread took 7 blocks of each size first, to
    /// empty its bin, then freed one more into it; in a busy process, the allocator can refill a
    /// bin from the arena's free lists as it serves those 7, and the probe's block then went to
    /// a full bin with no key: a full `swift test` run found no key once, and every cached block
    /// would then pass for one in use. That way is kept for where no thread can be made.)
    static func probeTcacheKey() -> UInt? {
        let sizes = [24, 72, 1_000]
        let blocks = sizes.compactMap { size -> UnsafeMutableRawPointer? in
            guard let block = malloc(size) else { return nil }
            // Zero first: a block that goes elsewhere does not keep a word that passes for a key.
            memset(block, 0, size)
            return block
        }
        if blocks.count == sizes.count, let words = ProcessMemory.freeOnANewThread(blocks) {
            if let key = agreedKey(words) { return key }
        } else {
            blocks.forEach { free($0) }
        }
        return probeTcacheKeyOnThisThread()
    }

    /// The probe on the calling thread: 7 blocks of the size taken first, which empties its bin
    /// unless the allocator refills it meanwhile, before the probe is freed into it.
    static func probeTcacheKeyOnThisThread() -> UInt? {
        func keyOfAFreedBlock(size: Int) -> UInt? {
            let drained = (0..<tcacheBinCapacity).compactMap { _ in malloc(size) }
            defer { drained.forEach { free($0) } }
            guard let probe = malloc(size) else { return nil }
            memset(probe, 0, size)
            let address = UInt(bitPattern: probe)
            free(probe)
            return ProcessMemory.word(at: address + 8).flatMap { $0 == 0 ? nil : $0 }
        }
        for _ in 0..<5 {
            let found = [24, 72, 136].compactMap(keyOfAFreedBlock(size:))
            if let key = agreedKey(found) { return key }
        }
        return nil
    }

    /// A word other than 0 that at least two of `words` are: the key, read back from blocks of
    /// different sizes.
    private static func agreedKey(_ words: [UInt]) -> UInt? {
        words.first { key in key != 0 && words.filter { $0 == key }.count >= 2 }
    }

    /// How many blocks a bin of a thread's cache holds at most (glibc's default, `tcache_count`).
    static let tcacheBinCapacity = 7
}
