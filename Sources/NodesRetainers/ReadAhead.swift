import CNodesMemory

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The references of two thirds of the blocks a breadth-first search enters, read on a thread of
/// its own ahead of the search: the search's thread enters the others itself
/// (``entersItself(_:)``) and takes these ones' references from the reader, in the order of its
/// queue, so the work of reading blocks runs on two processors and the search finds exactly
/// what it finds alone (the same blocks reached, from the same holders, in the same order).
///
/// The reader reads through a view of the graph of its own (``HeapGraph/init(sharing:)``): the
/// heap index and the type catalog keep caches and learn types, which is not shared between
/// threads.
///
/// Each block's records go through a ring, in the queue's order: a header (what kind of block it
/// is, and its doubtful word, ``HeapGraph/doubtfulWord(of:shape:)``), a record per reference
/// (offset, target), and an end. Four words are shared, each written by one thread only and each
/// in a cache line of its own (a line that both threads write would travel between the
/// processors at every write, and the reader would wait for it): the blocks queued, the records
/// written, the records taken, and whether to stop. The reader also reads the search's flags of
/// each block, as a hint only: a reference to a block the search has reached needs no record
/// (the flags only ever gain bits, and the search checks each record again). Everything else
/// each thread keeps in its own locals (``Cursor`` for the search).
final class ReadAhead: @unchecked Sendable {
    /// What a block is to the search.
    enum Kind: UInt64 {
        /// Entered: its references follow.
        case entered = 0xFFFF_FFF1
        /// A weak reference's side table: never entered, no references follow.
        case sideTable = 0xFFFF_FFF3
        /// An async task or a slab of its frames: its references follow, for a search that enters tasks.
        case task = 0xFFFF_FFF5
    }

    /// The record after a block's last reference. (A reference's upper half is its offset in the
    /// block, a multiple of 8 below 2^32; a header's and this one's are odd.)
    static let end: UInt64 = ~0

    /// A search whose queue holds fewer blocks than this when it goes on reads them itself: a
    /// thread's start is not worth it.
    static let leastBlocks = 4_096

    /// Records in the ring: 512 KiB.
    fileprivate static let capacity = 1 << 16
    private static let line = 64

    fileprivate let ring: UnsafeMutablePointer<UInt64>
    private let graph: HeapGraph
    private let queue: UnsafeMutableBufferPointer<Int32>
    /// The search's flags of each block, which it writes: a block already reached (or never
    /// entered) needs no record, and one not reached yet may be by the time the search takes it.
    private let flags: UnsafeMutableBufferPointer<UInt8>
    private let firstPosition: Int
    /// The shared words, a cache line each.
    private let shared: UnsafeMutableRawPointer
    /// Blocks the reader entered (the reader's; read once it has stopped).
    private(set) var blocksRead = 0
    private var thread = pthread_t()

    /// Positions of the queue the search has filled (written by the search's thread).
    fileprivate var published: UnsafeMutablePointer<Int> { word(0) }
    /// Records written (by the reader).
    fileprivate var written: UnsafeMutablePointer<Int> { word(1) }
    /// Records the search has taken (by the search's thread).
    fileprivate var taken: UnsafeMutablePointer<Int> { word(2) }
    /// Nonzero once the search stops the reader.
    private var stopping: UnsafeMutablePointer<Int> { word(3) }

    private func word(_ line: Int) -> UnsafeMutablePointer<Int> {
        (shared + line * Self.line).assumingMemoryBound(to: Int.self)
    }

    private init(
        graph: HeapGraph, queue: UnsafeMutableBufferPointer<Int32>, flags: UnsafeMutableBufferPointer<UInt8>, from position: Int,
        filled: Int
    ) {
        self.graph = graph
        self.queue = queue
        self.flags = flags
        firstPosition = position
        ring = .allocate(capacity: Self.capacity)
        shared = .allocate(byteCount: 4 * Self.line, alignment: Self.line)
        shared.initializeMemory(as: UInt8.self, repeating: 0, count: 4 * Self.line)
        published.pointee = filled
    }

    deinit {
        ring.deallocate()
        shared.deallocate()
    }

    /// A reader of the blocks of `queue` from `position` on that the search does not enter
    /// itself, of which `filled` are in the queue so far, running; nil when no thread could be
    /// started (the search enters every block itself). A reference to a block whose `flags`
    /// say the search will pass it by is left out.
    /// It reads with its own view of `graph` (``HeapGraph/init(sharing:)``).
    static func start(
        graph: HeapGraph, queue: UnsafeMutableBufferPointer<Int32>, flags: UnsafeMutableBufferPointer<UInt8>, from position: Int,
        filled: Int
    ) -> ReadAhead? {
        let reader = ReadAhead(graph: HeapGraph(sharing: graph), queue: queue, flags: flags, from: position, filled: filled)
        let context = Unmanaged.passRetained(reader).toOpaque()
        let started = pthread_create(
            &reader.thread, nil,
            { context in
                let reader = Unmanaged<ReadAhead>.fromOpaque(context!).takeRetainedValue()
                reader.read()
                return nil
            }, context)
        guard started == 0 else {
            Unmanaged<ReadAhead>.fromOpaque(context).release()
            return nil
        }
        return reader
    }

    /// Stops the reader and waits for its thread to end.
    func stop() {
        cnm_store_release(stopping, 1)
        pthread_join(thread, nil)
    }

    // MARK: The search's side

    /// The search's end of the ring, in the search's own locals.
    struct Cursor {
        private let ring: UnsafeMutablePointer<UInt64>
        private let published: UnsafeMutablePointer<Int>
        private let written: UnsafeMutablePointer<Int>
        private let taken: UnsafeMutablePointer<Int>
        private var takenHere = 0
        private var writtenSeen = 0
        private var publishedHere: Int

        init(_ reader: ReadAhead) {
            ring = reader.ring
            published = reader.published
            written = reader.written
            taken = reader.taken
            publishedHere = reader.published.pointee
        }

        /// Tells the reader that the queue holds `filled` blocks.
        @inline(__always)
        mutating func publish(_ filled: Int) {
            guard filled != publishedHere else { return }
            publishedHere = filled
            cnm_store_release(published, filled)
        }

        /// The next record, waiting for the reader when it has not written it yet; nil when
        /// `deadline` on `clock` passed meanwhile.
        @inline(__always)
        mutating func next(deadline: UInt64, clock: () -> UInt64) -> UInt64? {
            if takenHere == writtenSeen, !waitForRecords(deadline: deadline, clock: clock) { return nil }
            let record = ring[takenHere & (ReadAhead.capacity - 1)]
            takenHere += 1
            return record
        }

        /// Gives the ring's slots read so far back to the reader.
        @inline(__always)
        mutating func release() {
            cnm_store_release(taken, takenHere)
        }

        private mutating func waitForRecords(deadline: UInt64, clock: () -> UInt64) -> Bool {
            // The reader may wait for room in the ring, which is given back at a block's end.
            release()
            var spins = 0
            while true {
                writtenSeen = cnm_load_acquire(written)
                if writtenSeen != takenHere { return true }
                spins += 1
                if spins & 1_023 == 0 {
                    if clock() >= deadline { return false }
                    sched_yield()
                } else {
                    cnm_spin_pause()
                }
            }
        }
    }

    // MARK: The reader's side

    /// The reader's end of the ring, in the reader's own locals. (A local function that writes
    /// captured variables would box them, and each access to a box is checked for exclusivity
    /// at run time: a struct's mutating methods are checked when compiled.)
    private struct Writer {
        let ring: UnsafeMutablePointer<UInt64>
        let written: UnsafeMutablePointer<Int>
        let taken: UnsafeMutablePointer<Int>
        let stopping: UnsafeMutablePointer<Int>
        var writtenHere = 0
        var takenSeen = 0

        /// Writes `record`, waiting for room; false once the search stops the reader.
        @inline(__always)
        mutating func put(_ record: UInt64) -> Bool {
            if writtenHere - takenSeen == ReadAhead.capacity, !waitForRoom() { return false }
            ring[writtenHere & (ReadAhead.capacity - 1)] = record
            writtenHere += 1
            return true
        }

        /// Lets the search take what is written.
        @inline(__always)
        func flush() {
            cnm_store_release(written, writtenHere)
        }

        private mutating func waitForRoom() -> Bool {
            flush()
            var spins = 0
            while true {
                takenSeen = cnm_load_acquire(taken)
                if writtenHere - takenSeen < ReadAhead.capacity { return true }
                if cnm_load_acquire(stopping) != 0 { return false }
                spins += 1
                if spins & 1_023 == 0 { sched_yield() } else { cnm_spin_pause() }
            }
        }
    }

    private func read() {
        let (graph, queue, published, stopping) = (self.graph, self.queue, self.published, self.stopping)
        let flags = self.flags.baseAddress!
        let settled = RetainerSearch.settledFlags
        var writer = Writer(ring: ring, written: written, taken: taken, stopping: stopping)
        var position = firstPosition
        var filled = 0
        var entered = 0
        defer { blocksRead = entered }
        while true {
            if position >= filled {
                // Caught up with the search: what is written is all it can take now.
                writer.flush()
                var spins = 0
                while true {
                    filled = cnm_load_acquire(published)
                    if position < filled { break }
                    if cnm_load_acquire(stopping) != 0 { return }
                    spins += 1
                    if spins & 1_023 == 0 { sched_yield() } else { cnm_spin_pause() }
                }
            }
            if ReadAhead.entersItself(position) {
                position += 1
                continue
            }
            // Bound by memory, as the search alone: where a block is, then the block, asked ahead.
            if position + 16 < filled { graph.index.prefetchPlace(queue[position + 16]) }
            if position + 8 < filled { graph.index.prefetch(queue[position + 8]) }
            let block = queue[position]
            position += 1
            entered += 1
            let shape = graph.shape(of: block)
            let kind: Kind
            switch shape {
            case .plain: kind = graph.isSideTable(block) ? .sideTable : .entered
            case .task, .taskSlab: kind = .task
            case .object, .closureContext, .array, .dictionary, .set: kind = .entered
            }
            let doubtfulWord = kind == .sideTable ? -1 : graph.doubtfulWord(of: block, shape: shape)
            guard writer.put(kind.rawValue << 32 | UInt64(UInt32(truncatingIfNeeded: doubtfulWord))) else { return }
            if kind != .sideTable {
                var stopped = false
                graph.forEachReference(from: block, shape: shape) { offset, target in
                    // Reached or never entered: the search would pass it by.
                    guard cnm_load_relaxed_byte(flags + Int(target)) & settled == 0 else { return false }
                    stopped = !writer.put(UInt64(offset) << 32 | UInt64(UInt32(bitPattern: target)))
                    return stopped
                }
                if stopped { return }
            }
            guard writer.put(Self.end) else { return }
            if position & 31 == 0 { writer.flush() }
        }
    }

    /// Whether the search enters the block at `position` of its queue itself: one of every
    /// three. The search's thread also does the bookkeeping of every block, and takes the
    /// reader's records: measured at 100,000 nodes, a third each way left either thread
    /// waiting for the other least (docs/BENCHMARKS.md).
    @inline(__always)
    static func entersItself(_ position: Int) -> Bool { position % 3 == 0 }

    // MARK: Records

    /// A header's kind, or nil for a record that is no header.
    @inline(__always)
    static func kind(of header: UInt64) -> Kind? { Kind(rawValue: header >> 32) }

    /// A header's doubtful word (-1: none).
    @inline(__always)
    static func doubtfulWord(of header: UInt64) -> Int {
        let low = UInt32(truncatingIfNeeded: header)
        return low == UInt32.max ? -1 : Int(low)
    }
}
