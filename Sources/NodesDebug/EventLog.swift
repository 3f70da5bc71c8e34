import Synchronization

/// One change as the app's thread records it: a fixed-size value of ids, a time and a role (no
/// allocation), turned into a registry update and a ``DebugInformation`` later, by whoever
/// drains the ``EventLog`` under the tracker's lock. It fills one 64-byte slot of the log with
/// the slot's stamp, so that recording a change writes one cache line.
struct LogEntry {
    enum Operation: UInt8 {
        /// A node joined the tree; `index` is how many object entries follow it. Its
        /// ``AttachDetails`` take the two slots after it.
        case attach
        /// Object `index` of the node, registered with its attach (it reports its own release).
        case object
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
    /// The object's type (attach: the principal's; object): its name is interned per type.
    var type: AnyObject.Type?
    var address = ObfuscatedAddress.unknown
    /// An object's role.
    var role: ObjectRole?
}

/// What only an attach carries besides its ``LogEntry``, in the log's two slots after it.
struct AttachDetails {
    /// The first slot's part.
    struct Names {
        var parent: NodeID?
        var kind: NodeKind
        /// The node's name when given; otherwise the type's name, looked up on applying.
        var name: String?
    }

    var names: Names
    /// The second slot's part.
    var origin: NodeOrigin
}

/// The bounded hand-off from the app's threads to the tracker's registry: many producers
/// reserve slots with one compare-and-swap and publish them with one store; one consumer at a
/// time (whoever holds the tracker's lock) takes them in order.
///
/// A producer that finds the log full reserves nothing: it falls back to the locked path (it
/// drains the log and updates the registry itself), so a slot once reserved is always
/// published promptly and a consumer waiting for one never waits on a lock.
final class EventLog: @unchecked Sendable {
    // Unchecked because the slots are raw shared storage: a slot in [tail, head) belongs to its
    // producer until its stamp reads `ticket + 1` (release store), then to the consumer; a slot
    // outside belongs to whoever reserves its ticket next, which `tail` (release store, after
    // the consumer moved the entry out) guards.
    //
    // A slot is one cache line: its stamp, then its payload (a `LogEntry`, or one of the two
    // parts of an attach's `AttachDetails`), so that an append writes one line, which the
    // consumer then reads once.
    //
    // Three groups of fields on three cache lines: the object's header (its reference count,
    // which a retain on any thread writes); the producers' line (what an append reads, the next
    // ticket and their last reading of `tail`); the consumer's (`tail`). Sharing a line would
    // make every append wait for the other side's last store.
    private let headerPadding = CacheLinePadding()
    let capacity: Int
    private let mask: Int
    private let slots: UnsafeMutableRawPointer
    private let block: UnsafeMutableRawPointer
    private let head = Atomic<UInt64>(0)
    private let knownTail = Atomic<UInt64>(0)
    private let producerPadding = CacheLinePadding()
    private let tail = Atomic<UInt64>(0)
    private let consumerPadding = CacheLinePadding()

    /// The bytes of a slot, and where its payload starts.
    static let slotSize = 64
    private static let payloadOffset = 8
    /// The slots an attach takes: its entry and its details' two parts.
    static let attachSlots = 3

    init(capacity: Int) {
        precondition(
            MemoryLayout<LogEntry>.size <= Self.slotSize - Self.payloadOffset
                && MemoryLayout<AttachDetails.Names>.size <= Self.slotSize - Self.payloadOffset
                && MemoryLayout<NodeOrigin>.size <= Self.slotSize - Self.payloadOffset,
            "a log entry outgrew its slot")
        var size = 64
        while size < capacity { size <<= 1 }
        // A smaller log when memory is short: a full log only costs its producers the work.
        var zeroed = calloc(size + 1, Self.slotSize)
        while zeroed == nil, size > 64 {
            size >>= 1
            zeroed = calloc(size + 1, Self.slotSize)
        }
        guard let block = zeroed else { fatalError("nodescope: no memory for the event log") }
        self.capacity = size
        self.mask = size - 1
        // Zeroed by calloc (every stamp 0, no slot published), which for a block this size
        // maps fresh pages without writing them: they take memory only once the ring reaches
        // them, so a tracker that records little costs little. (Not a mapping of its own: the
        // kernel would merge it with a neighbouring one, such as a thread's malloc arena, and
        // hide that arena from the retainer analysis, which reads malloc's layout.) One slot
        // more, to start the slots on a cache line.
        self.block = block
        let address = UInt(bitPattern: block)
        let aligned = (address + UInt(Self.slotSize) - 1) & ~UInt(Self.slotSize - 1)
        self.slots = block + Int(aligned - address)
    }

    deinit {
        // No producer is left: every slot reserved was published.
        drain { _, _ in }
        free(block)
    }

    /// A slot's stamp: the ticket that published it, plus one (0: never published). Zeroed
    /// memory holds a valid 0 for it.
    @inline(__always)
    private func stamp(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        (slots + slot &* Self.slotSize).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    @inline(__always)
    private func payload(_ ticket: UInt64) -> UnsafeMutableRawPointer {
        slots + (Int(truncatingIfNeeded: ticket) & mask) &* Self.slotSize + Self.payloadOffset
    }

    @inline(__always)
    private func isPublished(_ ticket: UInt64) -> Bool {
        stamp(Int(truncatingIfNeeded: ticket) & mask).pointee.load(ordering: .acquiring) == ticket &+ 1
    }

    @inline(__always)
    private func markPublished(_ ticket: UInt64) {
        stamp(Int(truncatingIfNeeded: ticket) & mask).pointee.store(ticket &+ 1, ordering: .releasing)
    }

    /// Slots reserved: the first ticket, and whether they fill the log past half, when the
    /// consumer should be woken whatever it is doing.
    struct Reservation {
        var ticket: UInt64
        var reachesHalf: Bool
    }

    /// Reserves `count` consecutive slots; nil when the log has no room for them.
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

    /// Fills and publishes the reserved slot `ticket` (not an attach: see
    /// ``publish(_:details:at:)``).
    @inline(__always)
    func publish(_ entry: consuming LogEntry, at ticket: UInt64) {
        payload(ticket).initializeMemory(as: LogEntry.self, to: entry)
        markPublished(ticket)
    }

    /// Fills and publishes an attach's three reserved slots from `ticket`: its details first,
    /// then the entry, so that a consumer that sees the entry sees its details.
    @inline(__always)
    func publish(_ entry: consuming LogEntry, details: consuming AttachDetails, at ticket: UInt64) {
        payload(ticket &+ 1).initializeMemory(as: AttachDetails.Names.self, to: details.names)
        markPublished(ticket &+ 1)
        payload(ticket &+ 2).initializeMemory(as: NodeOrigin.self, to: details.origin)
        markPublished(ticket &+ 2)
        publish(entry, at: ticket)
    }

    /// Whether a slot was reserved that has not been taken yet.
    var hasReserved: Bool {
        head.load(ordering: .sequentiallyConsistent) != tail.load(ordering: .acquiring)
    }

    /// The next ticket to be reserved: every entry before it has been reserved.
    var reservedEnd: UInt64 { head.load(ordering: .sequentiallyConsistent) }

    /// Takes the published entries in order (an attach with its details), up to the first one
    /// still being written, or, with `through`, every entry before that ticket (waiting for
    /// those being written); about `maximum` slots at most (an attach is not split). Consumer
    /// side only: the caller holds the tracker's lock.
    func drain(
        through end: UInt64? = nil, maximum: Int = .max, _ body: (consuming LogEntry, consuming AttachDetails?) -> Void
    ) {
        var position = tail.load(ordering: .relaxed)
        let published = head.load(ordering: .acquiring)
        let limit = published &- position > UInt64(maximum) ? position &+ UInt64(maximum) : published
        var waited = 0
        while position < limit {
            guard isPublished(position) else {
                // A producer between its reservation and its publication: only a bounded set of
                // stores away, so waiting for it is short (it holds no lock).
                guard let end, position < end else { break }
                waited += 1
                if waited > 64 { Self.yield() }
                continue
            }
            let entry = payload(position).assumingMemoryBound(to: LogEntry.self).move()
            var details: AttachDetails?
            if entry.operation == .attach {
                // Published before the entry, and reserved with it.
                let names = payload(position &+ 1).assumingMemoryBound(to: AttachDetails.Names.self).move()
                let origin = payload(position &+ 2).assumingMemoryBound(to: NodeOrigin.self).move()
                details = AttachDetails(names: names, origin: origin)
                position &+= UInt64(Self.attachSlots)
            } else {
                position &+= 1
            }
            if position & 255 < UInt64(Self.attachSlots) { tail.store(position, ordering: .releasing) }
            body(entry, details)
        }
        tail.store(position, ordering: .releasing)
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
