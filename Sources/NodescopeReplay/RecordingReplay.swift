import NodescopeCollector
import NodescopeRecording
import NodescopeWire

/// Rebuilds what the collector held at an instant of a recording, by feeding the recorded
/// frames, with their arrival times, to the collector's own pure model. So every reading
/// command renders a replayed tree with the renderers it uses live.
package struct RecordingReplay: Sendable {
    /// The collector as it was at the instant.
    package var collector: Collector
    /// The recorded process's session in ``collector`` (the last one, after a restart).
    package var session: SessionID
    /// How many records were applied.
    package var recordsApplied: UInt64
    /// The arrival time of the last record applied (the start's when none was).
    package var arrivalNanos: UInt64
    /// What went wrong short of an error: the reader's warnings, and a record that could not
    /// be applied (the replay stops before it).
    package var warnings: [String]
    /// When the recorded stream ended (the arrival of its end, on the recorder's clock); nil
    /// while it runs at the instant.
    package var endedAtNanos: UInt64?
    /// Whether the recorded stream had ended at the instant.
    package var hasEnded: Bool { endedAtNanos != nil }
    /// The time asked for, on the recorder's clock, no later than the recording's last record;
    /// nil for the end and for `event:N`.
    package var targetNanos: UInt64?
    /// The recording's start on the recorder's two clocks (its header's pair).
    package var startMonotonicNanos: UInt64
    /// The wall clock at ``startMonotonicNanos``, ns since the Unix epoch.
    package var startWallNanos: UInt64

    /// When the replayed tree stands so, ns since the Unix epoch: the stream's end once it had
    /// ended; otherwise the time asked for (the recording's start for a time before it; its last
    /// record for a time after it), or for the end, for `event:N` and for a replay stopped at a
    /// damaged record the arrival of the last record applied. The daemon maps its clock to the
    /// wall clock through the same pair, so a tree read live and replayed to the end carry the
    /// same stamp.
    package var wallNanos: UInt64 {
        wallNanos(atRecorder: endedAtNanos ?? max(arrivalNanos, targetNanos ?? arrivalNanos))
    }

    /// ``wallNanos`` for a tree of `session`: an earlier session of the recording (before a
    /// restart) stands at its own end.
    package func wallNanos(of session: SessionID) -> UInt64 {
        guard session != self.session, let ended = collector.summary(session)?.endedAtNanos else { return wallNanos }
        return wallNanos(atRecorder: ended)
    }

    /// The wall clock at `instant` on the recorder's clock, through the header's pair.
    private func wallNanos(atRecorder instant: UInt64) -> UInt64 {
        if instant < startMonotonicNanos { return startWallNanos - min(startWallNanos, startMonotonicNanos - instant) }
        let (sum, overflow) = startWallNanos.addingReportingOverflow(instant - startMonotonicNanos)
        return overflow ? .max : sum
    }

    /// What one applied record changed, for ``replay(_:at:observing:)``.
    package struct Step {
        /// The changes, in order (a session's end included).
        package var changes: [TreeChange]
        /// The record's arrival time, on the recorder's clock.
        package var arrivalNanos: UInt64
        /// For a frame of a node event, the host's time of the event on the recorder's clock
        /// (as the collector maps it); nil for other records.
        package var eventNanos: UInt64?
        /// The collector after the record (read it, do not keep it: a kept copy makes the
        /// replay copy the collector's storage on its next record).
        package var collector: Collector
        /// The recorded process's session in ``collector``.
        package var session: SessionID
    }

    /// Replays `reader`'s records up to `instant`, from the first record. To look at many
    /// instants of one recording, open a ``RecordingSeeker``: it replays from a keyframe instead.
    package static func replay(_ reader: RecordingReader, at instant: ReplayInstant) -> RecordingReplay {
        replay(reader, at: instant, observing: nil)
    }

    /// Replays `reader`'s records up to `instant`, telling `observe` what each record changed
    /// (a command that draws what happened over time, rather than one instant, reads them).
    package static func replay(
        _ reader: RecordingReader, at instant: ReplayInstant, observing observe: ((Step) -> Void)?
    ) -> RecordingReplay {
        var cursor = ReplayCursor(reader)
        cursor.advance(to: instant, observing: observe)
        return cursor.replay
    }

    /// The host's time of a node event frame (host clock); nil for other frames.
    static func eventTime(of message: WireMessage) -> UInt64? {
        switch message {
        case .nodeAttached(let frame): frame.timeNanos
        case .objectAdded(let frame): frame.timeNanos
        case .stateChanged(let frame): frame.timeNanos
        case .nodeDetached(let frame): frame.timeNanos
        case .objectReleased(let frame): frame.timeNanos
        default: nil
        }
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
