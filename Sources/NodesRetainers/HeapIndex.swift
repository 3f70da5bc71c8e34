import NodesTracking

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

    /// The walked heaps, by address.
    let areas: UnsafeMutableBufferPointer<Area>
    /// One bit per 16-byte granule of each area: set where a block in use starts.
    private let bitmap: UnsafeMutableBufferPointer<UInt64>
    /// For each bitmap word, the blocks of its area that start before it.
    private let rank: UnsafeMutableBufferPointer<UInt32>
    /// The blocks' addresses (what a reference to them holds), in address order.
    let starts: UnsafeMutableBufferPointer<UInt>
    /// Their usable sizes in bytes.
    let sizes: UnsafeMutableBufferPointer<UInt32>
    /// Whether a walk stopped at a chunk header that made no sense (another thread changing
    /// the heap while it was copied): blocks after it are unknown.
    let incomplete: Bool

    private let low: UInt
    private let high: UInt

    /// The number of blocks.
    var count: Int { starts.count }

    /// Walks the heaps of `snapshot`.
    init(snapshot: MemorySnapshot) {
        var walker = Walker(tcacheKey: Self.tcacheKey)
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
        areas = Self.buffer(walker.areas)
        bitmap = Self.buffer(walker.bitmap)
        rank = Self.buffer(walker.rank)
        starts = Self.buffer(walker.starts)
        sizes = Self.buffer(walker.sizes)
        incomplete = walker.incomplete
        low = walker.areas.first?.start ?? 0
        high = walker.areas.last?.end ?? 0
    }

    deinit {
        areas.deallocate()
        bitmap.deallocate()
        rank.deallocate()
        starts.deallocate()
        sizes.deallocate()
    }

    /// The block that starts at `address`, or -1.
    @inline(__always)
    func block(at address: UInt) -> Int32 {
        guard address & 15 == 0, address >= low, address < high else { return -1 }
        var lower = 0
        var upper = areas.count
        while lower < upper {
            let middle = (lower + upper) >> 1
            if areas[middle].end <= address { lower = middle + 1 } else { upper = middle }
        }
        guard lower < areas.count else { return -1 }
        let area = areas[lower]
        guard area.start <= address else { return -1 }
        let granule = Int((address - area.start) >> 4)
        let word = area.bitmapOffset + (granule >> 6)
        let bits = bitmap[word]
        let bit = UInt64(1) << UInt64(granule & 63)
        guard bits & bit != 0 else { return -1 }
        return area.firstBlock + Int32(rank[word]) + Int32((bits & (bit &- 1)).nonzeroBitCount)
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
        ProcessMemory.prefetch(area.copy + Int(starts[Int(block)] &- area.start))
    }

    /// The index of the area that holds block `block` (areas are in block order).
    @inline(__always)
    private func area(of block: Int32) -> Int {
        var lower = 0
        var upper = areas.count
        while lower < upper {
            let middle = (lower + upper) >> 1
            if areas[middle].firstBlock + areas[middle].blockCount <= block { lower = middle + 1 } else { upper = middle }
        }
        return lower
    }

    private static func buffer<Element>(_ array: [Element]) -> UnsafeMutableBufferPointer<Element> {
        let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: array.count)
        _ = buffer.initialize(from: array)
        return buffer
    }

    // MARK: Walking

    /// Builds the index, heap by heap.
    private struct Walker {
        let tcacheKey: UInt?
        var areas: [Area] = []
        var bitmap: [UInt64] = []
        var rank: [UInt32] = []
        var starts: [UInt] = []
        var sizes: [UInt32] = []
        var incomplete = false

        init(tcacheKey: UInt?) {
            self.tcacheKey = tcacheKey
        }

        mutating func walk(_ region: MemorySnapshot.Region, from first: UInt, mapped: Bool) {
            guard first >= region.start, first < region.end else { return }
            let granules = Int((region.end - region.start) >> 4)
            let bitmapOffset = bitmap.count
            bitmap.append(contentsOf: repeatElement(0, count: (granules + 63) / 64))
            let firstBlock = Int32(starts.count)
            let copy = region.copy
            let base = region.start
            @inline(__always) func word(_ address: UInt) -> UInt {
                copy.load(fromByteOffset: Int(address - base), as: UInt.self)
            }
            var chunk = first
            while chunk + 32 <= region.end {
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
                if inUse {
                    let granule = Int((block - base) >> 4)
                    bitmap[bitmapOffset + (granule >> 6)] |= UInt64(1) << UInt64(granule & 63)
                    starts.append(block)
                    sizes.append(UInt32(clamping: size - (mapped ? 16 : 8)))
                }
                chunk = next
            }
            let blockCount = Int32(starts.count) - firstBlock
            guard blockCount > 0 else {
                bitmap.removeLast(bitmap.count - bitmapOffset)
                return
            }
            var before: UInt32 = 0
            for position in bitmapOffset..<bitmap.count {
                rank.append(before)
                before += UInt32(bitmap[position].nonzeroBitCount)
            }
            areas.append(
                Area(
                    start: base, end: region.end, copy: copy, bitmapOffset: bitmapOffset, firstBlock: firstBlock,
                    blockCount: blockCount))
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

    /// The key glibc writes into the second word of every block in a thread's cache: found by
    /// freeing two blocks of different sizes and reading it back (the same random word twice).
    static let tcacheKey: UInt? = {
        guard let first = malloc(24), let second = malloc(72) else { return nil }
        let (firstAddress, secondAddress) = (UInt(bitPattern: first), UInt(bitPattern: second))
        free(first)
        free(second)
        guard let one = ProcessMemory.word(at: firstAddress + 8), let other = ProcessMemory.word(at: secondAddress + 8),
            one == other, one != 0
        else { return nil }
        return one
    }()
}
