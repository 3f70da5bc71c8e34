import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeRecording
import NodescopeReplay
import Synchronization

/// A recording that the web view serves in place of a collector (`nodescope ui --from FILE`):
/// the page's time slider asks for instants, and each is answered from a ``RecordingSeeker``
/// (keyframes of the replay's state), continuing the previous answer when the page steps or
/// plays forward. What it answers at an instant is what `tree`, `leaks` and `export`
/// `--from FILE --at` print there.
package final class RecordingSource: Sendable {
    /// The name of the recording shown on the page (the file's name).
    package let name: String
    /// The recording, opened for seeking.
    package let seeker: RecordingSeeker
    /// The last instant answered, from which a later one may continue.
    private let last = Mutex<ReplayCursor?>(nil)

    /// Opens `reader` for seeking (one replay of the whole recording, to make the keyframes).
    package init(
        name: String, reader: RecordingReader, spacing: UInt64 = RecordingSeeker.defaultSpacing,
        budget: Int = RecordingSeeker.defaultBudget
    ) {
        self.name = name
        self.seeker = RecordingSeeker(reader, spacing: spacing, budget: budget)
    }

    /// An instant of the page's `at` parameter: `end`, `event:N`, or seconds (`12.5`,
    /// `800ms`); `end` when there is none.
    package static func instant(_ text: String?) -> ReplayInstant? {
        guard let text, !text.isEmpty else { return .end }
        return ReplayInstant(argument: text)
    }

    /// The collector's state at `instant`.
    package func replay(at instant: ReplayInstant) -> RecordingReplay {
        let previous = last.withLock { $0 }
        let cursor = seeker.cursor(at: instant, continuing: previous)
        last.withLock { $0 = cursor }
        return cursor.replay
    }

    /// What the page needs to draw its timeline: the process, the span, the records.
    package struct Info: Codable, Sendable, Equatable {
        /// The recording's name.
        package var file: String
        /// The recorded process.
        package var processName: String
        /// Its pid.
        package var pid: UInt32
        /// Records that can be replayed.
        package var records: UInt64
        /// From the start to the last record, in seconds.
        package var durationSeconds: Double
        /// The recorder's wall clock at the start, ns since the Unix epoch.
        package var startWallNanos: UInt64
        /// How the recording ended: `normal`, `abnormal`, `stopped`, or `cut` (no end record).
        package var end: String
        /// What was wrong with the file short of an error.
        package var warnings: [String]
        /// Keyframes kept for seeking, and the records between two of them.
        package var keyframes: Int
        /// Records between two keyframes.
        package var keyframeSpacing: UInt64
    }

    /// The recording at a glance.
    package var info: Info {
        let reader = seeker.reader
        let end: String =
            switch reader.end {
            case .normal: "normal"
            case .abnormal: "abnormal"
            case .stopped: "stopped"
            case nil: "cut"
            }
        return Info(
            file: name, processName: reader.header.processName, pid: reader.header.pid, records: reader.recordCount,
            durationSeconds: Double(reader.lastArrivalNanos &- reader.header.startMonotonicNanos) / 1e9,
            startWallNanos: reader.header.startWallNanos, end: end, warnings: reader.warnings,
            keyframes: seeker.keyframes.count, keyframeSpacing: seeker.spacing)
    }

    /// Where a replay stopped.
    package struct Instant: Codable, Sendable, Equatable {
        /// The instant asked for, as the page wrote it.
        package var requested: String
        /// Records applied.
        package var event: UInt64
        /// The arrival of the last record applied, in seconds from the start.
        package var seconds: Double
        /// Whether the recorded stream had ended.
        package var ended: Bool
        /// The replay's warnings (the reader's, and a record that could not be applied).
        package var warnings: [String]
    }

    /// The page's answer for one instant: `{"instant", "process", "tree", "leaks"}`, the tree and
    /// leaks as the daemon's `tree` and `leaks` answers write them.
    package func instantBody(at instant: ReplayInstant, requested: String) -> [UInt8] {
        let replay = replay(at: instant)
        let start = seeker.reader.header.startMonotonicNanos
        let reached = Instant(
            requested: requested, event: replay.recordsApplied, seconds: Double(replay.arrivalNanos &- start) / 1e9,
            ended: replay.hasEnded, warnings: replay.warnings)
        var body = Array(#"{"instant":"#.utf8) + ControlBody.encode(reached)
        body += Array(#","process":"#.utf8)
        body += replay.collector.summary(replay.session).map { ControlBody.encode($0) } ?? Array("null".utf8)
        body += Array(#","tree":"#.utf8)
        body +=
            replay.collector.tree(replay.session).map { view in
                var view = view
                view.wallNanos = replay.wallNanos(of: view.session)
                return TreeJSON.encode(view)
            } ?? Array("null".utf8)
        body += Array(#","leaks":"#.utf8) + ControlBody.encode(replay.collector.leaks(replay.session))
        body += Array("}".utf8)
        return body
    }
}
