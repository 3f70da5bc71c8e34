import Glibc
import NodescopeCollector
import NodescopeWire
import Testing

/// A quick measure of ingest speed and memory per node; it prints, it asserts nothing (the
/// benchmark targets are checked by the benchmarks, not by timed tests).
///
/// For meaningful figures run it optimized:
/// `swift test -c release --scratch-path .build-collector --filter IngestRateTests`
@Suite("Ingest rate (prints figures, no assertion)")
struct IngestRateTests {
    #if DEBUG
    static let nodeCount = 20_000
    #else
    static let nodeCount = 1_000_000
    #endif

    /// The resident set size, from `/proc/self/statm`.
    static func heapBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return 0 }
        let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test func ingestRateAndBytesPerNode() throws {
        let clock = ContinuousClock()
        let count = UInt64(Self.nodeCount)
        let heapBefore = Self.heapBytes()
        var collector = Collector()
        let now: UInt64 = 1_000_000_000
        let session = collector.openSession(
            Hello(role: .host, pid: 1, monotonicNanos: now, wallNanos: 0, processName: "bench"), now: now)
        var changes: [TreeChange] = []
        changes.reserveCapacity(16)
        let strings = ["Flow", "Item", "flow", "context", "worker", "ItemFlow", "ItemContext", "ItemWorker"]
        for (index, value) in strings.enumerated() {
            try collector.ingest(
                .defineString(DefineStringFrame(stringID: UInt32(index + 1), value: value)), session: session, now: now,
                into: &changes)
        }
        var sequence: UInt64 = 0
        func next() -> UInt64 {
            sequence += 1
            return sequence
        }

        // Build: attach, three objects, a state change per node (5 events); a tree of fan-out 8.
        let buildStart = clock.now
        for id in 1...count {
            changes.removeAll(keepingCapacity: true)
            let parent = id == 1 ? 0 : max(1, id / 8)
            try collector.ingest(
                .nodeAttached(
                    NodeAttachedFrame(
                        sequence: next(), timeNanos: now, nodeID: id, parentID: parent, kindStringID: id == 1 ? 1 : 2,
                        nameStringID: 0)),
                session: session, now: now, into: &changes)
            for index in 0..<3 as Range<UInt16> {
                try collector.ingest(
                    .objectAdded(
                        ObjectAddedFrame(
                            sequence: next(), timeNanos: now, nodeID: id, objectIndex: index,
                            roleStringID: UInt32(3 + index),
                            typeNameStringID: UInt32(6 + index))), session: session, now: now, into: &changes)
            }
            try collector.ingest(
                .stateChanged(StateChangedFrame(sequence: next(), timeNanos: now, nodeID: id, state: .active)),
                session: session, now: now, into: &changes)
        }
        let buildTime = clock.now - buildStart
        let heapAfter = Self.heapBytes()
        let buildEvents = Double(count * 5)

        // Churn: detach and release the deepest half (5 events per node: detach, 3 releases... plus
        // the removals they cause), leaves first.
        let churnStart = clock.now
        var churnEvents = 0.0
        var id = count
        while id > count / 2 {
            changes.removeAll(keepingCapacity: true)
            try collector.ingest(
                .nodeDetached(NodeDetachedFrame(sequence: next(), timeNanos: now, nodeID: id)),
                session: session, now: now, into: &changes)
            for index in 0..<3 as Range<UInt16> {
                try collector.ingest(
                    .objectReleased(
                        ObjectReleasedFrame(sequence: next(), timeNanos: now, nodeID: id, objectIndex: index)),
                    session: session, now: now, into: &changes)
            }
            churnEvents += 4
            id -= 1
        }
        let churnTime = clock.now - churnStart

        // The same build through the array-returning API, in a fresh collector.
        var plain = Collector()
        let other = plain.openSession(
            Hello(role: .host, pid: 2, monotonicNanos: now, wallNanos: 0, processName: "plain"), now: now)
        for (index, value) in strings.enumerated() {
            _ = try plain.ingest(
                .defineString(DefineStringFrame(stringID: UInt32(index + 1), value: value)), session: other, now: now)
        }
        sequence = 0
        let plainStart = clock.now
        let plainCount = count / 4
        for id in 1...plainCount {
            _ = try plain.ingest(
                .nodeAttached(
                    NodeAttachedFrame(
                        sequence: next(), timeNanos: now, nodeID: id, parentID: id == 1 ? 0 : max(1, id / 8),
                        kindStringID: 2, nameStringID: 0)),
                session: other, now: now)
            _ = try plain.ingest(
                .objectAdded(
                    ObjectAddedFrame(
                        sequence: next(), timeNanos: now, nodeID: id, objectIndex: 0, roleStringID: 3,
                        typeNameStringID: 6)), session: other, now: now)
            _ = try plain.ingest(
                .stateChanged(StateChangedFrame(sequence: next(), timeNanos: now, nodeID: id, state: .active)),
                session: other, now: now)
        }
        let plainTime = clock.now - plainStart

        func rate(_ events: Double, _ time: Duration) -> String {
            let seconds = Double(time.components.seconds) + Double(time.components.attoseconds) / 1e18
            return "\(Int(events / max(seconds, 1e-9) / 1_000)) k events/s"
        }
        print(
            """
            collector ingest, \(count) nodes:
              build (attach + 3 objects + state): \(rate(buildEvents, buildTime)) (\(buildTime))
              churn (detach + 3 releases, clean): \(rate(churnEvents, churnTime)) (\(churnTime))
              array-returning ingest (attach + object + state): \(rate(Double(plainCount * 3), plainTime))
              resident memory: \((heapAfter - heapBefore) / Int(count)) bytes per live node (3 objects each)
            """)
        #expect(collector.summary(session)?.liveNodes == Int(count - count / 2))
        #expect(plain.summary(other)?.liveNodes == Int(plainCount))
    }
}
