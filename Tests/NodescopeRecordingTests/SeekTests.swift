import NodescopeCollector
import NodescopeRecording
import NodescopeReplay
import NodescopeWire
import SeededRandom
import Testing

/// Seeking from keyframes gives exactly what a replay from the first record gives.
@Suite("Seeking: keyframes of the replay's state")
struct SeekTests {
    /// Everything a reading command shows of a replay, to compare two of them.
    struct Shown: Equatable {
        var tree: TreeView?
        var leaks: [LeakRecord]
        var processes: [ProcessSummary]
        var applied: UInt64
        var arrival: UInt64
        var ended: Bool
        var warnings: [String]
        var wall: UInt64

        init(_ replay: RecordingReplay) {
            tree = replay.collector.tree(replay.session)
            leaks = replay.collector.leaks(replay.session)
            processes = replay.collector.processes()
            applied = replay.recordsApplied
            arrival = replay.arrivalNanos
            ended = replay.hasEnded
            warnings = replay.warnings
            wall = replay.wallNanos
        }
    }

    /// Random instants of every kind, within and around the recording.
    static func instants(_ reader: RecordingReader, count: Int, random: inout SplitMix64) -> [ReplayInstant] {
        let start = reader.header.startMonotonicNanos
        let span = reader.lastArrivalNanos - start
        return (0..<count).map { _ in
            switch random.below(5) {
            case 0: return .event(UInt64(random.below(Int(reader.recordCount) + 50)))
            case 1: return .seconds(Double(UInt64(random.below(Int(span / 1_000) + 1_000)) * 1_000) / 1e9)
            case 2: return .wall(reader.header.startWallNanos + UInt64(random.below(Int(span) + 1)))
            case 3: return .event(reader.recordCount)
            default: return random.chance(50) ? .end : .seconds(0)
            }
        }
    }

    /// A stream with leaks, late releases, a gap and a restart with a fresh snapshot, a
    /// heartbeat-driven watermark and a normal end.
    static func eventfulRecording(seed: UInt64) throws -> [UInt8] {
        let fixture = StreamFixture(seed: seed, events: 4_000)
        let cut = fixture.frames.count / 2
        var writer = RecordingWriter(header: StreamFixture.header)
        for frame in fixture.frames.prefix(cut) { writer.append(frame.message, arrivalNanos: frame.arrival) }
        let (live, session) = try fixture.live(upTo: cut)
        let gapAt = fixture.frames[cut - 1].arrival + 1
        writer.appendGap(count: 12, arrivalNanos: gapAt)
        writer.appendRestart(arrivalNanos: gapAt + 1)
        for frame in live.resyncStream(session) ?? [] { writer.append(frame, arrivalNanos: gapAt + 1) }
        for frame in fixture.frames.dropFirst(cut) { writer.append(frame.message, arrivalNanos: frame.arrival) }
        writer.finish(.normal, arrivalNanos: fixture.frames.last!.arrival + 1)
        return writer.takeBytes()
    }

    @Test func seeksAtRandomInstantsEqualReplaysFromTheStart() throws {
        let reader = try RecordingReader(bytes: Self.eventfulRecording(seed: 21))
        let whole = RecordingReplay.replay(reader, at: .end)
        #expect(whole.collector.leaks(whole.session).contains { $0.verdict == .lateRelease })
        #expect(whole.collector.leaks(whole.session).contains { $0.verdict == .leaked })
        var random = SplitMix64(seed: 100)
        let instants = Self.instants(reader, count: 60, random: &random)
        let fromStart = instants.map { Shown(RecordingReplay.replay(reader, at: $0)) }
        for spacing: UInt64 in [5, 64, 1_000] {
            let seeker = RecordingSeeker(reader, spacing: spacing)
            #expect(seeker.keyframes.count > 1)
            // A seek inside the recording starts from the keyframe before it, not from the start.
            let middle = reader.recordCount / 2 + 3
            #expect(seeker.keyframe(for: .event(middle)).replay.recordsApplied == middle / spacing * spacing)
            for (instant, expected) in zip(instants, fromStart) {
                #expect(Shown(seeker.replay(at: instant)) == expected, "at \(instant), keyframes every \(spacing)")
            }
        }
    }

    @Test func playingForwardFromTheLastSeekEqualsReplaysFromTheStart() throws {
        let reader = try RecordingReader(bytes: Self.eventfulRecording(seed: 22))
        let seeker = RecordingSeeker(reader, spacing: 256)
        var random = SplitMix64(seed: 222)
        var cursor: ReplayCursor?
        // Forward steps of one record and more, and jumps back, as a slider moves.
        var position: UInt64 = 0
        for _ in 0..<80 {
            position = random.chance(15) ? UInt64(random.below(Int(reader.recordCount))) : position + UInt64(random.below(40))
            let instant = ReplayInstant.event(position)
            let next = seeker.cursor(at: instant, continuing: cursor)
            #expect(Shown(next.replay) == Shown(RecordingReplay.replay(reader, at: instant)), "at \(instant)")
            cursor = next
        }
        // Time instants continue a cursor too, never one that is past them.
        for instant in Self.instants(reader, count: 40, random: &random) {
            let next = seeker.cursor(at: instant, continuing: cursor)
            #expect(Shown(next.replay) == Shown(RecordingReplay.replay(reader, at: instant)), "at \(instant)")
            cursor = next
        }
    }

    @Test func aSmallBudgetThinsTheKeyframesAndStaysExact() throws {
        let reader = try RecordingReader(bytes: Self.eventfulRecording(seed: 23))
        let seeker = RecordingSeeker(reader, spacing: 16, budget: 20_000)
        #expect(seeker.spacing > 16)
        let stored = seeker.keyframes.reduce(0) { $0 + $1.replay.collector.storedItems }
        #expect(stored <= 20_000)
        #expect(seeker.keyframes.map(\.replay.recordsApplied) == (0..<UInt64(seeker.keyframes.count)).map { $0 * seeker.spacing })
        var random = SplitMix64(seed: 233)
        for instant in Self.instants(reader, count: 40, random: &random) {
            #expect(Shown(seeker.replay(at: instant)) == Shown(RecordingReplay.replay(reader, at: instant)), "at \(instant)")
        }
    }

    @Test func damagedRecordingsSeekAsTheyReplay() throws {
        let whole = try Self.eventfulRecording(seed: 24)
        var random = SplitMix64(seed: 244)
        var damaged: [[UInt8]] = []
        // Cut copies (no index: the reader walks them) and copies with bytes changed.
        for _ in 0..<6 { damaged.append(Array(whole.prefix(64 + random.below(whole.count - 64)))) }
        for _ in 0..<20 {
            var bytes = whole
            for _ in 0..<(1 + random.below(3)) {
                bytes[64 + random.below(bytes.count - 64)] = UInt8(truncatingIfNeeded: random.next())
            }
            damaged.append(bytes)
        }
        var checked = 0
        for bytes in damaged {
            guard let reader = try? RecordingReader(bytes: bytes) else { continue }
            let seeker = RecordingSeeker(reader, spacing: 128)
            for instant in Self.instants(reader, count: 8, random: &random) {
                #expect(Shown(seeker.replay(at: instant)) == Shown(RecordingReplay.replay(reader, at: instant)), "at \(instant)")
            }
            checked += 1
        }
        #expect(checked > 15)
    }

    @Test func anEmptyRecordingSeeks() throws {
        var writer = RecordingWriter(header: StreamFixture.header)
        writer.finish(.stopped, arrivalNanos: StreamFixture.start)
        let reader = try RecordingReader(bytes: writer.takeBytes())
        let seeker = RecordingSeeker(reader)
        for instant in [ReplayInstant.end, .event(0), .event(5), .seconds(3)] {
            #expect(Shown(seeker.replay(at: instant)) == Shown(RecordingReplay.replay(reader, at: instant)))
        }
    }
}
