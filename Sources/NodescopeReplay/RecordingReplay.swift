import NodescopeCollector
import NodescopeRecording
import NodescopeWire

/// Rebuilds what the collector held at an instant of a recording, by feeding the recorded
/// frames, with their arrival times, to the collector's own pure model. So every reading
/// command renders a replayed tree with the renderers it uses live.
public struct RecordingReplay: Sendable {
    /// The collector as it was at the instant.
    public var collector: Collector
    /// The recorded process's session in ``collector`` (the last one, after a restart).
    public var session: SessionID
    /// How many records were applied.
    public var recordsApplied: UInt64
    /// The arrival time of the last record applied (the start's when none was).
    public var arrivalNanos: UInt64
    /// Whether the recorded stream had ended at the instant.
    public var hasEnded: Bool
    /// What went wrong short of an error: the reader's warnings, and a record that could not
    /// be applied (the replay stops before it).
    public var warnings: [String]

    /// Replays `reader`'s records up to `instant`.
    public static func replay(_ reader: RecordingReader, at instant: ReplayInstant) -> RecordingReplay {
        let header = reader.header
        let settings = CollectorSettings(graceNanos: header.graceNanos, holdExit: header.holdExit)
        var collector = Collector(settings: settings)
        let clocks: ClockRelation =
            switch header.clockRelation {
            case 1: .same
            case 2: .different
            default: .unknown
            }
        var session = collector.openSession(header.hello, now: header.startMonotonicNanos, clocks: clocks)
        var warnings = reader.warnings
        var ended = false
        var applied: UInt64 = 0
        var arrival = header.startMonotonicNanos
        let target: UInt64? = Self.target(instant, header: header)
        var records = reader.records()
        var changes: [TreeChange] = []
        changes.reserveCapacity(16)
        loop: while true {
            if case .event(let count) = instant, applied >= count { break }
            let item: RecordedItem
            do {
                guard let next = try records.next() else { break }
                item = next
            } catch {
                warnings.append("the replay stops before a damaged record: \(error.message)")
                break
            }
            if let target, item.arrivalNanos > target { break }
            switch item.content {
            case .frame(let message):
                guard !ended else { break }
                changes.removeAll(keepingCapacity: true)
                do {
                    try collector.ingest(message, session: session, now: item.arrivalNanos, into: &changes)
                } catch {
                    warnings.append("the replay stops at record \(item.number + 1), which the collector refuses: \(error.message)")
                    break loop
                }
                if case .goodbye = message {
                    _ = collector.endSession(session, normally: true, now: item.arrivalNanos)
                    ended = true
                }
            case .gap:
                if !ended { _ = collector.endSession(session, normally: false, now: item.arrivalNanos) }
                ended = true
            case .restart:
                if !ended { _ = collector.endSession(session, normally: false, now: item.arrivalNanos) }
                session = collector.openSession(header.hello, now: item.arrivalNanos, clocks: clocks)
                ended = false
            case .end(let how):
                if !ended, how != .stopped {
                    _ = collector.endSession(session, normally: how == .normal, now: item.arrivalNanos)
                    ended = true
                }
            }
            applied = item.number + 1
            arrival = item.arrivalNanos
        }
        return RecordingReplay(
            collector: collector, session: session, recordsApplied: applied, arrivalNanos: arrival, hasEnded: ended,
            warnings: warnings)
    }

    /// The last arrival time to include, on the recorder's clock; nil for no limit.
    static func target(_ instant: ReplayInstant, header: RecordingHeader) -> UInt64? {
        switch instant {
        case .end, .event: return nil
        case .seconds(let seconds):
            let nanos = UInt64(max(0, min(seconds, 1e9)) * 1e9)
            let (sum, overflow) = header.startMonotonicNanos.addingReportingOverflow(nanos)
            return overflow ? UInt64.max : sum
        case .wall(let wall):
            guard wall >= header.startWallNanos else { return header.startMonotonicNanos }
            let (sum, overflow) = header.startMonotonicNanos.addingReportingOverflow(wall - header.startWallNanos)
            return overflow ? UInt64.max : sum
        }
    }
}
