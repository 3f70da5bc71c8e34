import NodesDebug
import NodescopeWire
import SeededRandom
import Synchronization
import Testing

@testable import NodesRetainers
@testable import NodesTracking

#if canImport(Glibc)
import Glibc
#endif

/// A clock for bounds: every reading advances it by a millisecond.
final class SteppingClock: Sendable {
    private let nanoseconds = Atomic<UInt64>(0)

    /// The time, then a millisecond later.
    func read() -> UInt64 {
        nanoseconds.add(1_000_000, ordering: .relaxed).newValue
    }
}

/// A generic class, whose metadata is made at run time.
final class GenericBox<Value> {
    var value: Value?
    var next: GenericBox?
}

/// Where the hostile blocks are listed, so that the analysis reaches them from a global.
nonisolated(unsafe) var hostileBlockList: UnsafeMutablePointer<UInt>?

/// The analysis's bounds, and a heap full of words that look like pointers (in the same serialized
/// suite as the other retainer tests: the hostile words must not meet their objects).
extension RetainerAnalysisTests {
    /// 12 rounds over one heap; `NODESCOPE_HOSTILE_ROUNDS` and `NODESCOPE_HOSTILE_SEED` ask for
    /// a longer run with another heap.
    @Test func aHostileHeapNeverCrashesTheAnalysisNorChangesItsVerdicts() throws {
        let rounds = getenv("NODESCOPE_HOSTILE_ROUNDS").flatMap { Int(String(cString: $0)) } ?? 12
        let seed = getenv("NODESCOPE_HOSTILE_SEED").flatMap { UInt64(String(cString: $0)) } ?? 0x16
        var random = SplitMix64(seed: seed)
        let heap = HostileHeap(blocks: 3_000, random: &random)
        defer { heap.free() }
        hostileBlockList = heap.list
        defer { hostileBlockList = nil }
        // Another thread rewrites the hostile words and allocates while the analyses copy them.
        let churn = HostileChurn(heap: heap)
        churn.start()
        defer { churn.stop() }

        let front = CycleFront()
        let back = CycleBack()
        front.back = back
        back.front = front
        let owner = ListenerList()
        let context = ListeningContext()
        owner.listeners.append { [context] text in context.received += text.count }
        let analysis = analysis()
        for round in 0..<rounds {
            let hostileTargets = (0..<4).map { index in
                RetainerAnalysis.Target(
                    nodeID: 100 + UInt64(index), objectIndex: 0,
                    address: ObfuscatedAddress(address: heap.blocks[random.below(heap.blocks.count)].address))
            }
            let targets =
                [
                    RetainerAnalysis.Target(front, nodeID: 1, objectIndex: 0),
                    RetainerAnalysis.Target(context, nodeID: 2, objectIndex: 0),
                ] + hostileTargets
            let frames = analysis.explain(
                targets, attached: [RetainerAnalysis.NodeObject(owner, nodeID: 20)],
                detached: [RetainerAnalysis.NodeObject(back, nodeID: 1)])
            try #require(frames.count == targets.count, "round \(round)")
            #expect(frames[0].verdict == .cycle, "round \(round): \(frames[0])")
            #expect(frames[0].hops.map(\.holder) == ["CycleFront", "CycleBack"], "round \(round)")
            #expect(frames[1].verdict == .holder, "round \(round): \(frames[1])")
            #expect(frames[1].hops.map(\.reference) == [".listeners[0]"], "round \(round)")
            for frame in frames {
                #expect(frame.hops.count <= RetainersFrame.maxHops)
                #expect(frame.hops.filter(\.isSuspect).count == (frame.hops.isEmpty ? 0 : 1))
            }
        }
        withExtendedLifetime((front, back, owner, context)) {}
    }

    /// Both ways: the whole heap's search (50 ms for one object, past after a few dozen
    /// readings of the clock), and the search kept to a scope (5 ms: past before the scope is
    /// grown, so that the whole heap's search it falls back on has no time left either).
    @Test(arguments: [false, true])
    func anAnalysisPastItsTimeBoundStopsAndSaysSo(backwards: Bool) throws {
        let front = CycleFront()
        let back = CycleBack()
        front.back = back
        back.front = front
        // No floor here; each reading of this clock is a millisecond later.
        let clock = SteppingClock()
        var limits = RetainerAnalysis.Limits()
        limits.leastTimePerBatchNanos = 0
        limits.searchesBackwards = backwards
        if backwards { limits.timePerObjectNanos = 5_000_000 }
        let analysis = RetainerAnalysis(limits: limits, clock: { clock.read() })
        let frames = analysis.explain([RetainerAnalysis.Target(front, nodeID: 1, objectIndex: 0)], attached: [], detached: [])
        let frame = try #require(frames.first)
        #expect(frame.cutShort)
        #expect(frame.verdict == .notAnalyzed)
        #expect(frame.note.hasPrefix("cut short after "), "\(frame.note)")
        withExtendedLifetime((front, back)) {}
    }

    @Test func objectsPastTheBatchAndProcessBoundsAreNotAnalyzedWithAReason() throws {
        var limits = RetainerAnalysis.Limits()
        limits.objectsPerBatch = 2
        limits.objectsPerProcess = 3
        // No time bound in this test (a loaded machine must not turn it into another one).
        limits.timePerObjectNanos = 60_000_000_000
        limits.timePerBatchNanos = 60_000_000_000
        let analysis = RetainerAnalysis(limits: limits)
        let objects = (0..<3).map { _ in CachedProfile() }
        let targets = objects.enumerated().map { RetainerAnalysis.Target($1, nodeID: 9, objectIndex: UInt16($0)) }
        // (What holds the analyzed ones does not matter here: the array that lists them, say.)
        let first = analysis.explain(targets, attached: [], detached: [])
        #expect(first.map { $0.verdict == .notAnalyzed } == [false, false, true])
        #expect(first[2].note == "not analyzed: more than 2 objects in one analysis")
        let second = analysis.explain(Array(targets.prefix(2)), attached: [], detached: [])
        #expect(second.map { $0.verdict == .notAnalyzed } == [false, true])
        #expect(second[1].note == "not analyzed: this process's analysis budget (3 objects) is used up")
        withExtendedLifetime(objects) {}
    }
}

/// Blocks of random words and of words that look like pointers: to other blocks, into them,
/// just past them, to unmapped pages, to fake metadata (garbage, copies of real class metadata,
/// a copy of a generic class's metadata with a garbage argument, closure and box kinds).
final class HostileHeap: @unchecked Sendable {
    // Unchecked: the words are written by the churn thread on purpose, racing the analysis.
    struct Block {
        var address: UInt
        var words: Int
    }

    private(set) var blocks: [Block] = []
    /// Every block's address, in a block of its own (what a global points at).
    let list: UnsafeMutablePointer<UInt>
    private var fakes: [UInt] = []
    private let unmapped: UInt

    init(blocks count: Int, random: inout SplitMix64) {
        list = UnsafeMutablePointer<UInt>.allocate(capacity: count)
        // A page that cannot be read: pointers to it fault. Reserved until the heap is freed,
        // not unmapped: the allocator could map the range again and put the test's own objects
        // there, which the hostile words would then really hold (a full run found a path to
        // CycleBack through a word that pointed into the page).
        let page = mmap(nil, 4_096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)!
        unmapped = UInt(bitPattern: page)
        for index in 0..<count {
            let words = index % 500 == 0 ? 40_000 : 2 + random.below(80)
            let address = UInt(bitPattern: malloc(words * 8)!)
            blocks.append(Block(address: address, words: words))
            list[index] = address
        }
        fakes = makeFakeMetadata(random: &random)
        for block in blocks {
            for word in 0..<block.words { store(hostileWord(&random), in: block, at: word) }
            // Most look like objects: a (fake) metadata pointer first; some carry the real
            // metadata of a dictionary's, a set's or an array's storage, with garbage where its
            // counts and the addresses of its keys and values would be (a storage that is being
            // made holds its previous occupant's bytes there).
            if random.chance(70) { store(fakes[random.below(fakes.count)], in: block, at: 0) }
            if random.chance(15) { store(Self.storageMetadata[random.below(Self.storageMetadata.count)], in: block, at: 0) }
        }
    }

    /// The metadata of real collection storages, whose layouts the analysis reads.
    private static let storageMetadata: [UInt] = {
        let dictionary: [Int: GenericBox<Int>] = [1: GenericBox(), 2: GenericBox()]
        let set: Set<Int> = [1, 2, 3]
        let array: [GenericBox<Int>] = [GenericBox()]
        func isa<T>(of collection: T) -> UInt {
            let storage = unsafeBitCast(collection, to: UnsafeRawPointer.self)
            return storage.load(as: UInt.self)
        }
        return [isa(of: dictionary), isa(of: set), isa(of: array)]
    }()

    func free() {
        for block in blocks { Glibc.free(UnsafeMutableRawPointer(bitPattern: block.address)) }
        for fake in fakes { Glibc.free(UnsafeMutableRawPointer(bitPattern: fake - 64)) }
        list.deallocate()
        munmap(UnsafeMutableRawPointer(bitPattern: unmapped), 4_096)
    }

    /// Rewrites a few words at random.
    func scramble(_ random: inout SplitMix64) {
        for _ in 0..<64 {
            let block = blocks[random.below(blocks.count)]
            store(hostileWord(&random), in: block, at: random.below(block.words))
        }
    }

    func hostileWord(_ random: inout SplitMix64) -> UInt {
        let block = blocks[random.below(blocks.count)]
        switch random.below(9) {
        case 0: return UInt(truncatingIfNeeded: random.next())
        case 1: return block.address
        case 2: return block.address + UInt(random.below(block.words)) * 8
        case 3: return block.address + UInt(block.words) * 8
        case 4: return unmapped + UInt(random.below(512)) * 8
        case 5: return fakes[random.below(fakes.count)]
        case 6: return fakes[random.below(fakes.count)] + UInt(random.below(8)) * 8
        case 7: return UInt(random.below(4_096))
        default: return (UInt(truncatingIfNeeded: random.next()) & 0x0000_7FFF_FFFF_FFF0)
        }
    }

    private func store(_ word: UInt, in block: Block, at index: Int) {
        UnsafeMutablePointer<UInt>(bitPattern: block.address)![index] = word
    }

    /// Fake metadata, each 64 bytes into a block of its own (room for negative offsets).
    private func makeFakeMetadata(random: inout SplitMix64) -> [UInt] {
        var fakes: [UInt] = []
        func fake(copying source: UInt?, words: Int, patch: (UnsafeMutablePointer<UInt>) -> Void) {
            let base = malloc(64 + words * 8)!.assumingMemoryBound(to: UInt.self)
            for index in 0..<(8 + words) { base[index] = UInt(truncatingIfNeeded: random.next()) }
            if let source {
                memcpy(base, UnsafeRawPointer(bitPattern: source - 64)!, 64 + words * 8)
            }
            patch(base + 8)
            fakes.append(UInt(bitPattern: base + 8))
        }
        let plainClass = unsafeBitCast(CycleFront.self as AnyClass, to: UInt.self)
        let genericClass = unsafeBitCast(GenericBox<Int>.self as AnyClass, to: UInt.self)
        for _ in 0..<4 {
            // Garbage with a class's kind.
            fake(copying: nil, words: 24) { $0[0] = 0 }
            // A real class's metadata, copied: a valid-looking class at a heap address.
            fake(copying: plainClass, words: 16) { _ in }
            // A generic class's metadata, copied, with garbage for its argument and its superclass.
            fake(copying: genericClass, words: 24) { metadata in
                for index in 8..<24 { metadata[index] = UInt(truncatingIfNeeded: random.next()) }
            }
            fake(copying: genericClass, words: 24) { metadata in
                metadata[1] = UInt(truncatingIfNeeded: random.next()) & 0x0000_7FFF_FFFF_FFF8
            }
            // Closure context and box kinds, with garbage after them.
            fake(copying: nil, words: 8) { $0[0] = 0x400 }
            fake(copying: nil, words: 8) { $0[0] = 0x500 }
            // A struct kind whose descriptor is garbage.
            fake(copying: nil, words: 8) { $0[0] = 0x200 }
        }
        return fakes
    }
}

/// A thread that scrambles a hostile heap and allocates and frees, until stopped.
final class HostileChurn: @unchecked Sendable {
    // Unchecked: the pthread handle is touched only by the test's thread.
    private let heap: HostileHeap
    private let stopped = Atomic<Bool>(false)
    private var thread = pthread_t()

    init(heap: HostileHeap) {
        self.heap = heap
    }

    func start() {
        let argument = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &thread, nil,
            { argument in
                Unmanaged<HostileChurn>.fromOpaque(argument!).takeRetainedValue().run()
                return nil
            }, argument)
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        pthread_join(thread, nil)
    }

    private func run() {
        var random = SplitMix64(seed: 0xC0FFEE)
        var held: [UnsafeMutableRawPointer] = []
        while !stopped.load(ordering: .acquiring) {
            heap.scramble(&random)
            held.append(malloc(16 + random.below(2_000))!)
            if held.count > 200 { Glibc.free(held.remove(at: random.below(held.count))) }
            usleep(200)
        }
        for block in held { Glibc.free(block) }
    }
}
