import NodesTracking
import Synchronization

/// The bounded hand-off between the node lifecycle and the agent's writer thread: a ring of
/// fixed capacity with one producer and one consumer, and no lock.
///
/// One producer: the tracker calls its sinks while holding its own lock, so enqueues never run
/// concurrently. One consumer: the writer thread. A full ring drops and counts; it never
/// blocks and never grows.
final class EventQueue: @unchecked Sendable {
    // Unchecked because the ring's raw storage is shared: a Mutex would make it checked, but
    // would put a lock on the app thread's recording path, which this ring exists to avoid.
    // `storage` slots in [tail, head) are initialized and owned by the consumer side once
    // published by the producer's release store of `head`; the rest are owned by the producer.
    /// The most events held at once (a power of two).
    let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<DebugInformation>
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)
    private let dropped = Atomic<UInt64>(0)

    init(capacity: Int) {
        var size = 1
        while size < max(capacity, 2) { size <<= 1 }
        self.capacity = size
        self.mask = size - 1
        // Zeroed, as the tracker's other raw blocks: a freed block's words left in the slots not
        // written yet would read as references to the retainer analysis.
        let bytes = size * MemoryLayout<DebugInformation>.stride
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: MemoryLayout<DebugInformation>.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        self.storage = raw.bindMemory(to: DebugInformation.self, capacity: size)
    }

    deinit {
        let (start, end) = (tail.load(ordering: .acquiring), head.load(ordering: .acquiring))
        for position in start..<end { (storage + (position & mask)).deinitialize(count: 1) }
        storage.deallocate()
    }

    /// Adds an event, or counts it as dropped when the ring is full. Returns how many events
    /// are queued. Producer side only.
    @inline(__always)
    func enqueue(_ event: consuming DebugInformation) -> Int {
        let position = head.load(ordering: .relaxed)
        let queued = position &- tail.load(ordering: .acquiring)
        guard queued < capacity else {
            dropped.wrappingAdd(1, ordering: .relaxed)
            return queued
        }
        (storage + (position & mask)).initialize(to: consume event)
        head.store(position &+ 1, ordering: .releasing)
        return queued &+ 1
    }

    /// Counts `count` events as dropped that never reached the ring (the writer let them go
    /// while its connection was stalled): the next ``take(into:)`` reports them.
    func countDropped(_ count: UInt64) {
        dropped.wrappingAdd(count, ordering: .relaxed)
    }

    /// Moves every queued event into `batch` and returns how many were dropped since the last
    /// take. Consumer side only.
    func take(into batch: inout [DebugInformation]) -> UInt64 {
        let start = tail.load(ordering: .relaxed)
        let end = head.load(ordering: .acquiring)
        let droppedSoFar = dropped.exchange(0, ordering: .relaxed)
        batch.reserveCapacity(batch.count + (end &- start))
        for position in start..<end { batch.append((storage + (position & mask)).move()) }
        tail.store(end, ordering: .releasing)
        return droppedSoFar
    }

    /// Moves every queued event out, in order: to `encoding` while none was dropped since the
    /// last take (each encoded and let go, with no copy), else into `batch`. Returns how many
    /// were dropped. Consumer side only.
    func take(into batch: inout [DebugInformation], encoding: any AppliedChangeEncoder) -> UInt64 {
        let start = tail.load(ordering: .relaxed)
        let end = head.load(ordering: .acquiring)
        let droppedSoFar = dropped.exchange(0, ordering: .relaxed)
        if droppedSoFar == 0, batch.isEmpty {
            for position in start..<end {
                let event = (storage + (position & mask)).move()
                encoding.encode(event)
            }
        } else {
            batch.reserveCapacity(batch.count + (end &- start))
            for position in start..<end { batch.append((storage + (position & mask)).move()) }
            if droppedSoFar == 0 {
                for event in batch { encoding.encode(event) }
                batch.removeAll(keepingCapacity: true)
            }
        }
        tail.store(end, ordering: .releasing)
        return droppedSoFar
    }

    /// Forgets everything queued (on disconnect). Consumer side only.
    func clear() {
        var discarded: [DebugInformation] = []
        _ = take(into: &discarded)
    }

    /// Whether nothing is queued and nothing was dropped.
    var isEmpty: Bool {
        head.load(ordering: .acquiring) == tail.load(ordering: .acquiring) && dropped.load(ordering: .relaxed) == 0
    }
}
