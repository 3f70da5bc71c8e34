import Glibc
import NIOCore
import NodescopeCollector
import NodescopeRecording
import NodescopeWire

/// The event loop's side of one recording: it gathers the frames of one read into a batch and
/// hands the batch to the ``RecordingSink`` in one step. When the sink refuses a batch (the
/// disk does not keep up), the frames are counted as lost and nothing more is handed over
/// until a batch with a gap, a restart and a fresh snapshot of the collector's tree is taken.
final class SessionRecorder {
    let sink: RecordingSink
    /// The client connection whose `record` request started it (nil for `--record-dir`).
    let owner: ConnectionID?
    /// The request id of that client's `record` request.
    let requestID: UInt32
    private var batch: [RecordingSink.Item] = []
    private var lost: UInt64 = 0

    init(sink: RecordingSink, owner: ConnectionID?, requestID: UInt32) {
        self.sink = sink
        self.owner = owner
        self.requestID = requestID
    }

    /// Adds a frame the collector took at `arrival`.
    func record(_ message: WireMessage, arrival: UInt64) {
        if lost > 0 {
            lost &+= 1
            return
        }
        batch.append(.frame(message, arrival: arrival))
    }

    /// Adds the frames of one read that the collector took, as the bytes they arrived in: not
    /// encoded again (the writer thread only writes them).
    func record(_ pack: FramePack) {
        guard !pack.isEmpty else { return }
        if lost > 0 {
            lost &+= UInt64(pack.count)
            return
        }
        batch.append(.frames(pack))
    }

    /// Hands the batch over; after a loss, first tries to resynchronize from `resync`.
    func flush(arrival: UInt64, resync: () -> [WireMessage]?) {
        if lost > 0 {
            var items: [RecordingSink.Item] = [.gap(lost, arrival: arrival), .restart(arrival: arrival)]
            items += (resync() ?? []).map { .frame($0, arrival: arrival) }
            if sink.enqueue(items) { lost = 0 }
            batch.removeAll()
            return
        }
        guard !batch.isEmpty else { return }
        if !sink.enqueue(batch) { lost = UInt64(batch.reduce(0) { $0 + $1.frameCount }) }
        batch.removeAll(keepingCapacity: true)
    }

    /// Ends the recording: what is batched, then the end record, the index and the trailer.
    func finish(_ end: RecordingEnd, arrival: UInt64, resync: () -> [WireMessage]?) {
        flush(arrival: arrival, resync: resync)
        var items: [RecordingSink.Item] = []
        if lost > 0 { items.append(.gap(lost, arrival: arrival)) }
        items.append(.finish(end, arrival: arrival))
        _ = sink.enqueue(items)
    }

    /// The recorder's wall clock, ns since the Unix epoch.
    static func wallNanos() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(max(0, spec.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, spec.tv_nsec))
    }

    /// A file name for a recording of a process: `NAME-PID-SESSION.nsrec`, the name reduced to
    /// letters, digits, `.`, `_` and `-`.
    static func fileName(processName: String, pid: UInt32, session: SessionID, wallNanos: UInt64) -> String {
        let safe = String(
            processName.unicodeScalars.prefix(64).map { scalar -> Character in
                let ok =
                    scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "._-".unicodeScalars.contains(scalar))
                return ok ? Character(scalar) : "_"
            })
        let name = safe.isEmpty || safe.hasPrefix(".") ? "process\(safe)" : safe
        return "\(name)-\(pid)-\(wallNanos / 1_000_000_000)-\(session.rawValue).nsrec"
    }
}
