import CNodesMemory
import NodesTracking

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
/// (offset, target), and an end. Five words are shared, each written by one thread only and each
/// in a cache line of its own (a line that both threads write would travel between the
/// processors at every write, and the reader would wait for it): the blocks queued, the records
/// written, the records taken, whether to stop, and whether the reader has stopped. The reader
/// runs on a ``BackgroundThread`` (detached, `nodescope-search` where it runs in the host). The reader also reads the search's flags of
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

    /// Positions of the queue the search has filled (written by the search's thread).
    fileprivate var published: UnsafeMutablePointer<Int> { word(0) }
    /// Records written (by the reader).
    fileprivate var written: UnsafeMutablePointer<Int> { word(1) }
    /// Records the search has taken (by the search's thread).
    fileprivate var taken: UnsafeMutablePointer<Int> { word(2) }
    /// Nonzero once the search stops the reader.
    private var stopping: UnsafeMutablePointer<Int> { word(3) }
    /// Nonzero once the reader has stopped (its thread is detached: it touches nothing of the
    /// search's after this).
    private var ended: UnsafeMutablePointer<Int> { word(4) }

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
        shared = .allocate(byteCount: 5 * Self.line, alignment: Self.line)
        shared.initializeMemory(as: UInt8.self, repeating: 0, count: 5 * Self.line)
        published.pointee = filled
    }

    deinit {
        ring.deallocate()
        shared.deallocate()
    }

    /// Whether a processor is free for a reader now: fewer threads running or ready to run
    /// (`procs_running` of `/proc/stat`, the caller among them) than the processors online, in
    /// one of three looks 100 µs apart (a thread that passes through does not make a machine
    /// busy; a CPU hog, or the host's threads at work, do). On a machine whose processors are
    /// all busy, a second thread only shares the caller's time: measured on two processors,
    /// 1.1–1.16 times one thread's time beside one CPU hog, 1.05–1.2 beside two.
    static func processorIsFree() -> Bool {
        let processors = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        guard processors >= 2 else { return false }
        // The line comes after one per processor and the counts of interrupts: read it all.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 18, alignment: 8)
        defer { buffer.deallocate() }
        for look in 0..<3 {
            if look > 0 { usleep(100) }
            guard let running = runningThreads(reading: buffer) else { return false }
            if running < processors { return true }
        }
        return false
    }

    /// `procs_running` of `/proc/stat` (read into `buffer`): the threads running or ready to
    /// run, system-wide.
    private static func runningThreads(reading buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let descriptor = open("/proc/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let capacity = buffer.count
        var length = 0
        while length < capacity {
            let count = Glibc.read(descriptor, buffer.baseAddress! + length, capacity - length)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            length += count
        }
        let key = Array("\nprocs_running ".utf8)
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        var start = 0
        while start + key.count <= bytes.count {
            if bytes[start] == key[0], key.indices.allSatisfy({ bytes[start + $0] == key[$0] }) {
                var running = 0
                var index = start + key.count
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57, running < 1 << 20 {
                    running = running * 10 + Int(bytes[index] - 48)
                    index += 1
                }
                return running
            }
            start += 1
        }
        return nil
    }

    /// A reader of the blocks of `queue` from `position` on that the search does not enter
    /// itself, of which `filled` are in the queue so far, running; nil when no thread could be
    /// started (the search enters every block itself). A reference to a block whose `flags`
    /// say the search will pass it by is left out.
    /// It reads with its own view of `graph` (``HeapGraph/init(sharing:)``).
    /// `stallingAfter` blocks read, the reader stops reading (without a word to the search) until
    /// it is stopped: tests of the search going on alone (``RetainerAnalysis/ReadingAhead/stallingAfter(blocks:)``).
    static func start(
        graph: HeapGraph, queue: UnsafeMutableBufferPointer<Int32>, flags: UnsafeMutableBufferPointer<UInt8>, from position: Int,
        filled: Int, stallingAfter: Int = .max
    ) -> ReadAhead? {
        let reader = ReadAhead(graph: HeapGraph(sharing: graph), queue: queue, flags: flags, from: position, filled: filled)
        reader.stallsAfter = stallingAfter
        let started = BackgroundThread.start(named: "nodescope-search") {
            reader.read()
            cnm_store_release(reader.ended, 1)
        }
        return started ? reader : nil
    }

    /// Stops the reader and waits until it has stopped.
    func stop() {
        cnm_store_release(stopping, 1)
        var backoff = Backoff()
        while cnm_load_acquire(ended) == 0 { backoff.wait() }
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
        /// Whether the search waits for the reader's every block however long (until the
        /// deadline), never going on alone: ``RetainerAnalysis/ReadingAhead/always``.
        private let waitsForEveryBlock: Bool

        init(_ reader: ReadAhead, waitsForEveryBlock: Bool = false) {
            self.waitsForEveryBlock = waitsForEveryBlock
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

        /// What the search got from the ring.
        enum Take {
            case record(UInt64)
            /// The reader did not write it within about a millisecond of sleeps: it is not
            /// getting a processor (a loaded machine), and the search goes on alone.
            case late
            /// The search's deadline passed meanwhile.
            case pastDeadline
        }

        /// The next record, waiting for the reader when it has not written it yet, however
        /// long (until the deadline): a block's records once its header is taken.
        @inline(__always)
        mutating func next(deadline: UInt64, clock: () -> UInt64) -> UInt64? {
            if case .record(let record) = take(deadline: deadline, clock: clock, patient: true) { return record }
            return nil
        }

        /// The next record, or `late` when the reader is slow to write it (unless the search
        /// waits for every block): a block's header.
        @inline(__always)
        mutating func header(deadline: UInt64, clock: () -> UInt64) -> Take {
            take(deadline: deadline, clock: clock, patient: waitsForEveryBlock)
        }

        @inline(__always)
        private mutating func take(deadline: UInt64, clock: () -> UInt64, patient: Bool) -> Take {
            if takenHere == writtenSeen {
                let waited = waitForRecords(deadline: deadline, clock: clock, patient: patient)
                guard case .record = waited else { return waited }
            }
            let record = ring[takenHere & (ReadAhead.capacity - 1)]
            takenHere += 1
            return .record(record)
        }

        /// Gives the ring's slots read so far back to the reader.
        @inline(__always)
        mutating func release() {
            cnm_store_release(taken, takenHere)
        }

        /// Waits until a record is written (`record`, with no value), the deadline, or, unless
        /// `patient`, for 20 sleeps (`late`).
        private mutating func waitForRecords(deadline: UInt64, clock: () -> UInt64, patient: Bool) -> Take {
            // The reader may wait for room in the ring, which is given back at a block's end.
            release()
            var backoff = Backoff()
            while true {
                writtenSeen = cnm_load_acquire(written)
                if writtenSeen != takenHere { return .record(0) }
                if backoff.wait() {
                    if clock() >= deadline { return .pastDeadline }
                    if !patient, backoff.sleeps >= 20 { return .late }
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
            var backoff = Backoff()
            while true {
                takenSeen = cnm_load_acquire(taken)
                if writtenHere - takenSeen < ReadAhead.capacity { return true }
                if cnm_load_acquire(stopping) != 0 { return false }
                backoff.wait()
            }
        }
    }

    /// After how many blocks read the reader stalls (tests only; see ``start(graph:queue:flags:from:filled:stallingAfter:)``).
    private var stallsAfter = Int.max

    private func read() {
        let (graph, queue, published, stopping) = (self.graph, self.queue, self.published, self.stopping)
        let flags = self.flags.baseAddress!
        let settled = RetainerSearch.settledFlags
        var writer = Writer(ring: ring, written: written, taken: taken, stopping: stopping)
        var position = firstPosition
        var filled = 0
        var blocksLeft = stallsAfter
        while true {
            if position >= filled {
                // Caught up with the search: what is written is all it can take now.
                writer.flush()
                var backoff = Backoff()
                while true {
                    filled = cnm_load_acquire(published)
                    if position < filled { break }
                    if cnm_load_acquire(stopping) != 0 { return }
                    backoff.wait()
                }
            }
            if ReadAhead.entersItself(position) {
                position += 1
                continue
            }
            if blocksLeft == 0 {
                // Stalled (tests): what is written and not flushed is never seen.
                while cnm_load_acquire(stopping) == 0 { usleep(1_000) }
                return
            }
            blocksLeft &-= 1
            // Bound by memory, as the search alone: where a block is, then the block, asked ahead.
            if position + 16 < filled { graph.index.prefetchPlace(queue[position + 16]) }
            if position + 8 < filled { graph.index.prefetch(queue[position + 8]) }
            let block = queue[position]
            position += 1
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

    /// How a thread waits for the other: spinning a little (the other is running and nearly
    /// there), then giving its processor up, then sleeping, so that a thread whose partner is
    /// not running (a loaded machine, the host's own threads beside the child) does not hold a
    /// processor that the partner needs.
    struct Backoff {
        private var rounds = 0
        /// The sleeps so far (of 50 µs, or what the system makes of it).
        var sleeps: Int { max(0, rounds - 320) }

        /// Waits once; true once the wait has gone past spinning (time to look at the clock).
        @discardableResult
        mutating func wait() -> Bool {
            rounds += 1
            if rounds <= 256 {
                cnm_spin_pause()
                return false
            }
            if rounds <= 320 { sched_yield() } else { usleep(50) }
            return true
        }
    }

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
