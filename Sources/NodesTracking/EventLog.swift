import Synchronization

/// One change as the app's thread records it: 24 bytes of plain values (no reference, no
/// allocation), turned into a registry update and a ``DebugInformation`` later, by whoever
/// drains the ``EventLog`` under the tracker's lock. With its stamp it fills one 32-byte unit of
/// the log, so that two changes share a cache line.
struct LogEntry {
    enum Operation: UInt8 {
        /// A node joined the tree; `index` is its number of objects. Its ``AttachDetails`` and
        /// its ``ObjectRecord``s follow it in the log.
        case attach
        case state
        case detach
        /// Object `index` of the node was deallocated.
        case release
    }

    var operation: Operation
    var state: NodeState = .started
    var index: UInt16 = 0
    var node: NodeID
    var time: UInt64
}

/// What an attach carries besides its ``LogEntry``: in the units after the entry's.
struct AttachDetails {
    /// The principal object's type, whose name is the node's when none is given (looked up
    /// on applying, interned per type).
    var type: AnyObject.Type
    var parent: NodeID?
    var kind: NodeKind
    var name: String?
    var origin: NodeOrigin
}

/// One object registered with its node's attach (it reports its own release), after the
/// attach's details: object `n` of the node is the `n`th record.
struct ObjectRecord {
    var type: AnyObject.Type
    var address: ObfuscatedAddress
    var role: ObjectRole
}

/// The objects of an attach where the log holds them, handed to the log's consumer with the
/// attach (``EventLog/drain(through:maximum:change:attach:)``), so that the node's record is
/// read and written once for all of them: ``count`` records, each to be taken exactly once (a
/// record holds its role's string, which taking moves out of the log).
struct AttachedObjects {
    fileprivate let base: UnsafeMutablePointer<ObjectRecord>
    /// The number of objects.
    let count: Int

    /// Moves record `number` out of the log.
    @inline(__always)
    func take(_ number: Int) -> ObjectRecord {
        (base + number).move()
    }

}

/// The bounded hand-off from the app's threads to the tracker's registry: many producers
/// reserve units with one compare-and-swap and publish them with one store; one consumer at a
/// time (whoever holds the tracker's lock) takes them in order.
///
/// A producer that finds the log full reserves nothing: it falls back to the locked path (it
/// drains the log and updates the registry itself), so a unit once reserved is always
/// published promptly and a consumer waiting for one never waits on a lock.
final class EventLog: @unchecked Sendable {
    // Unchecked because the units are raw shared storage: a unit in [tail, head) belongs to its
    // producer until its stamp reads `ticket + 1` (release store), then to the consumer; a unit
    // outside belongs to whoever reserves its ticket next, which `tail` (release store, after
    // the consumer moved the entry out) guards.
    //
    // A unit is half a cache line: a stamp, then a `LogEntry`. An attach takes more units: its
    // entry's, then its details and objects as one block of plain memory over the units that
    // follow, without stamps (its entry's stamp, stored last, publishes them all). An attach
    // reserved at the end of the ring runs on into a spill area after it rather than wrapping,
    // so that its block is always contiguous. The bytes a change moves across the cores are
    // what costs the app's thread most: a state change, a detach or a release moves 32.
    //
    // Three groups of fields on three cache lines: the object's header (its reference count,
    // which a retain on any thread writes); the producers' line (what an append reads, the next
    // ticket and their last reading of `tail`); the consumer's (`tail`). Sharing a line would
    // make every append wait for the other side's last store.
    private let headerPadding = CacheLinePadding()
    let capacity: Int
    private let mask: Int
    private let units: UnsafeMutableRawPointer
    private let block: UnsafeMutableRawPointer
    private let head = Atomic<UInt64>(0)
    private let knownTail = Atomic<UInt64>(0)
    private let producerPadding = CacheLinePadding()
    private let tail = Atomic<UInt64>(0)
    private let consumerPadding = CacheLinePadding()

    /// The bytes of a unit, and where its entry starts.
    static let unitSize = 32
    private static let entryOffset = 8
    /// The most objects an attach carries in the log (the runtime's nodes have 4 or 5); a node
    /// with more takes the locked path.
    static let maxObjects = 17
    private static let detailsSize = MemoryLayout<AttachDetails>.stride
    private static let objectSize = MemoryLayout<ObjectRecord>.stride

    /// The units an attach with `objects` objects takes: its entry's, then its details and
    /// objects.
    @inline(__always)
    static func attachUnits(objects: Int) -> Int {
        1 + (detailsSize + objects * objectSize + unitSize - 1) / unitSize
    }

    init(capacity: Int) {
        precondition(
            MemoryLayout<LogEntry>.size <= Self.unitSize - Self.entryOffset
                && MemoryLayout<AttachDetails>.alignment <= Self.unitSize
                && MemoryLayout<ObjectRecord>.alignment <= Self.unitSize,
            "a log entry outgrew its unit")
        var size = 64
        while size < capacity { size <<= 1 }
        // The spill area, and one unit more to start the units on a cache line.
        let extra = Self.attachUnits(objects: Self.maxObjects) + 2
        // A smaller log when memory is short: a full log only costs its producers the work.
        var zeroed = calloc(size + extra, Self.unitSize)
        while zeroed == nil, size > 64 {
            size >>= 1
            zeroed = calloc(size + extra, Self.unitSize)
        }
        guard let block = zeroed else { fatalError("nodescope: no memory for the event log") }
        self.capacity = size
        self.mask = size - 1
        // Zeroed by calloc (every stamp 0, no unit published), which for a block this size
        // maps fresh pages without writing them: they take memory only once the ring reaches
        // them, so a tracker that records little costs little. (Not a mapping of its own: the
        // kernel would merge it with a neighbouring one, such as a thread's malloc arena, and
        // hide that arena from the retainer analysis, which reads malloc's layout.)
        self.block = block
        let address = UInt(bitPattern: block)
        let aligned = (address + 63) & ~UInt(63)
        self.units = block + Int(aligned - address)
    }

    deinit {
        // No producer is left: every unit reserved was published. (Taken and dropped: records
        // hold strings.)
        drain(change: { _ in }, attach: { _, _, objects in for number in 0..<objects.count { _ = objects.take(number) } })
        free(block)
    }

    /// The unit of `ticket`: its stamp, then its entry.
    @inline(__always)
    private func unit(_ ticket: UInt64) -> UnsafeMutableRawPointer {
        units + (Int(truncatingIfNeeded: ticket) & mask) &* Self.unitSize
    }

    /// A unit's stamp: the ticket that published it, plus one (0: never published). Zeroed
    /// memory holds a valid 0 for it.
    @inline(__always)
    private func stamp(_ ticket: UInt64) -> UnsafeMutablePointer<Atomic<UInt64>> {
        unit(ticket).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    @inline(__always)
    private func isPublished(_ ticket: UInt64) -> Bool {
        stamp(ticket).pointee.load(ordering: .acquiring) == ticket &+ 1
    }

    /// Units reserved: the first ticket, and whether they fill the log past half, when the
    /// consumer should be woken whatever it is doing.
    struct Reservation {
        var ticket: UInt64
        var reachesHalf: Bool
    }

    /// Reserves `count` consecutive units; nil when the log has no room for them.
    @inline(__always)
    func reserve(_ count: Int) -> Reservation? {
        var position = head.load(ordering: .relaxed)
        var start = knownTail.load(ordering: .relaxed)
        let half = UInt64(capacity / 2)
        while true {
            var used = position &- start
            if used &+ UInt64(count) > UInt64(capacity) {
                // Only when the last reading says full is the consumer's line read again.
                start = tail.load(ordering: .acquiring)
                knownTail.store(start, ordering: .relaxed)
                used = position &- start
                guard used &+ UInt64(count) <= UInt64(capacity) else { return nil }
            }
            let (exchanged, original) = head.compareExchange(
                expected: position, desired: position &+ UInt64(count), ordering: .sequentiallyConsistent)
            if exchanged { return Reservation(ticket: position, reachesHalf: used < half && used &+ UInt64(count) >= half) }
            position = original
        }
    }

    /// Fills and publishes the reserved unit `ticket`; for an attach, after its details and
    /// objects (``initialize(_:at:)``, ``initialize(_:number:at:)``), which it publishes with it.
    @inline(__always)
    func publish(_ entry: LogEntry, at ticket: UInt64) {
        let unit = unit(ticket)
        (unit + Self.entryOffset).initializeMemory(as: LogEntry.self, to: entry)
        unit.assumingMemoryBound(to: Atomic<UInt64>.self).pointee.store(ticket &+ 1, ordering: .releasing)
    }

    /// Writes the details of the attach reserved at `ticket` (``attachUnits(objects:)`` units).
    @inline(__always)
    func initialize(_ details: consuming AttachDetails, at ticket: UInt64) {
        (unit(ticket) + Self.unitSize).initializeMemory(as: AttachDetails.self, to: details)
    }

    /// Writes object `number` of the attach reserved at `ticket`.
    @inline(__always)
    func initialize(_ object: consuming ObjectRecord, number: Int, at ticket: UInt64) {
        (unit(ticket) + Self.unitSize + Self.detailsSize + number &* Self.objectSize)
            .initializeMemory(as: ObjectRecord.self, to: object)
    }

    /// Whether a unit was reserved that has not been taken yet.
    var hasReserved: Bool {
        head.load(ordering: .sequentiallyConsistent) != tail.load(ordering: .acquiring)
    }

    /// How many units were reserved and not taken yet.
    var backlog: Int {
        Int(truncatingIfNeeded: head.load(ordering: .relaxed) &- tail.load(ordering: .relaxed))
    }

    /// The next ticket to be reserved: every entry before it has been reserved.
    var reservedEnd: UInt64 { head.load(ordering: .sequentiallyConsistent) }

    /// Takes the published changes in order (an attach, then its objects), up to the first one
    /// still being written, or, with `through`, every change before that ticket (waiting for
    /// those being written); about `maximum` units at most (an attach is not split). Returns
    /// whether `maximum` left published changes behind. Consumer side only: the caller holds
    /// the tracker's lock.
    @discardableResult
    func drain(
        through end: UInt64? = nil, maximum: Int = .max, change: (LogEntry) -> Void,
        attach: (LogEntry, consuming AttachDetails, AttachedObjects) -> Void
    ) -> Bool {
        var position = tail.load(ordering: .relaxed)
        let published = head.load(ordering: .acquiring)
        let limit = published &- position > UInt64(maximum) ? position &+ UInt64(maximum) : published
        var waited = 0
        var stored = position
        while position < limit {
            guard isPublished(position) else {
                // A producer between its reservation and its publication: only a bounded set of
                // stores away, so waiting for it is short (it holds no lock).
                guard let end, position < end else { break }
                waited += 1
                if waited > 64 { Self.yield() }
                continue
            }
            let unit = unit(position)
            let entry = (unit + Self.entryOffset).assumingMemoryBound(to: LogEntry.self).pointee
            guard entry.operation == .attach else {
                position &+= 1
                if position &- stored >= 128 {
                    tail.store(position, ordering: .releasing)
                    stored = position
                }
                change(entry)
                continue
            }
            // Published with the entry, and reserved with it. The consumer takes each object.
            // (Records lie one after another: their size is a multiple of their alignment.)
            attach(
                entry, (unit + Self.unitSize).assumingMemoryBound(to: AttachDetails.self).move(),
                AttachedObjects(
                    base: (unit + Self.unitSize + Self.detailsSize).assumingMemoryBound(to: ObjectRecord.self),
                    count: Int(entry.index)))
            // The block's units in the ring hold arbitrary bytes where stamps go: cleared, so
            // that none reads as a later ticket's stamp when the ring comes round.
            // (Those past the ring's end lie in the spill area, where no stamp is read.)
            let taken = UInt64(Self.attachUnits(objects: Int(entry.index)))
            let inRing = Swift.min(Int(taken), capacity &- (Int(truncatingIfNeeded: position) & mask))
            for later in 1..<Swift.max(inRing, 1) {
                stamp(position &+ UInt64(later)).pointee.store(0, ordering: .relaxed)
            }
            position &+= taken
            if position &- stored >= 128 {
                tail.store(position, ordering: .releasing)
                stored = position
            }
        }
        tail.store(position, ordering: .releasing)
        return limit < published
    }

    private static func yield() {
        _ = sched_yield()
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
