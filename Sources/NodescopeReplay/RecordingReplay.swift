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

    /// Replays `reader`'s records up to `instant`, from the first record. To look at many
    /// instants of one recording, open a ``RecordingSeeker``: it replays from a keyframe instead.
    public static func replay(_ reader: RecordingReader, at instant: ReplayInstant) -> RecordingReplay {
        var cursor = ReplayCursor(reader)
        cursor.advance(to: instant)
        return cursor.replay
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
