import NodescopeCollector
import NodescopeRecording
import NodescopeWire

/// A replay in progress: the collector's state after some records of a recording, and where the
/// next record is. Advancing it applies records in order, exactly as a replay from the start
/// does, so a cursor copied at record N and advanced to an instant gives the very state that a
/// replay from the first record gives there (the collector is a value: a copy is its whole
/// state, leak history included).
package struct ReplayCursor: Sendable {
    /// The state reached: the collector, the session, the records applied, the warnings.
    package private(set) var replay: RecordingReplay
    private var records: RecordingReader.Records
    private let header: RecordingHeader
    private let clocks: ClockRelation
    /// Maps the host's event times to the recorder's clock, as the collector does (per session).
    private var mapping: HostClockMapping
    /// Set when a record could not be read or applied: nothing after it is applied, ever.
    private var isStopped = false
    /// The arrival of the recording's last record (a replay's time asked for goes no later).
    private let lastArrivalNanos: UInt64

    /// A cursor before the first record of `reader`: a session opened with the header's hello.
    package init(_ reader: RecordingReader) {
        let header = reader.header
        let settings = CollectorSettings(graceNanos: header.graceNanos, holdExit: header.holdExit)
        var collector = Collector(settings: settings)
        let clocks: ClockRelation =
            switch header.clockRelation {
            case 1: .same
            case 2: .different
            default: .unknown
            }
        let session = collector.openSession(header.hello, now: header.startMonotonicNanos, clocks: clocks)
        self.header = header
        self.clocks = clocks
        self.mapping = HostClockMapping(helloTime: header.hello.monotonicNanos, now: header.startMonotonicNanos, relation: clocks)
        self.records = reader.records()
        self.lastArrivalNanos = max(reader.lastArrivalNanos, header.startMonotonicNanos)
        self.replay = RecordingReplay(
            collector: collector, session: session, recordsApplied: 0, arrivalNanos: header.startMonotonicNanos,
            warnings: reader.warnings, startMonotonicNanos: header.startMonotonicNanos,
            startWallNanos: header.startWallNanos)
    }

    /// Whether advancing this cursor can reach `instant`: it has applied no record that a replay
    /// to `instant` leaves out.
    package func canReach(_ instant: ReplayInstant) -> Bool {
        switch instant {
        case .end: return true
        case .event(let count): return replay.recordsApplied <= count
        case .seconds, .wall:
            guard replay.recordsApplied > 0, let target = RecordingReplay.target(instant, header: header) else { return true }
            return replay.arrivalNanos <= target
        }
    }

    /// Applies the records up to `instant` (those that arrived at or before it, or the first N
    /// for `event:N`), from where the cursor is. A cursor that is already past `instant` stays
    /// where it is (see ``canReach(_:)``). `observe`, if given, is told what each record changed.
    package mutating func advance(to instant: ReplayInstant, observing observe: ((RecordingReplay.Step) -> Void)? = nil) {
        let target = RecordingReplay.target(instant, header: header)
        // A replay stopped at a damaged record knows the tree only up to its last record.
        replay.targetNanos = isStopped ? nil : target.map { min($0, lastArrivalNanos) }
        guard !isStopped else { return }
        var changes: [TreeChange] = []
        changes.reserveCapacity(16)
        while true {
            if case .event(let count) = instant, replay.recordsApplied >= count { return }
            // The record is read from a copy, so that one that arrived after the instant stays
            // the next one for a later advance.
            var ahead = records
            let item: RecordedItem
            do {
                guard let next = try ahead.next() else { return }
                item = next
            } catch {
                replay.warnings.append("the replay stops before a damaged record: \(error.message)")
                isStopped = true
                replay.targetNanos = nil
                return
            }
            if let target, item.arrivalNanos > target { return }
            changes.removeAll(keepingCapacity: true)
            var eventNanos: UInt64?
            if observe != nil, !replay.hasEnded, case .frame(let message) = item.content,
                let hostTime = RecordingReplay.eventTime(of: message)
            {
                eventNanos = mapping.collectorTime(hostTime)
            }
            guard apply(item, changes: &changes) else {
                isStopped = true
                replay.targetNanos = nil
                return
            }
            records = ahead
            replay.recordsApplied = item.number + 1
            replay.arrivalNanos = item.arrivalNanos
            if let observe, !changes.isEmpty {
                let step = RecordingReplay.Step(
                    changes: changes, arrivalNanos: item.arrivalNanos, eventNanos: eventNanos, collector: replay.collector,
                    session: replay.session)
                observe(step)
            }
        }
    }

    /// Applies one record; false (with a warning) when the collector refuses it.
    private mutating func apply(_ item: RecordedItem, changes: inout [TreeChange]) -> Bool {
        switch item.content {
        case .frame(let message):
            guard !replay.hasEnded else { return true }
            do {
                try replay.collector.ingest(message, session: replay.session, now: item.arrivalNanos, into: &changes)
            } catch {
                replay.warnings.append(
                    "the replay stops at record \(item.number + 1), which the collector refuses: \(error.message)")
                return false
            }
            if case .goodbye = message {
                changes += replay.collector.endSession(replay.session, normally: true, now: item.arrivalNanos)
                replay.endedAtNanos = item.arrivalNanos
            }
        case .gap:
            if !replay.hasEnded {
                changes += replay.collector.endSession(replay.session, normally: false, now: item.arrivalNanos)
                replay.endedAtNanos = item.arrivalNanos
            }
        case .restart:
            if !replay.hasEnded { changes += replay.collector.endSession(replay.session, normally: false, now: item.arrivalNanos) }
            replay.session = replay.collector.openSession(header.hello, now: item.arrivalNanos, clocks: clocks)
            mapping = HostClockMapping(helloTime: header.hello.monotonicNanos, now: item.arrivalNanos, relation: clocks)
            replay.endedAtNanos = nil
        case .end(let how):
            if !replay.hasEnded, how != .stopped {
                changes += replay.collector.endSession(replay.session, normally: how == .normal, now: item.arrivalNanos)
                replay.endedAtNanos = item.arrivalNanos
            }
        }
        return true
    }
}
