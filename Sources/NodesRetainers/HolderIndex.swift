import CNodesMemory
import NodesTracking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the words are that may refer to a heap block, by their value: the other direction of a
/// ``HeapGraph``, so that the holders of a block are found without entering the blocks that lead
/// to it.
///
/// Built in one pass over every region of the snapshot (the heaps whole, the images' data, the
/// stacks): a word is kept when it is 16-byte aligned and falls in one of two spans that cover
/// every heap (``cnm_collect_candidates``, with vector instructions where the processor has
/// them), with where it is; a level of a scope is then one pass over them. A word kept is only
/// a candidate: it may lie in
/// a free chunk, in a block's unused tail, in a field the search does not follow, or point at no
/// block at all. So what it answers is a superset of the references the search follows, which is
/// what ``BackwardScope`` needs.
final class HolderIndex {
    /// A region of the snapshot as the index numbers its words.
    struct Segment {
        var region: Int
        var firstPosition: UInt32
        var words: Int
    }

    let snapshot: MemorySnapshot
    /// The regions, in the order of their positions.
    let segments: [Segment]
    /// The low 32 bits of each candidate, and where it is, in the order of the snapshot.
    private let values: UnsafeMutablePointer<UInt32>
    private let positions: UnsafeMutablePointer<UInt32>
    private let mapping: (base: UnsafeMutableRawPointer, length: Int)
    /// The two spans of addresses that cover every heap.
    private let spans: (low0: UInt, span0: UInt, low1: UInt, span1: UInt)
    /// The candidates kept, once collected.
    private var count = 0
    private var collected = false

    /// The index of `snapshot`'s words, or nil when there is nothing to index or no memory for it
    /// (more than 2^32 words, or a refused mapping): the search then goes forward alone.
    init?(snapshot: MemorySnapshot) {
        self.snapshot = snapshot
        var segments: [Segment] = []
        var heaps: [(start: UInt, end: UInt)] = []
        var words = 0
        for (position, region) in snapshot.regions.enumerated() where region.end > region.start {
            let count = Int(region.end - region.start) / 8
            guard words + count < Int(UInt32.max) - 8 else { return nil }
            segments.append(Segment(region: position, firstPosition: UInt32(words), words: count))
            words += count
            switch region.kind {
            case .mainHeap, .arenaHeap, .mappedChunks: heaps.append((region.start, region.end))
            case .imageData, .stack: break
            }
        }
        guard !heaps.isEmpty else { return nil }
        self.segments = segments
        // Two spans that cover every heap: split at the widest gap between two of them.
        heaps.sort { $0.start < $1.start }
        var split = heaps.count
        var widest: UInt = 0
        for position in 1..<max(1, heaps.count) where heaps[position].start - heaps[position - 1].end > widest {
            widest = heaps[position].start - heaps[position - 1].end
            split = position
        }
        let low0 = heaps[0].start
        let span0 = heaps[split - 1].end - low0
        let (low1, span1) = split < heaps.count ? (heaps[split].start, heaps[heaps.count - 1].end - heaps[split].start) : (0, 0)

        // Mapped (zero pages, used only where written), outside every heap.
        let capacity = words + 8
        let length = capacity * 8
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
            base != UnsafeMutableRawPointer(bitPattern: -1)
        else { return nil }
        _ = madvise(base, length, HeapIndex.hugePages)
        mapping = (base, length)
        values = base.bindMemory(to: UInt32.self, capacity: capacity)
        positions = (base + capacity * 4).bindMemory(to: UInt32.self, capacity: capacity)
        spans = (low0, span0, low1, span1)
    }

    deinit {
        munmap(mapping.base, mapping.length)
    }

    /// Collects the candidates, once. (Two threads sharing the pass measured no faster on this
    /// machine: the pass is bound by memory, which they share.)
    func collect() {
        guard !collected else { return }
        collected = true
        for segment in segments {
            let region = snapshot.regions[segment.region]
            count += cnm_collect_candidates(
                region.copy.assumingMemoryBound(to: UInt64.self), segment.words, segment.firstPosition, UInt64(spans.low0),
                UInt64(spans.span0), UInt64(spans.low1), UInt64(spans.span1), values + count, positions + count)
        }
    }

    /// Calls `body` with each of `wanted` that a word holds, the region of the word (its index in
    /// the snapshot) and its byte offset there, in the order of the snapshot: one pass over the
    /// candidates for all of them.
    func forEachHolder(ofAny wanted: [UInt], _ body: (_ value: UInt, _ region: Int, _ offset: Int) -> Void) {
        guard !wanted.isEmpty else { return }
        let lows = Array(Set(wanted.map { UInt32(truncatingIfNeeded: $0) })).sorted()
        // The candidates whose low half is one of theirs.
        var capacity = 1_024
        var found = [UInt32](repeating: 0, count: capacity)
        var hits = 0
        while true {
            hits = found.withUnsafeMutableBufferPointer { found in
                cnm_find_candidates(values, count, lows, lows.count, found.baseAddress, capacity)
            }
            guard hits > capacity else { break }
            capacity = hits
            found = [UInt32](repeating: 0, count: capacity)
        }
        let exact = wanted.count > 16 ? Set(wanted) : nil
        let regions = snapshot.regions
        var segment = 0
        for hit in found[0..<hits] {
            let position = positions[Int(hit)]
            if position < segments[segment].firstPosition || position - segments[segment].firstPosition >= segments[segment].words {
                segment = self.segment(of: position)
            }
            let (region, offset) = (segments[segment].region, Int(position - segments[segment].firstPosition) * 8)
            // The low half matched: the whole word must be one of them.
            let word = regions[region].copy.load(fromByteOffset: offset, as: UInt.self)
            if exact?.contains(word) ?? wanted.contains(word) { body(word, region, offset) }
        }
    }

    private func segment(of position: UInt32) -> Int {
        var lower = 0
        var upper = segments.count
        while lower + 1 < upper {
            let middle = (lower + upper) >> 1
            if segments[middle].firstPosition <= position { lower = middle } else { upper = middle }
        }
        return lower
    }
}

/// The blocks from which a search may reach its targets, found backwards from the targets a level
/// at a time through a ``HolderIndex``: level `k` adds the blocks that hold a block of level
/// `k - 1`. A search kept to these blocks finds what a search of the whole heap finds:
///
/// - once no level adds a block (``Step/complete``), every block that can reach a target is in
///   the scope, and every phase of the search (the roots, the cycles, and where the scope includes
///   tasks the stacks and tasks) finds the same paths from the same roots in the same order, since
///   the order in which a breadth-first search reaches the blocks that lead to a target depends
///   only on those blocks;
/// - before that, a target that the first phase reaches by a path of at most ``level``
///   references, with no doubtful word followed, has the path that the whole heap's search gives
///   it: every block on every path that short is in the scope (``RetainerSearch/reachesAll(_:within:)``).
///
/// Where the scope grows past ``limit`` blocks the search goes forward over the whole heap.
struct BackwardScope {
    enum Step {
        /// A level added blocks (and `metRoots`: a holder among them is a root).
        case grew(metRoots: Bool)
        /// No holder is left outside the scope (but the tasks it left out, ``leftOutTasks``).
        case complete
        /// More blocks than the limit.
        case tooLarge
    }

    let holders: HolderIndex
    let graph: HeapGraph
    /// The blocks of the scope.
    private(set) var blocks: [Int32]
    /// Their addresses, to test a word or an attached node's object against.
    private(set) var addresses = AddressSet()
    /// The levels added.
    private(set) var level = 0
    /// The words of the images' data and of the stacks that hold a block of the scope (region,
    /// offset), in the order of the snapshot: the only roots that are words a search kept to the
    /// scope needs to look at.
    var rootWords: [(region: Int, offset: Int)] {
        roots.sorted { ($0.region, $0.offset) < ($1.region, $1.offset) }
    }
    private var roots: [(region: Int, offset: Int)] = []
    private var frontier: [Int32]
    private let limit: Int
    /// The frames of async tasks that hold a block of the scope, left out of it unless it
    /// includes tasks: no phase of a search but the one that enters tasks goes through one, and
    /// what holds a task (a chain of other tasks and the executors' queues) may be long.
    private var deferredTasks: [Int32] = []
    private var deferredAddresses = AddressSet()
    let includesTasks: Bool
    /// Whether the scope left out a task.
    var leftOutTasks: Bool { !includesTasks && !deferredTasks.isEmpty }
    /// The addresses of the objects of attached nodes, whole and their low halves (to find those
    /// in the scope in one pass, ``cnm_find_candidates``).
    private let attached: [UInt]
    private let attachedLows: [UInt32]

    /// The scope of `targets` (blocks of `graph`), at most `limit` blocks, with the tasks that
    /// lead to them or not; `attached` are the first phase's roots that are blocks.
    init(
        targets: [Int32], holders: HolderIndex, graph: HeapGraph, attached: [RetainerAnalysis.NodeObject],
        includingTasks: Bool, limit: Int = 16_384
    ) {
        self.holders = holders
        includesTasks = includingTasks
        self.graph = graph
        let index = graph.index
        self.limit = limit
        let attachedAddresses = attached.map(\.address.address)
        self.attached = attachedAddresses
        attachedLows = attachedAddresses.map { UInt32(truncatingIfNeeded: $0) }
        var unique: [Int32] = []
        for block in targets where addresses.insert(index.starts[Int(block)]) { unique.append(block) }
        blocks = unique
        frontier = unique
    }

    /// Adds one level: the blocks that hold a block of the last one.
    mutating func extend() -> Step {
        var added: [Int32] = []
        var addedAddresses: [UInt] = []
        var metRoots = false
        let regions = holders.snapshot.regions
        let (graph, index) = (self.graph, graph.index)
        holders.forEachHolder(ofAny: frontier.map { index.starts[Int($0)] }) { _, region, offset in
            switch regions[region].kind {
            case .imageData:
                metRoots = true
                roots.append((region, offset))
            case .stack:
                // A root of a later phase: the scope stops there, and is complete without it.
                roots.append((region, offset))
            case .mainHeap, .arenaHeap, .mappedChunks:
                let holder = index.block(containing: regions[region].start + UInt(offset))
                guard holder >= 0 else { return }  // free memory
                let start = index.starts[Int(holder)]
                guard !addresses.contains(start) else { return }
                // A weak reference's side table is never entered: it holds nothing on a path.
                guard !graph.isSideTable(holder) else { return }
                if !includesTasks, graph.isTask(holder) {
                    if deferredAddresses.insert(start) { deferredTasks.append(holder) }
                    return
                }
                addresses.insert(start)
                addedAddresses.append(start)
                added.append(holder)
            }
        }
        guard !added.isEmpty else { return .complete }
        level += 1
        blocks += added
        guard blocks.count <= limit else { return .tooLarge }
        if !metRoots { metRoots = !attachedPositions(among: addedAddresses).isEmpty }
        frontier = added
        return .grew(metRoots: metRoots)
    }

    /// The positions in the attached objects (ascending) of those whose address is a block of
    /// the scope.
    func attachedPositions() -> [Int] {
        attachedPositions(among: blocks.map { graph.index.starts[Int($0)] })
    }

    private func attachedPositions(among starts: [UInt]) -> [Int] {
        guard !starts.isEmpty, !attached.isEmpty else { return [] }
        let lows = Array(Set(starts.map { UInt32(truncatingIfNeeded: $0) })).sorted()
        var found = [UInt32](repeating: 0, count: 64)
        var hits = 0
        while true {
            let capacity = found.count
            hits = found.withUnsafeMutableBufferPointer { found in
                cnm_find_candidates(attachedLows, attachedLows.count, lows, lows.count, found.baseAddress, capacity)
            }
            guard hits > capacity else { break }
            found = [UInt32](repeating: 0, count: hits)
        }
        let wanted = Set(starts)
        return found[0..<hits].map(Int.init).filter { wanted.contains(attached[$0]) }
    }
}

/// A set of nonzero addresses, open addressing in a power-of-two table.
struct AddressSet {
    private var slots: [UInt] = Array(repeating: 0, count: 16)
    private(set) var count = 0

    @inline(__always)
    private static func slot(of address: UInt, mask: Int) -> Int {
        Int(truncatingIfNeeded: ((address >> 4) &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
    }

    /// Inserts `address`; false when it was there.
    @discardableResult
    mutating func insert(_ address: UInt) -> Bool {
        guard address != 0 else { return false }
        if (count + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        var slot = Self.slot(of: address, mask: mask)
        while slots[slot] != 0 {
            if slots[slot] == address { return false }
            slot = (slot + 1) & mask
        }
        slots[slot] = address
        count += 1
        return true
    }

    @inline(__always)
    func contains(_ address: UInt) -> Bool {
        let mask = slots.count - 1
        var slot = Self.slot(of: address, mask: mask)
        while slots[slot] != 0 {
            if slots[slot] == address { return true }
            slot = (slot + 1) & mask
        }
        return false
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        count = 0
        for address in old where address != 0 { insert(address) }
    }
}
