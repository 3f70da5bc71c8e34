import CNodesMemory
import NodesTracking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The searches of one analysis over a ``HeapGraph``: a breadth-first search from every root at
/// once (so each object found gets a shortest path), and from an object back to itself.
///
/// Roots are the objects of attached nodes (holders in their own right, where a path starts),
/// the words of the images' data (globals), and then, only for what those do not explain, the
/// words of the threads' stacks and the frames of async tasks (after cycles for a live report, so
/// that it names the cycle; before them for an exit's settlement, so that a cycle a stack or a
/// task reaches is not taken for one that nothing reaches): a stack keeps dead
/// copies of references that a finished call left behind (and a frame's slots, before they are
/// set, what an earlier frame left there), so they are the weakest evidence and are heard last.
final class RetainerSearch {
    /// Where a path starts.
    enum Root {
        /// An object of an attached node: the block is the first holder.
        case attached(nodeID: UInt64)
        /// A word of an image's data, or of a thread's stack: `address`, in snapshot region `region`.
        case word(address: UInt, region: Int)
        /// An object on a cycle (block `block`): not a root, but what holds the objects that only
        /// the cycle keeps.
        case cycleMember(block: Int32)
    }

    /// A path as the search found it: where it starts (nil for a cycle, which starts at the
    /// object), and each reference as (holder block, offset in it); each refers to the next
    /// holder, the last to the object.
    struct Path {
        var root: Root?
        var start: Int32
        var edges: [(holder: Int32, offset: Int)]
    }

    let graph: HeapGraph
    private let clock: () -> UInt64
    private let deadline: UInt64

    /// Per block: bit 0 reached from a root, bit 1 never entered (a weak reference's side table),
    /// bit 2 a target, bit 3 no root (while attached nodes' objects are made roots).
    private let flags: UnsafeMutableBufferPointer<UInt8>
    /// Per block reached: the block that refers to it (or -2 - its root's index), and where.
    private let via: UnsafeMutableBufferPointer<Link>
    /// The blocks reached, in the order reached (each once).
    private let queue: UnsafeMutableBufferPointer<Int32>
    @exclusivity(unchecked) private var queued = 0
    @exclusivity(unchecked) private var head = 0
    /// Whether the frames of async tasks are entered; until then they wait in `deferred`.
    @exclusivity(unchecked) private var entersTasks = false
    @exclusivity(unchecked) private var deferred: [Int32] = []
    /// The roots, past those of ``attachedRoots``.
    @exclusivity(unchecked) private var roots: [Root] = []
    @exclusivity(unchecked) private var targetsLeft = 0
    /// Whether a search stopped at the deadline.
    @exclusivity(unchecked) private(set) var cutShort = false
    /// Blocks looked into, for the statistics.
    @exclusivity(unchecked) private(set) var blocksScanned = 0
    /// Of those, the blocks whose references a second thread read (``ReadAhead``).
    @exclusivity(unchecked) private(set) var blocksReadAhead = 0
    /// When a second thread reads the blocks' references ahead of the search, where its queue
    /// holds enough of them (``ReadAhead/leastBlocks``).
    private let readsAhead: RetainerAnalysis.ReadingAhead

    private var cycleStamp: UInt32 = 0
    private var cycleSeen: UnsafeMutableBufferPointer<UInt32>?
    private var cycleVia: UnsafeMutableBufferPointer<Int32>?
    private var cycleOffset: UnsafeMutableBufferPointer<UInt32>?

    /// A reference that reached a block: its holder and the offset in it.
    private struct Link {
        var holder: Int32
        var offset: UInt32
    }

    private static let reached: UInt8 = 1
    private static let excluded: UInt8 = 2
    /// A block reached, or never entered: a reference to it is passed by.
    static let settledFlags = reached | excluded
    private static let target: UInt8 = 4
    /// While the objects of attached nodes are made roots: a detached node's object.
    private static let notRoot: UInt8 = 8

    /// A search over `graph` for `targets` (blocks), until `deadline` on `clock`, from the
    /// objects of attached nodes `attached` (each in a block in use, unless its block is one of
    /// `detached`: an object that a detached node shares holds nothing as a root); with
    /// `readsAhead` saying when, a second thread reads blocks ahead of the search (``ReadAhead``).
    /// The blocks of `excluded` are never entered (memory that holds bytes, not references).
    init(
        graph: HeapGraph, targets: [Int32], attached: [RetainerAnalysis.NodeObject], detached: [Int32],
        excluded: [Int32] = [], within scope: BackwardScope? = nil, deadline: UInt64, clock: @escaping () -> UInt64,
        readsAhead: RetainerAnalysis.ReadingAhead = .whenAProcessorIsFree
    ) {
        self.graph = graph
        self.readsAhead = readsAhead
        self.deadline = deadline
        self.clock = clock
        attachedRoots = attached
        let count = graph.count
        let flags = tables.zeroed(count, as: UInt8.self)
        self.flags = flags
        // Read only for blocks reached, which are written first: never filled.
        via = tables.zeroed(count, as: Link.self)
        queue = tables.zeroed(count, as: Int32.self)
        // Kept to a scope: every other block is never entered, as if it held bytes.
        self.scope = scope?.addresses
        scopeWords = scope?.rootWords
        if let scope {
            flags.initialize(repeating: Self.excluded)
            for block in scope.blocks { flags[Int(block)] = 0 }
        }
        for target in targets where flags[Int(target)] & Self.target == 0 {
            flags[Int(target)] |= Self.target
            targetsLeft += 1
        }
        for block in excluded where flags[Int(block)] & Self.target == 0 { flags[Int(block)] |= Self.excluded }
        for block in detached { flags[Int(block)] |= Self.notRoot }
        let index = graph.index
        let skipped = Self.reached | Self.target | Self.notRoot
        // Kept to a scope, only its attached objects (in their order); else every one.
        let inScope = scope?.attachedPositions()
        attached.withUnsafeBufferPointer { objects in
            func add(_ position: Int) {
                let block = index.block(at: objects[position].address.address)
                guard block >= 0, flags[Int(block)] & skipped == 0 else { return }
                reach(block, from: -2 - Int32(position), offset: 0)
            }
            if let inScope {
                for position in inScope { add(position) }
            } else {
                for position in objects.indices { add(position) }
            }
        }
        for block in detached { flags[Int(block)] &= ~Self.notRoot }
    }

    /// Where the per-block tables are.
    private let tables = ZeroedTables()
    /// The addresses of the blocks the search is kept to (``BackwardScope``), if it is, and the
    /// words of the images' data and of the stacks that hold one of them (region, offset), in
    /// the order of the snapshot.
    private let scope: AddressSet?
    private let scopeWords: [(region: Int, offset: Int)]?

    /// Whether `block` was reached from a root.
    func isReached(_ block: Int32) -> Bool { flags[Int(block)] & Self.reached != 0 }

    // MARK: From the roots

    /// The objects of attached nodes, the first roots: root `n` is the `n`th (see ``root(_:)``),
    /// so that no root is made for each of hundreds of thousands; ``roots`` follow.
    private let attachedRoots: [RetainerAnalysis.NodeObject]

    /// Adds `root`: what a block that it reaches is reached from.
    @inline(__always)
    private func add(_ root: Root) -> Int32 {
        roots.append(root)
        return -2 - Int32(attachedRoots.count + roots.count - 1)
    }

    /// Root number `number` (a block reached from it links to `-2 - number`).
    private func root(_ number: Int) -> Root {
        number < attachedRoots.count ? .attached(nodeID: attachedRoots[number].nodeID) : roots[number - attachedRoots.count]
    }

    /// From now on, enters the frames of async tasks, those met so far first.
    func enterTasks() {
        entersTasks = true
        for block in deferred {
            graph.forEachReference(from: block) { offset, target in
                guard flags[Int(target)] & (Self.reached | Self.excluded) == 0 else { return false }
                reach(target, from: block, offset: offset)
                return false
            }
        }
        deferred.removeAll()
    }

    /// Adds objects on cycles as the starts of paths to what only they keep.
    func addCycleMembers(_ blocks: [Int32]) {
        for block in blocks where flags[Int(block)] & Self.reached == 0 {
            reach(block, from: add(.cycleMember(block: block)), offset: 0)
        }
    }

    /// Adds every word of the snapshot's regions that `include` accepts as a root.
    /// `isRoot`, when given, is asked about each word of an image's data that points at a block
    /// of no known shape (neither an object nor a collection nor a closure's context).
    func addWords(of include: (MemorySnapshot.Kind) -> Bool, isRoot: ((UInt, String) -> Bool)? = nil) {
        let index = graph.index
        let regions = graph.snapshot.regions
        // The metadata allocator's first pool is in the runtime's data: its free part is no root.
        let free = graph.metadataPoolFree ?? 0..<0
        func consider(_ position: Int, word: Int) {
            let region = regions[position]
            let value = region.copy.load(fromByteOffset: word * 8, as: UInt.self)
            guard value & 15 == 0 else { return }
            let block = index.block(at: value)
            if block >= 0, flags[Int(block)] & (Self.reached | Self.excluded) == 0,
                isRoot.map({ isRoot in
                    // Only a block of no known shape may be the runtime's (a pool, a cache).
                    guard case .imageData(let path) = region.kind, case .plain = graph.shape(of: block) else { return true }
                    return isRoot(region.start + UInt(word * 8), path)
                }) ?? true
            {
                reach(block, from: add(.word(address: region.start + UInt(word * 8), region: position)), offset: 0)
            }
        }
        // Kept to a scope: only the words that hold one of its blocks, which the scope found, in
        // the same order.
        if let scopeWords {
            for (position, offset) in scopeWords where include(regions[position].kind) {
                guard !free.contains(regions[position].start + UInt(offset)) else { continue }
                consider(position, word: offset / 8)
            }
            return
        }
        for (position, region) in regions.enumerated() where include(region.kind) {
            let words = Int(region.end - region.start) / 8
            var word = 0
            while word < words {
                if free.contains(region.start + UInt(word * 8)) {
                    word = Int(free.upperBound - region.start + 7) / 8
                    continue
                }
                if word & 0xFFFF == 0, clock() >= deadline {
                    cutShort = true
                    return
                }
                consider(position, word: word)
                word += 1
            }
        }
    }

    /// Goes on breadth first until every target is reached, nothing is left, or the deadline.
    /// A reference held only in a block's doubtful word (``HeapGraph/doubtfulWord(of:shape:)``)
    /// is followed once nothing else is left from these roots: a path through a word that may be
    /// a leftover is taken only where no path without one exists, so that what a report names
    /// does not depend on what a chunk held before.
    func run() {
        while true {
            runAlongCertainReferences()
            guard !cutShort, targetsLeft > 0, !doubtful.isEmpty else { return }
            followedDoubtful = true
            let waiting = doubtful
            doubtful.removeAll(keepingCapacity: true)
            for link in waiting where flags[Int(link.target)] & (Self.reached | Self.excluded) == 0 {
                reach(link.target, from: link.holder, offset: Int(link.offset))
            }
        }
    }

    /// Whether a run followed the references of doubtful words (none was left without them).
    @exclusivity(unchecked) private(set) var followedDoubtful = false

    /// Whether this search's first phase, kept to a ``BackwardScope`` of `levels` levels that is
    /// not complete yet, found for every one of `targets` the path that a search of the whole
    /// heap finds: a path of at most `levels` references, found before any doubtful word was
    /// followed.
    func reachesAll(_ targets: [Int32], within levels: Int) -> Bool {
        guard !cutShort, !followedDoubtful else { return false }
        return targets.allSatisfy { target in pathFromRoot(to: target).map { $0.edges.count <= levels } ?? false }
    }

    /// The references met in doubtful words, not followed yet.
    @exclusivity(unchecked) private var doubtful: [(holder: Int32, offset: UInt32, target: Int32)] = []

    private func runAlongCertainReferences() {
        if readsAhead != .never, queued - head >= ReadAhead.leastBlocks,
            readsAhead != .whenAProcessorIsFree || ReadAhead.processorIsFree(),
            let reader = ReadAhead.start(
                graph: graph, queue: queue, flags: flags, from: head, filled: queued, stallingAfter: readsAhead.stallingAfter)
        {
            let alone = runAlongReferences(readBy: reader)
            reader.stop()
            // The reader gave way (not getting a processor): on from where it was, alone.
            guard alone else { return }
        }
        let graph = self.graph
        var scanned = 0
        defer { blocksScanned += scanned }
        while head < queued, targetsLeft > 0 {
            if scanned & 63 == 0, clock() >= deadline {
                cutShort = true
                return
            }
            let block = queue[head]
            // The search is bound by memory: ask for the blocks a few steps ahead now.
            // (Where a block is, then the block itself.)
            if head + 16 < queued { graph.index.prefetchPlace(queue[head + 16]) }
            if head + 8 < queued { graph.index.prefetch(queue[head + 8]) }
            head += 1
            scanned += 1
            enter(block)
        }
    }

    /// Enters `block` on this thread: reaches what its references lead to, in order, until
    /// every target is reached.
    @inline(__always)
    private func enter(_ block: Int32) {
        let graph = self.graph
        let flags = self.flags
        let shape = graph.shape(of: block)
        switch shape {
        case .plain:
            // A weak reference's side table is reached (a weak reference points at it) but
            // not entered: it leads to the object without holding it. (Its first word is an
            // object's address, so its shape is plain.)
            if graph.isSideTable(block) {
                Self.mark(flags, block, Self.excluded)
                return
            }
        case .task, .taskSlab:
            if !entersTasks {
                deferred.append(block)
                return
            }
        case .object, .closureContext, .array, .dictionary, .set:
            break
        }
        let doubtfulWord = graph.doubtfulWord(of: block, shape: shape)
        graph.forEachReference(from: block, shape: shape) { offset, target in
            guard flags[Int(target)] & (Self.reached | Self.excluded) == 0 else { return false }
            guard offset != doubtfulWord else {
                doubtful.append((block, UInt32(clamping: offset), target))
                return false
            }
            reach(target, from: block, offset: offset)
            return targetsLeft == 0
        }
    }

    /// ``runAlongCertainReferences()`` with two thirds of the blocks read by `reader`, and the
    /// others entered here (``ReadAhead/entersItself(_:)``), in the queue's order: the same
    /// blocks reached, from the same holders. The graph's view that the reader reads through is
    /// its own (``HeapGraph/init(sharing:)``). Returns true where the search is to go on
    /// alone from its next block: the reader was late with one (``ReadAhead/Cursor/Take/late``),
    /// and what it wrote from that block on is dropped unread.
    private func runAlongReferences(readBy reader: ReadAhead) -> Bool {
        let graph = self.graph
        let flags = self.flags
        var scanned = 0
        var read = 0
        defer {
            blocksScanned += scanned
            blocksReadAhead += read
        }
        let (deadline, clock) = (self.deadline, self.clock)
        var reader = ReadAhead.Cursor(reader, waitsForEveryBlock: readsAhead == .always)
        while head < queued, targetsLeft > 0 {
            if scanned & 63 == 0, clock() >= deadline {
                cutShort = true
                return false
            }
            reader.publish(queued)
            let position = head
            let block = queue[position]
            if ReadAhead.entersItself(position) {
                head += 1
                scanned += 1
                // This thread's: ask for its next ones ahead, as alone.
                if position + 16 < queued { graph.index.prefetchPlace(queue[position + 16]) }
                if position + 8 < queued { graph.index.prefetch(queue[position + 8]) }
                enter(block)
                continue
            }
            let header: UInt64
            switch reader.header(deadline: deadline, clock: clock) {
            case .record(let record): header = record
            case .late: return true
            case .pastDeadline:
                cutShort = true
                return false
            }
            guard let kind = ReadAhead.kind(of: header) else {
                cutShort = true
                return false
            }
            head += 1
            scanned += 1
            read += 1
            let followed: Bool
            switch kind {
            case .entered: followed = true
            case .sideTable:
                Self.mark(flags, block, Self.excluded)
                followed = false
            case .task:
                followed = entersTasks
                if !entersTasks { deferred.append(block) }
            }
            let doubtfulWord = ReadAhead.doubtfulWord(of: header)
            while true {
                guard let record = reader.next(deadline: deadline, clock: clock) else {
                    cutShort = true
                    return false
                }
                if record == ReadAhead.end { break }
                guard followed else { continue }
                let offset = Int(record >> 32)
                let target = Int32(truncatingIfNeeded: record)
                guard flags[Int(target)] & (Self.reached | Self.excluded) == 0 else { continue }
                guard offset != doubtfulWord else {
                    doubtful.append((block, UInt32(clamping: offset), target))
                    continue
                }
                reach(target, from: block, offset: offset)
                if targetsLeft == 0 { return false }
            }
            reader.release()
        }
        return false
    }

    /// Sets `bit` of `block`'s flags. While a reader runs, it reads them (``ReadAhead``): a
    /// relaxed store, a plain one on x86-64 and arm64.
    @inline(__always)
    private static func mark(_ flags: UnsafeMutableBufferPointer<UInt8>, _ block: Int32, _ bit: UInt8) {
        let byte = flags.baseAddress! + Int(block)
        cnm_store_relaxed_byte(byte, byte.pointee | bit)
    }

    @inline(__always)
    private func reach(_ block: Int32, from holder: Int32, offset: Int) {
        Self.mark(flags, block, Self.reached)
        via[Int(block)] = Link(holder: holder, offset: UInt32(clamping: offset))
        queue[queued] = block
        queued += 1
        if flags[Int(block)] & Self.target != 0 { targetsLeft -= 1 }
    }

    /// The shortest path found from a root to `target`.
    func pathFromRoot(to target: Int32) -> Path? {
        guard isReached(target) else { return nil }
        var edges: [(holder: Int32, offset: Int)] = []
        var block = target
        while via[Int(block)].holder >= 0, edges.count <= graph.count {
            edges.append((via[Int(block)].holder, Int(via[Int(block)].offset)))
            block = via[Int(block)].holder
        }
        let root = root(Int(-2 - via[Int(block)].holder))
        return Path(root: root, start: block, edges: edges.reversed())
    }

    // MARK: Cycles

    /// The shortest path from `target` back to itself through blocks that no root reaches, if
    /// there is one (a block a root reaches cannot be on a cycle of an object no root reaches).
    func cycle(through target: Int32) -> Path? {
        let count = graph.count
        // Zeroed (a stamp is never 0); the others are read only where `seen` was stamped.
        let seen = cycleSeen ?? tables.zeroed(count, as: UInt32.self)
        let cycleVia = self.cycleVia ?? tables.zeroed(count, as: Int32.self)
        let cycleOffset = self.cycleOffset ?? tables.zeroed(count, as: UInt32.self)
        (cycleSeen, self.cycleVia, self.cycleOffset) = (seen, cycleVia, cycleOffset)
        cycleStamp &+= 1
        let stamp = cycleStamp
        let graph = self.graph
        let flags = self.flags
        seen[Int(target)] = stamp
        var pending: [Int32] = [target]
        var next = 0
        var closing: (holder: Int32, offset: Int)?
        // As in ``run()``: a doubtful word is followed once nothing else is left.
        var doubtful: [(holder: Int32, offset: Int, referred: Int32)] = []
        func follow(_ referred: Int32, from block: Int32, offset: Int) -> Bool {
            if referred == target {
                closing = (block, offset)
                return true
            }
            guard seen[Int(referred)] != stamp, flags[Int(referred)] & (Self.reached | Self.excluded) == 0 else {
                return false
            }
            seen[Int(referred)] = stamp
            cycleVia[Int(referred)] = block
            cycleOffset[Int(referred)] = UInt32(clamping: offset)
            pending.append(referred)
            return false
        }
        while closing == nil {
            if next == pending.count {
                guard !doubtful.isEmpty else { break }
                let waiting = doubtful
                doubtful.removeAll()
                for link in waiting where follow(link.referred, from: link.holder, offset: link.offset) { break }
                continue
            }
            if next & 63 == 0, clock() >= deadline {
                cutShort = true
                return nil
            }
            let block = pending[next]
            next += 1
            blocksScanned += 1
            if block != target, graph.isSideTable(block) || graph.isTask(block) { continue }
            let shape = graph.shape(of: block)
            let doubtfulWord = graph.doubtfulWord(of: block, shape: shape)
            graph.forEachReference(from: block, shape: shape) { offset, referred in
                guard offset != doubtfulWord else {
                    doubtful.append((block, offset, referred))
                    return false
                }
                return follow(referred, from: block, offset: offset)
            }
        }
        guard let closing else { return nil }
        var edges = [closing]
        var block = closing.holder
        while block != target, edges.count <= count {
            edges.append((cycleVia[Int(block)], Int(cycleOffset[Int(block)])))
            block = cycleVia[Int(block)]
        }
        return Path(root: nil, start: target, edges: edges.reversed())
    }

}

/// The per-block tables of a search, which it frees with it: mapped memory, zero until written,
/// so a table of 900,000 blocks costs only the pages a search writes (in large pages where the
/// kernel gives them on request), not a fill of every entry. Where nothing can be mapped,
/// zeroed allocations.
private final class ZeroedTables {
    private var mapped: [(base: UnsafeMutableRawPointer, length: Int)] = []
    private var allocated: [UnsafeMutableRawPointer] = []

    /// A table of `count` entries, each zero.
    func zeroed<Element>(_ count: Int, as type: Element.Type) -> UnsafeMutableBufferPointer<Element> {
        let length = max(1, count) * MemoryLayout<Element>.stride
        let base: UnsafeMutableRawPointer
        if let found = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
            found != UnsafeMutableRawPointer(bitPattern: -1)
        {
            // Refused or ignored where the kernel has no large pages, which is fine.
            _ = madvise(found, length, HeapIndex.hugePages)
            mapped.append((found, length))
            base = found
        } else {
            base = .allocate(byteCount: length, alignment: MemoryLayout<Element>.alignment)
            base.initializeMemory(as: UInt8.self, repeating: 0, count: length)
            allocated.append(base)
        }
        return UnsafeMutableBufferPointer(start: base.bindMemory(to: Element.self, capacity: count), count: count)
    }

    deinit {
        for (base, length) in mapped { munmap(base, length) }
        for base in allocated { base.deallocate() }
    }
}
