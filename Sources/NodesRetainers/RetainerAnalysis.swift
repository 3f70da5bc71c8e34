import NodesTracking
internal import NodescopeSocket
import NodescopeWire
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds what keeps objects of detached nodes alive, inside the process, without a debugger:
/// the shortest path of strong references from a root (a global, an object of an attached node,
/// a thread's stack) to each object, or else a cycle of references through it.
///
/// It copies the memory that can hold references (the malloc heaps, the images' data, the other
/// threads' stacks) with safe reads before it builds anything, so that a wrong guess about a
/// word never crashes the process and its own allocations never read as holders. It then walks
/// glibc's chunks to know the blocks in use, reads Swift objects through their validated
/// metadata (strong fields only; arrays up to their count, dictionaries and sets by occupied
/// bucket), and searches breadth first from every root at once.
///
/// Each call is bounded in time (``Limits/timePerObjectNanos`` per object, at least
/// ``Limits/leastTimePerBatchNanos`` and at most ``Limits/timePerBatchNanos``), in objects per
/// call and in objects per process: past a bound,
/// results say so (`cutShort`, or ``RetainerVerdict/notAnalyzed`` with a note).
///
/// ```swift
/// let analysis = RetainerAnalysis()
/// let frames = analysis.explain(
///     [RetainerAnalysis.Target(context, nodeID: id.rawValue, objectIndex: 1)],
///     attached: [], detached: [])
/// ```
///
/// Only the agent's writer thread (or a test) calls it; one call at a time runs in a process.
/// It reads glibc's heap on Linux; elsewhere every object is ``RetainerVerdict/notAnalyzed``.
package final class RetainerAnalysis {
    /// An object to explain: which object of which node, and where it is.
    package struct Target: Sendable, Equatable {
        /// The node.
        package var nodeID: UInt64
        /// The object's index in the node.
        package var objectIndex: UInt16
        /// Where the object is.
        package var address: ObfuscatedAddress
        /// The object's type name as the tracker knows it, to check that the address still holds
        /// it; nil not to check.
        package var typeName: String?

        /// A target at `address`.
        package init(nodeID: UInt64, objectIndex: UInt16, address: ObfuscatedAddress, typeName: String? = nil) {
            self.nodeID = nodeID
            self.objectIndex = objectIndex
            self.address = address
            self.typeName = typeName
        }

        /// A target for `object` (the object itself is not kept).
        package init(_ object: AnyObject, nodeID: UInt64, objectIndex: UInt16) {
            self.init(
                nodeID: nodeID, objectIndex: objectIndex, address: ObfuscatedAddress(object),
                typeName: String(describing: type(of: object)))
        }
    }

    /// An object of a node: a root when the node is attached, a member of the leaking set when
    /// it is detached.
    package struct NodeObject: Sendable, Equatable {
        /// The node.
        package var nodeID: UInt64
        /// Where the object is.
        package var address: ObfuscatedAddress
        /// Its role in the node (`presenter`, `view`), when known: a reference from one role to
        /// another that the role owns is never the suspect of a cycle
        /// (``RetainerAnalysis/ownedRoles``).
        package var role: String? {
            get { roleNumber == 0 ? nil : NodeObject.roleNames.withLock { $0[Int(roleNumber) - 1] } }
            set { roleNumber = newValue.map(NodeObject.number(ofRole:)) ?? 0 }
        }
        /// The role as a number in ``roleNames`` (plus one; 0 for none), so that an object is a
        /// plain value: the query copies the objects of every attached node, 300,000 at 100,000
        /// nodes, and a `String` in each made copying and releasing them cost milliseconds.
        private var roleNumber: UInt32 = 0
        private static let roleNames = Mutex<[String]>([])

        private static func number(ofRole role: String) -> UInt32 {
            roleNames.withLock { names in
                if let known = names.firstIndex(of: role) { return UInt32(known + 1) }
                names.append(role)
                return UInt32(names.count)
            }
        }

        /// An object of node `nodeID` at `address`.
        package init(nodeID: UInt64, address: ObfuscatedAddress, role: String? = nil) {
            self.nodeID = nodeID
            self.address = address
            self.role = role
        }

        /// `object`, of node `nodeID` (the object itself is not kept).
        package init(_ object: AnyObject, nodeID: UInt64) {
            self.init(nodeID: nodeID, address: ObfuscatedAddress(object))
        }
    }

    /// The bounds of the analysis.
    package struct Limits: Sendable {
        /// The time allowed per object explained.
        package var timePerObjectNanos: UInt64 = 50_000_000
        /// The most time one call may take, whatever its number of objects.
        package var timePerBatchNanos: UInt64 = 1_000_000_000
        /// The time one call may always take, however few its objects: copying and indexing the
        /// memory comes first, whatever the number of objects, and a debug build of the host
        /// (where the agent runs by default) does it several times slower than a release build.
        package var leastTimePerBatchNanos: UInt64 = 250_000_000
        /// The most objects one call explains; the others are not analyzed.
        package var objectsPerBatch = 64
        /// The most objects the analysis explains in the life of the process.
        package var objectsPerProcess = 4_096
        /// The most memory copied; a process with more writable memory is not analyzed.
        package var snapshotBytes = 4 << 30
        /// Whether the analysis runs in a forked child that reads the memory in place
        /// (``FrozenChild``) rather than copying it on the calling thread; the copy remains
        /// where a fork is refused. On unless `NODESCOPE_RETAINER_FORK=0`.
        package var analyzesInChild = RetainerAnalysis.analyzesInChildByDefault
        /// When the search reads blocks on a second thread ahead of it (``ReadAhead``), where it
        /// has thousands of blocks to enter.
        package var readsAhead = ReadingAhead.whenAProcessorIsFree
        /// Whether the search is first kept to the blocks that may lead to its targets, found
        /// backwards from them (``BackwardScope``); else it goes forward over the whole heap.
        /// Both find the same paths. On unless `NODESCOPE_RETAINER_BACKWARDS=0`.
        package var searchesBackwards = RetainerAnalysis.searchesBackwardsByDefault

        /// The default bounds.
        package init() {}
    }

    /// When the search has a second thread read blocks ahead of it.
    package enum ReadingAhead: Sendable, Equatable {
        /// Never: one thread.
        case never
        /// Where a processor is free when the search goes on (``ReadAhead/processorIsFree()``):
        /// on a busy machine a second thread only shares the first one's time.
        case whenAProcessorIsFree
        /// Whatever the machine's load, and waiting for the reader however long it is kept from
        /// a processor, never going on alone (tests that compare the two ways: a loaded machine
        /// changes neither what is read ahead nor what is found).
        case always
        /// Always, with a reader that stops after reading `blocks` blocks, as one that loses its
        /// processor for good would: tests of the search going on alone when its reader is late.
        case stallingAfter(blocks: Int)

        /// The blocks after which the reader stalls: all of them but in tests.
        var stallingAfter: Int {
            if case .stallingAfter(let blocks) = self { max(0, blocks) } else { .max }
        }
    }

    /// What the last call did.
    package struct Statistics: Sendable {
        /// The bytes copied (heaps, images' data, stacks).
        package var bytesCopied = 0
        /// The heap blocks in use found.
        package var blocks = 0
        /// The blocks whose references were followed.
        package var blocksScanned = 0
        /// Of those, the blocks whose references a second thread read.
        package var blocksReadAhead = 0
        /// How long the call took.
        package var elapsedNanos: UInt64 = 0
        /// How long the copy took.
        package var copyNanos: UInt64 = 0
        /// How long walking the heaps took.
        package var indexNanos: UInt64 = 0
        /// How long the searches took.
        package var searchNanos: UInt64 = 0
        /// Whether a heap could not be walked to its end (changed while it was copied).
        package var heapIncomplete = false
        /// The other threads' stacks copied at one instant (``MemorySnapshot/captureStacks(milliseconds:)``).
        package var stacksCaptured = 0
        /// How long that took: the longest any thread was stopped.
        package var captureNanos: UInt64 = 0
        /// How long indexing the holders took (``HolderIndex``), where the search was first kept
        /// to the blocks that may lead to its targets.
        package var holdersNanos: UInt64 = 0
        /// The blocks the search was kept to, or 0 where it searched the whole heap.
        package var scopeBlocks = 0
        /// Whether the analysis was to run in a forked child that then waited on a lock held at
        /// the fork (``FrozenChild/Outcome/blocked``), so that it copied the memory instead.
        package var childWaitedOnLock = false
    }

    /// The bounds in force.
    package let limits: Limits
    /// What the last call did.
    package private(set) var lastRun = Statistics()
    /// The addresses of the blocks on each path of the last call (the holders, then the object),
    /// by target position: for tests, and only where the analysis ran in this process (a forked
    /// child answers with the named paths alone).
    package private(set) var lastPathBlocks: [Int: [UInt]] = [:]

    private let clock: @Sendable () -> UInt64
    private var objectsExplained = 0
    private let catalog = TypeCatalog()
    private let globals = GlobalNames()
    /// One analysis at a time in a process: each copies the memory, and a copy must not see
    /// another's buffers.
    private static let serial = Mutex(())

    /// Runs `body` while no analysis runs in this process (it holds what each analysis holds):
    /// for a test whose thread must not be interrupted by another analysis's capture of the
    /// stacks while it gets into a call that the capture then leaves alone.
    package static func withNoAnalysisRunning(_ body: () -> Void) {
        serial.withLock { _ in body() }
    }

    /// An analysis with `limits`, timed by `clock` (host monotonic nanoseconds).
    package init(limits: Limits = Limits(), clock: @escaping @Sendable () -> UInt64 = { MonotonicClock.now() }) {
        self.limits = limits
        self.clock = clock
    }

    /// Explains `targets`: one frame per target, in their order.
    ///
    /// - Parameters:
    ///   - attached: the objects of attached nodes (roots: a path starts there).
    ///   - detached: the alive objects of detached nodes (with the targets, the leaking set: the
    ///     suspect hop is the reference that enters it).
    ///   - countingAgainstBudget: whether the targets count against the process's budget
    ///     (``Limits/objectsPerProcess``); an analysis the collector asked for does not.
    ///   - boundNanos: a tighter bound on this call's time than the limits give (an exit's
    ///     flush has this much left), or nil.
    ///   - stacksFirst: whether threads' stacks and tasks are searched before cycles (an exit's
    ///     settlement, where a `cycle` must prove that nothing else reaches the object); else
    ///     cycles come first, so a live report names the cycle even when a conservative scan
    ///     finds a stale stack word that points into it.
    package func explain(
        _ targets: [Target], attached: [NodeObject], detached: [NodeObject], countingAgainstBudget: Bool = true,
        boundNanos: UInt64? = nil, stacksFirst: Bool = false
    ) -> [RetainersFrame] {
        let start = clock()
        guard !targets.isEmpty else { return [] }
        var batch = targets
        var overflow: [(Target, String)] = []
        if batch.count > limits.objectsPerBatch {
            overflow += batch[limits.objectsPerBatch...].map {
                ($0, "not analyzed: more than \(limits.objectsPerBatch) objects in one analysis")
            }
            batch.removeLast(batch.count - limits.objectsPerBatch)
        }
        let allowed = countingAgainstBudget ? max(0, limits.objectsPerProcess - objectsExplained) : batch.count
        if batch.count > allowed {
            overflow += batch[allowed...].map {
                ($0, "not analyzed: this process's analysis budget (\(limits.objectsPerProcess) objects) is used up")
            }
            batch.removeLast(batch.count - allowed)
        }
        if countingAgainstBudget { objectsExplained += batch.count }
        var frames: [RetainersFrame] = []
        if !batch.isEmpty {
            // The work stops at four fifths of the bound: releasing a large copy takes the rest.
            let perObjects = max(limits.leastTimePerBatchNanos, limits.timePerObjectNanos &* UInt64(batch.count))
            let bound = min(limits.timePerBatchNanos, perObjects, boundNanos ?? .max)
            let deadline = start &+ bound / 5 * 4
            frames = Self.serial.withLock { _ in
                analyze(
                    batch, attached: attached, detached: detached, start: start, deadline: deadline, bound: start &+ bound,
                    stacksFirst: stacksFirst)
            }
        }
        let elapsed = clock() &- start
        lastRun.elapsedNanos = elapsed
        for (target, note) in overflow {
            frames.append(frame(for: target, verdict: .notAnalyzed, note: note))
        }
        let micros = UInt32(clamping: elapsed / 1_000)
        return frames.map { frame in
            var frame = frame
            frame.elapsedMicros = micros
            return frame
        }
    }

    // MARK: The analysis

    /// The task that runs this code, if any, and its parents up to the top, as they are now: a
    /// child task's parent follows its own fields (the flags say whether it is a child), and each
    /// is checked to be a task by its first word.
    private func ownTasks() -> [UInt] {
        guard let marker = catalog.taskMetadata, let taskSize = catalog.taskSize else { return [] }
        var tasks: [UInt] = []
        var task = withUnsafeCurrentTask { task in task.map { unsafeBitCast($0, to: UInt.self) } }
        while let current = task, tasks.count < 64, ProcessMemory.word(at: current) == marker {
            tasks.append(current)
            guard let flags = ProcessMemory.word(at: current &+ 32), flags & (1 << 24) != 0 else { break }
            task = ProcessMemory.word(at: current &+ UInt(taskSize))
        }
        return tasks
    }

    /// Whether the search is first kept to the blocks that may lead to its targets
    /// (``Limits/searchesBackwards``): unless `NODESCOPE_RETAINER_BACKWARDS=0`.
    package static let searchesBackwardsByDefault = isOn("NODESCOPE_RETAINER_BACKWARDS")

    /// Whether analyses run in a forked child that reads the memory in place (``FrozenChild``):
    /// unless `NODESCOPE_RETAINER_FORK=0`, which makes them copy the memory on the calling thread.
    package static let analyzesInChildByDefault = isOn("NODESCOPE_RETAINER_FORK")

    /// A switch that is on unless the environment variable `name` is `0`.
    private static func isOn(_ name: String) -> Bool {
        guard let value = getenv(name) else { return true }
        return String(cString: value) != "0"
    }

    private func analyze(
        _ targets: [Target], attached: [NodeObject], detached: [NodeObject], start: UInt64, deadline: UInt64,
        bound: UInt64, stacksFirst: Bool
    ) -> [RetainersFrame] {
        lastRun = Statistics()
        lastPathBlocks = [:]
        #if os(Linux)
        if limits.analyzesInChild,
            let frames = analyzeInChild(
                targets, attached: attached, detached: detached, start: start, deadline: deadline, bound: bound,
                stacksFirst: stacksFirst)
        {
            return frames
        }
        let snapshot: MemorySnapshot
        do {
            snapshot = try MemorySnapshot(limit: limits.snapshotBytes, deadline: deadline, clock: clock)
        } catch {
            let cutShort: Bool
            if case .outOfTime = error { cutShort = true } else { cutShort = false }
            let note = Self.describe(error, after: (clock() &- start) / 1_000_000)
            return targets.map { frame(for: $0, verdict: .notAnalyzed, cutShort: cutShort, note: note) }
        }
        captureStacks(of: snapshot, deadline: deadline)
        lastRun.copyNanos = clock() &- start
        let holders = limits.searchesBackwards ? HolderIndex(snapshot: snapshot) : nil
        let index = HeapIndex(snapshot: snapshot)
        lastRun.indexNanos = clock() &- start &- lastRun.copyNanos
        return examine(
            targets, attached: attached, detached: detached, snapshot: snapshot, index: index, holders: holders,
            tasks: ownTasks(), start: start, deadline: deadline, stacksFirst: stacksFirst)
        #else
        return targets.map { frame(for: $0, verdict: .notAnalyzed, note: "not analyzed: not available on this platform") }
        #endif
    }

    #if os(Linux)
    /// The analysis in a forked child that reads the memory of the instant of the fork in place
    /// (no copy, and no thread changing it meanwhile), or nil when there can be no child (the
    /// fork failed, or the memory cannot be read): then the caller copies. The child sends the
    /// frames as the wire encodes them, with the statistics.
    private func analyzeInChild(
        _ targets: [Target], attached: [NodeObject], detached: [NodeObject], start: UInt64, deadline: UInt64,
        bound: UInt64, stacksFirst: Bool
    ) -> [RetainersFrame]? {
        // Everything that allocates is made here, before the fork: the child walks the heaps as
        // they were, so that nothing it allocates before the walk is done can read as a block.
        guard let snapshot = try? MemorySnapshot(inPlace: ()) else { return nil }
        let index = HeapIndex(preparingFor: snapshot)
        let tasks = ownTasks()
        catalog.prepare()
        globals.prepare(images: snapshot.regions.compactMap { if case .imageData(let path) = $0.kind { path } else { nil } })
        captureStacks(of: snapshot, deadline: deadline)
        let outcome = FrozenChild.run(until: bound, clock: clock) {
            // "Copy" is the time to the fork, then the walk and the search, as for a copy.
            lastRun.copyNanos = clock() &- start
            let complete = snapshot.dropUnmapped()
            let holders = limits.searchesBackwards ? HolderIndex(snapshot: snapshot) : nil
            index.walk()
            lastRun.indexNanos = clock() &- start &- lastRun.copyNanos
            let frames = examine(
                targets, attached: attached, detached: detached, snapshot: snapshot, index: index, holders: holders,
                tasks: tasks, start: start, deadline: deadline, stacksFirst: stacksFirst)
            lastRun.heapIncomplete = lastRun.heapIncomplete || !complete
            return Self.encode(frames, lastRun)
        }
        switch outcome {
        case .answer(let bytes):
            guard let (frames, statistics) = Self.decode(bytes), frames.count == targets.count else {
                return targets.map { frame(for: $0, verdict: .notAnalyzed, note: "not analyzed: the analysis's answer was unreadable") }
            }
            lastRun = statistics
            return frames
        case .notForked:
            return nil
        case .blocked:
            // The child waited on a lock that another thread held at the fork (seen within
            // milliseconds): the copy, which takes no such lock, has the time left.
            lastRun.childWaitedOnLock = true
            return nil
        case .timedOut(let activity):
            let note =
                "cut short after \((clock() &- start) / 1_000_000) ms: the analysis did not answer"
                + (activity.isEmpty ? "" : " (its child was \(activity))")
            return targets.map { frame(for: $0, verdict: .notAnalyzed, cutShort: true, note: note) }
        case .died where clock() < deadline:
            // Something in the child went wrong (a guess read where nothing is mapped, a lock
            // held at the fork): the copy, whose reads are all checked, has the time left.
            return nil
        case .died:
            return targets.map { frame(for: $0, verdict: .notAnalyzed, note: "not analyzed: the analysis ended without an answer") }
        }
    }

    /// Copies the other threads' stacks (``MemorySnapshot/captureStacks(milliseconds:)``), and
    /// counts it.
    private func captureStacks(of snapshot: MemorySnapshot, deadline: UInt64) {
        let before = clock()
        lastRun.stacksCaptured = snapshot.captureStacks(milliseconds: Self.captureMilliseconds(now: before, deadline: deadline))
        lastRun.captureNanos = clock() &- before
    }

    /// How long the threads' stacks may take to be captured: a thread that waits for a processor
    /// (beside CPU hogs, or hundreds of other threads) takes a few ms to tens of ms to run its
    /// handler; at most a quarter of what is left, and 100 ms.
    private static func captureMilliseconds(now: UInt64, deadline: UInt64) -> Int {
        let left = deadline > now ? (deadline - now) / 1_000_000 : 0
        return Int(min(100, left / 4))
    }

    /// A child's answer: the statistics, then each frame as the wire encodes it.
    private static func encode(_ frames: [RetainersFrame], _ statistics: Statistics) -> [UInt8] {
        var bytes: [UInt8] = []
        func put(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        put(UInt64(statistics.blocks))
        put(UInt64(statistics.blocksScanned))
        put(statistics.copyNanos)
        put(statistics.indexNanos)
        put(statistics.searchNanos)
        put(statistics.heapIncomplete ? 1 : 0)
        put(UInt64(statistics.stacksCaptured))
        put(statistics.captureNanos)
        put(UInt64(statistics.blocksReadAhead))
        put(statistics.holdersNanos)
        put(UInt64(statistics.scopeBlocks))
        put(UInt64(frames.count))
        for frame in frames { bytes += FrameEncoder.encoded(.retainers(frame)) }
        return bytes
    }

    private static func decode(_ bytes: [UInt8]) -> ([RetainersFrame], Statistics)? {
        guard bytes.count >= 96 else { return nil }
        func word(_ index: Int) -> UInt64 {
            bytes[index * 8..<index * 8 + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        var statistics = Statistics()
        statistics.blocks = Int(clamping: word(0))
        statistics.blocksScanned = Int(clamping: word(1))
        statistics.copyNanos = word(2)
        statistics.indexNanos = word(3)
        statistics.searchNanos = word(4)
        statistics.heapIncomplete = word(5) != 0
        statistics.stacksCaptured = Int(clamping: word(6))
        statistics.captureNanos = word(7)
        statistics.blocksReadAhead = Int(clamping: word(8))
        statistics.holdersNanos = word(9)
        statistics.scopeBlocks = Int(clamping: word(10))
        let count = word(11)
        var decoder = FrameDecoder()
        decoder.feed(bytes[96...])
        var frames: [RetainersFrame] = []
        while UInt64(frames.count) < count {
            guard case .retainers(let frame)? = try? decoder.next() else { return nil }
            frames.append(frame)
        }
        return (frames, statistics)
    }
    #endif

    #if os(Linux)
    /// The first phase of the search kept to the blocks that may lead to `targets`
    /// (``BackwardScope``), grown a level at a time until it finds what a search of the whole
    /// heap would, and whether the scope left out tasks (then a phase that enters them needs the
    /// whole heap); nil where the scope grows too large or too deep, the holders cannot be
    /// indexed, or a third of the time left is spent: the whole heap is then searched.
    private func searchWithinScope(
        of targets: [Int32], holders: HolderIndex, graph: HeapGraph, attached: [NodeObject], includingTasks: Bool,
        deadline: UInt64, searchFromRoots: (BackwardScope?) -> RetainerSearch
    ) -> (search: RetainerSearch, leftOutTasks: Bool)? {
        guard !targets.isEmpty else { return nil }
        let before = clock()
        holders.collect()
        lastRun.holdersNanos = clock() &- before
        // A third of the time left at most, so that the whole heap's search has the rest.
        let giveUp = clock() &+ (deadline > clock() ? (deadline &- clock()) / 3 : 0)
        var scope = BackwardScope(
            targets: targets, holders: holders, graph: graph, attached: attached, includingTasks: includingTasks)
        while clock() < giveUp, scope.level < Self.scopeLevels {
            switch scope.extend() {
            case .tooLarge:
                return nil
            case .complete:
                // Complete but for the tasks it may have left out: enough for every phase that
                // does not enter tasks (the first, the cycles); the caller goes on from there.
                lastRun.scopeBlocks = scope.blocks.count
                return (searchFromRoots(scope), scope.leftOutTasks)
            case .grew(let metRoots):
                guard metRoots else { continue }
                let search = searchFromRoots(scope)
                if search.reachesAll(targets, within: scope.level) {
                    lastRun.scopeBlocks = scope.blocks.count
                    return (search, false)
                }
            }
        }
        return nil
    }

    /// The most levels a scope grows to before the search goes forward over the whole heap
    /// instead: a path longer than that is rare, and a scope that deep has met a list or a large
    /// structure (a stale word in one is enough), where each level costs a pass over the
    /// candidates (a test process's scope once grew 256 levels, 3,199 blocks, that way).
    private static let scopeLevels = 64

    /// The analysis proper, once the memory is in hand (copied, or in place in a forked child)
    /// and its heaps indexed: the searches and the naming of the paths.
    private func examine(
        _ targets: [Target], attached: [NodeObject], detached: [NodeObject], snapshot: MemorySnapshot, index: HeapIndex,
        holders: HolderIndex?, tasks: [UInt], start: UInt64, deadline: UInt64, stacksFirst: Bool
    ) -> [RetainersFrame] {
        catalog.begin(snapshot)
        defer { catalog.end() }
        let graph = HeapGraph(snapshot: snapshot, index: index, catalog: catalog, ownTasks: tasks)
        lastRun.bytesCopied = snapshot.bytesCopied
        lastRun.blocks = index.count
        lastRun.heapIncomplete = index.incomplete

        // Only now are the addresses looked at (the snapshot never saw them in the clear).
        var located: [Int: Int32] = [:]
        var problems: [Int: String] = [:]
        for (position, target) in targets.enumerated() {
            let block = index.block(at: target.address.address)
            guard block >= 0 else {
                problems[position] = "not analyzed: the object is not in a heap block in use (released meanwhile?)"
                continue
            }
            // Another class there: the object is gone and its place reused. (A block the catalog
            // cannot read is analyzed all the same.)
            if let expected = target.typeName, case .object(let type) = graph.shape(of: block),
                catalog.classes[type].name != expected
            {
                problems[position] = "not analyzed: the object was released before the analysis"
                continue
            }
            located[position] = block
        }
        var detachedObjects: [Int32: UInt64] = [:]
        var roles: [Int32: String] = [:]
        for object in detached + targets.map({ NodeObject(nodeID: $0.nodeID, address: $0.address) }) {
            let block = index.block(at: object.address.address)
            guard block >= 0 else { continue }
            detachedObjects[block] = object.nodeID
            if let role = object.role { roles[block] = role }
        }
        let isRuntimeCache = globals.runtimeCacheTest(map: snapshot.map)
        let excluded = StdioBuffers.blocks(read: snapshot.word(at:), index: index)
        let targetBlocks = Array(located.values)
        // The first phase: from the objects of attached nodes and the images' data.
        func searchFromRoots(within scope: BackwardScope?) -> RetainerSearch {
            let search = RetainerSearch(
                graph: graph, targets: targetBlocks, attached: attached, detached: Array(detachedObjects.keys),
                excluded: excluded, within: scope, deadline: deadline, clock: clock, readsAhead: limits.readsAhead)
            search.addWords(of: { if case .imageData = $0 { true } else { false } }, isRoot: { !isRuntimeCache($0, $1) })
            search.run()
            return search
        }
        let scoped = holders.flatMap { holders in
            searchWithinScope(
                of: targetBlocks, holders: holders, graph: graph, attached: attached, includingTasks: stacksFirst,
                deadline: deadline, searchFromRoots: searchFromRoots)
        }
        var search = scoped?.search ?? searchFromRoots(within: nil)
        var found = phases(of: search, leftOutTasks: scoped?.leftOutTasks ?? false)
        if found == nil {
            // The phase that enters tasks needs every holder of a task, which the scope left out:
            // the whole heap, from the start.
            lastRun.scopeBlocks = 0
            search = searchFromRoots(within: nil)
            found = phases(of: search, leftOutTasks: false)
        }
        let (paths, cycleMembers) = found ?? ([:], [:])

        /// The phases of the search after the first (`search`, run): the stacks and tasks, the
        /// cycles; nil where it comes to the stacks and tasks with `leftOutTasks`.
        func phases(
            of search: RetainerSearch, leftOutTasks: Bool
        ) -> ([Int: (path: RetainerSearch.Path, isCycle: Bool)], [Int32: Int])? {
            let rootedCutShort = search.cutShort
            var paths: [Int: (path: RetainerSearch.Path, isCycle: Bool)] = [:]
            for (position, block) in located {
                if let path = search.pathFromRoot(to: block) { paths[position] = (path, false) }
            }
            var cycleMembers: [Int32: Int] = [:]
            // For an exit's settlement, the stacks and the tasks before the cycles: a cycle that a
            // stack or a running task reaches is not a cycle that nothing reaches (the thread or the
            // task may still let it go), so its objects get the path from there, which proves no leak.
            var stacksSearched = false
            if stacksFirst, !rootedCutShort, located.contains(where: { paths[$0.key] == nil }) {
                guard !leftOutTasks else { return nil }
                stacksSearched = true
                search.enterTasks()
                search.addWords { if case .stack = $0 { true } else { false } }
                search.run()
                for (position, block) in located where paths[position] == nil {
                    if let path = search.pathFromRoot(to: block) { paths[position] = (path, false) }
                }
            }
            if !rootedCutShort, !search.cutShort {
                for (position, block) in located.sorted(by: { $0.key < $1.key }) where paths[position] == nil {
                    guard let cycle = search.cycle(through: block) else { continue }
                    paths[position] = (cycle, true)
                    cycleMembers[block] = position
                }
                // An object that is on no cycle itself but that a cycle holds (the router of an
                // interactor in a cycle): reached from the objects on cycles.
                if !search.cutShort, !cycleMembers.isEmpty, located.contains(where: { paths[$0.key] == nil }) {
                    search.addCycleMembers(cycleMembers.keys.sorted())
                    search.run()
                    for (position, block) in located where paths[position] == nil {
                        if let path = search.pathFromRoot(to: block) { paths[position] = (path, false) }
                    }
                }
                // Live, the stacks and the tasks after the cycles, for what no cycle explains.
                if !stacksSearched, !search.cutShort, located.contains(where: { paths[$0.key] == nil }) {
                    guard !leftOutTasks else { return nil }
                    search.enterTasks()
                    search.addWords { if case .stack = $0 { true } else { false } }
                    search.run()
                    for (position, block) in located where paths[position] == nil {
                        if let path = search.pathFromRoot(to: block) { paths[position] = (path, false) }
                    }
                }
            }
            return (paths, cycleMembers)
        }
        lastRun.blocksScanned = search.blocksScanned
        lastRun.blocksReadAhead = search.blocksReadAhead
        for (position, block) in located {
            guard let (path, _) = paths[position] else { continue }
            lastPathBlocks[position] = (path.edges.map(\.holder) + [block]).map { index.starts[Int($0)] }
        }
        lastRun.searchNanos = clock() &- start &- lastRun.copyNanos &- lastRun.indexNanos

        let namer = PathNamer(graph: graph, globals: globals, detachedObjects: detachedObjects)
        let elapsedMilliseconds = (clock() &- start) / 1_000_000
        var named: [Int: [RetainerHop]] = [:]
        func hops(at position: Int) -> [RetainerHop] {
            if let known = named[position] { return known }
            guard let block = located[position], let (path, isCycle) = paths[position] else { return [] }
            var (hops, referred, closures) = namer.hops(of: path, to: block)
            if case .cycleMember(let member)? = path.root, let cycle = cycleMembers[member].map(hops(at:)) {
                // The cycle that holds it, then the way from there (the suspect is the cycle's).
                hops = cycle + hops
            } else {
                Self.markSuspect(
                    &hops, referred: referred, closures: closures, isCycle: isCycle, isLeaking: namer.isDetachedNodeObject,
                    role: { roles[$0] }, node: { detachedObjects[$0] }, targetNode: targets[position].nodeID)
            }
            named[position] = hops
            return hops
        }
        return targets.enumerated().map { position, target in
            if let problem = problems[position] { return frame(for: target, verdict: .notAnalyzed, note: problem) }
            guard located[position] != nil else { return frame(for: target, verdict: .notAnalyzed, note: "") }
            guard let (path, isCycle) = paths[position] else {
                if search.cutShort {
                    return frame(
                        for: target, verdict: .notAnalyzed, cutShort: true, note: "cut short after \(elapsedMilliseconds) ms")
                }
                return frame(for: target, verdict: .unknown, note: "")
            }
            var hops = hops(at: position)
            var verdict = RetainerVerdict.holder
            var note = ""
            if isCycle {
                verdict = .cycle
            } else if case .cycleMember = path.root {
                note = "held by a retain cycle through \(hops.first?.holder ?? "another object")"
            } else if hops[0].holderKind == .global, !hops[0].reference.contains("["),
                hops.dropFirst().allSatisfy({ $0.holderKind == .detachedNodeObject && $0.holderNodeID == target.nodeID })
            {
                // The global itself holds the node (its other objects hang from the one it holds):
                // the node is kept by the global, as a top-level `let app = …` keeps an app. An
                // element of a global collection is a holder like any other: collections grow.
                verdict = .global
                for index in hops.indices { hops[index].isSuspect = index == 0 }
            } else if hops.count == 1, hops[0].holderKind == .stack {
                verdict = .stack
            } else if path.edges.contains(where: { graph.isTask($0.holder) }) {
                // A local of an async function (a frame of a task, running or suspended), or what
                // one leads to, is as weak as a thread's: what holds the object is code that
                // runs, not a structure. And a frame's slot that its function has not written yet
                // keeps whatever an earlier frame left there (the task allocator reuses its slabs
                // without clearing them), which a conservative scan cannot tell from a local.
                verdict = .stack
            }
            var cutShort = false
            if hops.count > RetainersFrame.maxHops {
                let all = hops.count
                (hops, cutShort) = Self.truncated(hops, to: RetainersFrame.maxHops)
                note = "\(all - hops.count) hops left out"
            }
            return frame(for: target, verdict: verdict, cutShort: cutShort, note: note, hops: hops)
        }
    }
    #endif

    /// The roles that an object of each role owns within its node, in the architectures that
    /// Nodescope knows: a reference along one of them is the architecture's normal ownership,
    /// never the suspect of a cycle that has another reference. Nodes: a flow owns its context
    /// and its view, a context its workers; VIPER: a view owns its presenter, a presenter its
    /// interactor and router; RIBs: a router owns its interactor and view, an interactor its
    /// presenter (a view); a coordinator or a module owns everything in its node.
    static let ownedRoles: [String: Set<String>] = [
        "flow": ["context", "view", "worker"],
        "context": ["worker"],
        "view": ["presenter"],
        "presenter": ["interactor", "router"],
        "router": ["interactor", "view"],
        "interactor": ["presenter"],
        "coordinator": ["flow", "context", "view", "presenter", "interactor", "router", "worker", "module"],
        "module": ["view", "presenter", "interactor", "router", "worker"],
    ]

    /// Marks the reference a developer most likely has to cut.
    ///
    /// In a cycle, one suspect whichever of its objects the path starts from: among the
    /// references from an object of another node to an object of the target's node (the
    /// reference that enters the node, which a path from a root names while the other node is
    /// attached: `ParentContext .child` for the child's node), else among the references through a closure (a capture, or a stored closure whose context is the
    /// object: `[weak self]` cuts it), else among the references that are not the
    /// architecture's normal ownership between two objects of a node (``ownedRoles``: the
    /// back-reference, such as a presenter's strong `view`), those that lead to an object of a
    /// node first (`Partner.context` rather than `CycleContext.partner`), else among all, the one whose
    /// holder type and reference come first in byte order. On a path from a root: the reference that enters the
    /// leaking set. Either is then moved back past what only carries it (closure contexts, unnamed memory, the
    /// items of an array or a set) to the field or element of the owner that keeps it
    /// (`Session .listeners[3]`, not the capture of the closure stored there; `Ticker .timers[0]`,
    /// not the block of the timer stored there).
    static func markSuspect(
        _ hops: inout [RetainerHop], referred: [Int32], closures: [Bool], isCycle: Bool, isLeaking: (Int32) -> Bool,
        role: (Int32) -> String? = { _ in nil }, node: (Int32) -> UInt64? = { _ in nil }, targetNode: UInt64? = nil
    ) {
        guard !hops.isEmpty else { return }
        var suspect: Int
        if isCycle, referred.count == hops.count, closures.count == hops.count {
            // Hop i's holder is what hop i - 1 refers to; the first hop's is the object itself.
            func holder(_ position: Int) -> Int32 { position == 0 ? referred[hops.count - 1] : referred[position - 1] }
            func isOwnership(_ position: Int) -> Bool {
                guard let from = role(holder(position)), let to = role(referred[position]) else { return false }
                return ownedRoles[from]?.contains(to) ?? false
            }
            // The reference that enters the target's node from another node's object: what a
            // path from a root names while that other node is attached.
            var candidates = hops.indices.filter { position in
                guard let targetNode, node(referred[position]) == targetNode, let from = node(holder(position)) else {
                    return false
                }
                return from != targetNode
            }
            if candidates.isEmpty { candidates = hops.indices.filter { closures[$0] } }
            let others = hops.indices.filter { !isOwnership($0) }
            // A reference back into the node (to one of its objects) before one out of it.
            if candidates.isEmpty { candidates = others.filter { role(referred[$0]) != nil } }
            if candidates.isEmpty { candidates = others }
            if candidates.isEmpty { candidates = Array(hops.indices) }
            func key(_ position: Int) -> String {
                hops[position].holder + "\u{0}" + hops[position].reference
            }
            suspect = candidates.min { key($0).utf8.lexicographicallyPrecedes(key($1).utf8) } ?? hops.count - 1
        } else if isCycle {
            suspect = closures.firstIndex(of: true) ?? hops.count - 1
        } else {
            suspect = referred.firstIndex(where: isLeaking) ?? hops.count - 1
        }
        // Back past what only carries the reference, in a cycle as on a path from a root, so
        // that both name the same field of the same owner.
        while suspect > 0 {
            switch hops[suspect].holderKind {
            case .closureContext, .unknownMemory, .collection:
                suspect -= 1
                continue
            case .object where Self.isItem(hops[suspect - 1].reference):
                suspect -= 1
                continue
            default:
                break
            }
            break
        }
        hops[suspect].isSuspect = true
    }

    /// `hops` cut to `count`: the first hop, the suspect and every hop that could still let go
    /// (a stack, an async task or unknown memory, an attached node's object) are kept, and the
    /// rest are filled from the end; the middle goes. `lostEvidence` tells that even so a hop
    /// that could let go was left out: the path is then cut short, so that it never proves a
    /// leak that the full path would not.
    static func truncated(_ hops: [RetainerHop], to count: Int) -> (hops: [RetainerHop], lostEvidence: Bool) {
        guard hops.count > count, count > 0 else { return (hops, false) }
        func isEvidence(_ hop: RetainerHop) -> Bool {
            switch hop.holderKind {
            case .stack, .unknownMemory, .attachedNodeObject: true
            default: false
            }
        }
        var kept = Set([0])
        if let suspect = hops.firstIndex(where: \.isSuspect) { kept.insert(suspect) }
        var lostEvidence = false
        for index in hops.indices where isEvidence(hops[index]) && !kept.contains(index) {
            if kept.count < count { kept.insert(index) } else { lostEvidence = true }
        }
        var index = hops.count - 1
        while kept.count < count, index > 0 {
            kept.insert(index)
            index -= 1
        }
        return (kept.sorted().map { hops[$0] }, lostEvidence)
    }

    /// Whether a reference is an element of an array or a set: what it leads to is an item (a
    /// timer, a cancellable) that the collection's owner keeps, rather than a service kept by
    /// name (a dictionary value).
    private static func isItem(_ reference: String) -> Bool {
        guard reference.hasSuffix("]"), let open = reference.lastIndex(of: "[") else { return false }
        let element = reference[reference.index(after: open)..<reference.index(before: reference.endIndex)]
        return element == "element" || (!element.isEmpty && element.allSatisfy(\.isNumber))
    }

    private func frame(
        for target: Target, verdict: RetainerVerdict, cutShort: Bool = false, note: String, hops: [RetainerHop] = []
    ) -> RetainersFrame {
        RetainersFrame(
            nodeID: target.nodeID, objectIndex: target.objectIndex, verdict: verdict, cutShort: cutShort, note: note, hops: hops)
    }

    private static func describe(_ failure: MemorySnapshot.Failure, after milliseconds: UInt64) -> String {
        switch failure {
        case .outOfTime(let bytes):
            return "cut short after \(milliseconds) ms, copying \(bytes >> 20) MiB of memory"
        case .noMaps:
            return "analysis not available: /proc/self/maps cannot be read"
        case .readsRefused(let code):
            return "analysis not available: process_vm_readv refused: \(SystemErrorText.describe(code))"
        case .tooLarge(let bytes, let limit):
            return "not analyzed: \(bytes >> 20) MiB of writable memory, more than the \(limit >> 20) MiB the analysis copies"
        case .noMemory(let bytes):
            return "analysis not available: no memory for a \(bytes >> 20) MiB copy"
        }
    }
}
