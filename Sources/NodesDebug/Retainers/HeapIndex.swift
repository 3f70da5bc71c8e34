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
struct HeapIndex {
    /// A walked heap: one copied region.
    struct Area {
        var start: UInt
        var end: UInt
        /// The snapshot region it is in.
        var region: Int
        /// Where its bitmap words begin in ``bitmap``.
        var bitmapOffset: Int
        var firstBlock: Int32
        var blockCount: Int32
    }

    private(set) var areas: [Area] = []
    /// One bit per 16-byte granule of each area: set where a block in use starts.
    private var bitmap: [UInt64] = []
    /// For each bitmap word, the blocks of its area that start before it.
    private var rank: [UInt32] = []
    /// The blocks' addresses (what a reference to them holds), in address order.
    private(set) var starts: [UInt] = []
    /// Their usable sizes in bytes.
    private(set) var sizes: [UInt32] = []
    /// Whether a walk stopped at a chunk header that made no sense (another thread changing
    /// the heap while it was copied): blocks after it are unknown.
    private(set) var incomplete = false

    private var low: UInt = .max
    private var high: UInt = 0

    /// The number of blocks.
    var count: Int { starts.count }

    /// Walks the heaps of `snapshot`.
    init(snapshot: MemorySnapshot) {
        let key = Self.tcacheKey
        for (index, region) in snapshot.regions.enumerated() {
            switch region.kind {
            case .mainHeap:
                walk(region, index: index, from: region.start, mapped: false, tcacheKey: key)
            case .arenaHeap(let first):
                var chunks = region.start + MemorySnapshot.heapInfoSize
                if first {
                    // After the arena's malloc_state, aligned so that the first block is.
                    chunks += MemorySnapshot.mallocStateSize
                    let misalignment = (chunks + 16) & 15
                    if misalignment != 0 { chunks += 16 - misalignment }
                }
                walk(region, index: index, from: chunks, mapped: false, tcacheKey: key)
            case .mappedChunks:
                walk(region, index: index, from: region.start, mapped: true, tcacheKey: key)
            case .imageData, .stack:
                continue
            }
        }
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

    /// The area of block `block`.
    func area(of block: Int32) -> Area {
        var lower = 0
        var upper = areas.count
        while lower < upper {
            let middle = (lower + upper) >> 1
            if areas[middle].firstBlock + areas[middle].blockCount <= block { lower = middle + 1 } else { upper = middle }
        }
        return areas[lower]
    }

    // MARK: Walking

    private mutating func walk(_ region: MemorySnapshot.Region, index: Int, from first: UInt, mapped: Bool, tcacheKey: UInt?) {
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
                // Fenceposts end a heap that is not its arena's last one; anything else is a
                // header changed under the copy.
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
            } else {
                inUse = word(next + 8) & 1 != 0 && !isCached(block, size: size, tcacheKey: tcacheKey, word: word, in: region)
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
                start: base, end: region.end, region: index, bitmapOffset: bitmapOffset, firstBlock: firstBlock,
                blockCount: blockCount))
        low = min(low, base)
        high = max(high, region.end)
    }

    /// Whether a chunk that looks in use is in fact free in a thread's cache or a fast bin.
    @inline(__always)
    private func isCached(
        _ block: UInt, size: UInt, tcacheKey: UInt?, word: (UInt) -> UInt, in region: MemorySnapshot.Region
    ) -> Bool {
        guard size <= 1_040 else { return false }
        if let tcacheKey, word(block + 8) == tcacheKey { return true }
        guard size <= 128 else { return false }
        // Safe-linking: the stored link is the next free block XOR (its own address >> 12).
        let next = word(block) ^ (block >> 12)
        if next == 0 { return true }
        guard next & 15 == 0, next >= region.start + 16, next + 8 <= region.end else { return false }
        return word(next - 8) & ~7 == size
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
