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

    /// What one applied record changed, for ``replay(_:at:observing:)``.
    public struct Step {
        /// The changes, in order (a session's end included).
        public var changes: [TreeChange]
        /// The record's arrival time, on the recorder's clock.
        public var arrivalNanos: UInt64
        /// For a frame of a node event, the host's time of the event on the recorder's clock
        /// (as the collector maps it); nil for other records.
        public var eventNanos: UInt64?
        /// The collector after the record (read it, do not keep it: a kept copy makes the
        /// replay copy the collector's storage on its next record).
        public var collector: Collector
        /// The recorded process's session in ``collector``.
        public var session: SessionID
    }

    /// Replays `reader`'s records up to `instant`.
    public static func replay(_ reader: RecordingReader, at instant: ReplayInstant) -> RecordingReplay {
        replay(reader, at: instant, observing: nil)
    }

    /// Replays `reader`'s records up to `instant`, telling `observe` what each record changed
    /// (a command that draws what happened over time, rather than one instant, reads them).
    public static func replay(
        _ reader: RecordingReader, at instant: ReplayInstant, observing observe: ((Step) -> Void)?
    ) -> RecordingReplay {
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
        var mapping = HostClockMapping(helloTime: header.hello.monotonicNanos, now: header.startMonotonicNanos, relation: clocks)
        var eventNanos: UInt64?
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
            changes.removeAll(keepingCapacity: true)
            eventNanos = nil
            switch item.content {
            case .frame(let message):
                guard !ended else { break }
                if observe != nil { eventNanos = Self.eventTime(of: message).map(mapping.collectorTime) }
                do {
                    try collector.ingest(message, session: session, now: item.arrivalNanos, into: &changes)
                } catch {
                    warnings.append("the replay stops at record \(item.number + 1), which the collector refuses: \(error.message)")
                    break loop
                }
                if case .goodbye = message {
                    changes += collector.endSession(session, normally: true, now: item.arrivalNanos)
                    ended = true
                }
            case .gap:
                if !ended { changes += collector.endSession(session, normally: false, now: item.arrivalNanos) }
                ended = true
            case .restart:
                if !ended { changes += collector.endSession(session, normally: false, now: item.arrivalNanos) }
                session = collector.openSession(header.hello, now: item.arrivalNanos, clocks: clocks)
                mapping = HostClockMapping(helloTime: header.hello.monotonicNanos, now: item.arrivalNanos, relation: clocks)
                ended = false
            case .end(let how):
                if !ended, how != .stopped {
                    changes += collector.endSession(session, normally: how == .normal, now: item.arrivalNanos)
                    ended = true
                }
            }
            applied = item.number + 1
            arrival = item.arrivalNanos
            if let observe, !changes.isEmpty {
                observe(
                    Step(changes: changes, arrivalNanos: item.arrivalNanos, eventNanos: eventNanos, collector: collector, session: session))
            }
        }
        return RecordingReplay(
            collector: collector, session: session, recordsApplied: applied, arrivalNanos: arrival, hasEnded: ended,
            warnings: warnings)
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
