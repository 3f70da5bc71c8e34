import NodescopeCollector
import NodescopeRecording

/// A recording opened for looking at many instants (the web view's time slider): opening
/// replays it once from the start and keeps keyframes, copies of the whole replay state every
/// ``spacing`` records; a seek starts from the last keyframe at or before the instant (or from
/// the previous seek's state, when that is nearer) and replays only the records in between.
///
/// Exact by construction: a keyframe is the collector's state itself (a value: nodes, leak
/// records, late releases, occurrence counts, flag times, the session's sequence and snapshot
/// rules), not a summary of it, so what a seek gives is what a replay from the first record
/// gives. The keyframes' memory is bounded by ``budget``: when their
/// ``Collector/storedItems`` together exceed it, every other keyframe is dropped and the
/// spacing doubles.
package struct RecordingSeeker: Sendable {
    /// The recording.
    package let reader: RecordingReader
    /// The keyframes, in record order; the first is before the first record.
    package private(set) var keyframes: [ReplayCursor]
    /// The state after the last record (a seek to the end costs nothing).
    package let final: ReplayCursor
    /// Records between two keyframes.
    package private(set) var spacing: UInt64
    /// The most ``Collector/storedItems`` that the keyframes hold together.
    package let budget: Int

    /// The default of ``budget``: about 200 to 400 MB of collector state.
    package static let defaultBudget = 4_000_000
    /// The default of the smallest spacing, in records.
    package static let defaultSpacing: UInt64 = 4_096

    /// Opens `reader` for seeking: replays it once, keeping keyframes every `spacing` records
    /// (more apart when they would hold more than `budget` items together).
    package init(_ reader: RecordingReader, spacing: UInt64 = defaultSpacing, budget: Int = defaultBudget) {
        self.reader = reader
        self.budget = budget
        var spacing = max(spacing, 1)
        var cursor = ReplayCursor(reader)
        var keyframes = [cursor]
        var stored = cursor.replay.collector.storedItems
        while true {
            let next = keyframes[keyframes.count - 1].replay.recordsApplied + spacing
            cursor.advance(to: .event(next))
            guard cursor.replay.recordsApplied == next else { break }
            keyframes.append(cursor)
            stored += cursor.replay.collector.storedItems
            while stored > budget, keyframes.count > 1 {
                // Every other keyframe goes; the ones kept stay `spacing` × 2 apart.
                keyframes = keyframes.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
                spacing *= 2
                stored = keyframes.reduce(0) { $0 + $1.replay.collector.storedItems }
            }
        }
        self.keyframes = keyframes
        self.spacing = spacing
        self.final = cursor
    }

    /// The state at `instant`.
    package func replay(at instant: ReplayInstant) -> RecordingReplay {
        cursor(at: instant).replay
    }

    /// A cursor at `instant`, advanced from the nearest keyframe before it, or from `previous`
    /// (an earlier seek's cursor on this recording) when that is nearer and not past `instant`:
    /// stepping or playing forward then replays only the records in between.
    package func cursor(at instant: ReplayInstant, continuing previous: ReplayCursor? = nil) -> ReplayCursor {
        var start = keyframe(for: instant)
        if let previous, previous.canReach(instant), previous.replay.recordsApplied > start.replay.recordsApplied {
            start = previous
        }
        start.advance(to: instant)
        return start
    }

    /// The last keyframe (or the final state) from which `instant` can be reached.
    package func keyframe(for instant: ReplayInstant) -> ReplayCursor {
        if final.canReach(instant) { return final }
        // canReach holds for a prefix of the keyframes, and always for the first.
        var low = 1
        var high = keyframes.count
        while low < high {
            let middle = (low + high) / 2
            if keyframes[middle].canReach(instant) { low = middle + 1 } else { high = middle }
        }
        return keyframes[low - 1]
    }
}
