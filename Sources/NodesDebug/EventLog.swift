import Synchronization

/// One change as the app's thread records it: a fixed-size value of ids, a time and a few
/// shared strings (no allocation), turned into a registry update and a ``DebugInformation``
/// later, by whoever drains the ``EventLog`` under the tracker's lock.
struct LogEntry {
    enum Operation: UInt8 {
        /// A node joined the tree; `index` is how many object entries follow it.
        case attach
        /// Object `index` of the node, registered with its attach (it reports its own release).
        case object
        case state
        case detach
        /// Object `index` of the node was deallocated.
        case release
    }

    /// What only an attach and its objects carry (nil for the frequent changes, which so stay
    /// a few integers to write and nothing to release).
    struct Details {
        var parent: NodeID?
        var kind: NodeKind
        var role: ObjectRole
        /// The node's name when given; otherwise the type's name, looked up on applying.
        var name: String?
        var origin: NodeOrigin
    }

    var operation: Operation
    var state: NodeState = .started
    var index: UInt16 = 0
    var node: NodeID
    var time: UInt64
    /// The object's type (attach: the principal's; object): its name is interned per type.
    var type: AnyObject.Type?
    var address = ObfuscatedAddress.unknown
    var details: Details?
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
    let capacity: Int
    private let mask: Int
    private let entries: UnsafeMutablePointer<LogEntry>
    private let stamps: UnsafeMutablePointer<Atomic<UInt64>>
    // The producers' line (the next ticket, and their last reading of `tail`) and the
    // consumer's (`tail`) are kept apart: sharing a cache line would make every append wait
    // for the consumer's last store.
    private let head = Atomic<UInt64>(0)
    private let knownTail = Atomic<UInt64>(0)
    private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    private let tail = Atomic<UInt64>(0)

    init(capacity: Int) {
        var size = 1
        while size < max(capacity, 2) { size <<= 1 }
        self.capacity = size
        self.mask = size - 1
        self.entries = .allocate(capacity: size)
        self.stamps = .allocate(capacity: size)
        for index in 0..<size { (stamps + index).initialize(to: Atomic(0)) }
    }

    deinit {
        let (start, end) = (tail.load(ordering: .acquiring), head.load(ordering: .acquiring))
        var position = start
        while position < end {
            let slot = Int(truncatingIfNeeded: position) & mask
            if stamps[slot].load(ordering: .acquiring) == position &+ 1 { (entries + slot).deinitialize(count: 1) }
            position &+= 1
        }
        stamps.deinitialize(count: capacity)
        stamps.deallocate()
        entries.deallocate()
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

    /// Fills and publishes the reserved slot `ticket`.
    @inline(__always)
    func publish(_ entry: consuming LogEntry, at ticket: UInt64) {
        let slot = Int(truncatingIfNeeded: ticket) & mask
        (entries + slot).initialize(to: entry)
        stamps[slot].store(ticket &+ 1, ordering: .releasing)
    }

    /// Whether a slot was reserved that has not been taken yet.
    var hasReserved: Bool {
        head.load(ordering: .sequentiallyConsistent) != tail.load(ordering: .acquiring)
    }

    /// The next ticket to be reserved: every entry before it has been reserved.
    var reservedEnd: UInt64 { head.load(ordering: .sequentiallyConsistent) }

    /// Takes the published entries in order, up to the first one still being written, or, with
    /// `through`, every entry before that ticket (waiting for those being written). Consumer
    /// side only: the caller holds the tracker's lock.
    func drain(through end: UInt64? = nil, _ body: (consuming LogEntry) -> Void) {
        var position = tail.load(ordering: .relaxed)
        let limit = head.load(ordering: .acquiring)
        var waited = 0
        while position < limit {
            let slot = Int(truncatingIfNeeded: position) & mask
            guard stamps[slot].load(ordering: .acquiring) == position &+ 1 else {
                // A producer between its reservation and its publication: only a bounded set of
                // stores away, so waiting for it is short (it holds no lock).
                guard let end, position < end else { break }
                waited += 1
                if waited > 64 { Self.yield() }
                continue
            }
            let entry = (entries + slot).move()
            position &+= 1
            if position & 255 == 0 { tail.store(position, ordering: .releasing) }
            body(entry)
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
