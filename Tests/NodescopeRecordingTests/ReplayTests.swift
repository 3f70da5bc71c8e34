import NodescopeCollector
import NodescopeRecording
import NodescopeReplay
import NodescopeWire
import Testing

@Suite("Replay: the collector at any instant of a recording")
struct ReplayTests {
    @Test func replayAtAnEventEqualsTheCollectorFedThatFar() throws {
        let fixture = StreamFixture(seed: 10, events: 2_000)
        let reader = try RecordingReader(bytes: fixture.recording())
        for count in [0, 1, 2, 500, 1_024, 1_777, fixture.frames.count] {
            let replay = RecordingReplay.replay(reader, at: .event(UInt64(count)))
            let (live, session) = try fixture.live(upTo: count)
            #expect(replay.recordsApplied == UInt64(count))
            #expect(replay.collector.tree(replay.session) == live.tree(session))
            #expect(replay.collector.leaks(replay.session) == live.leaks(session))
        }
    }

    @Test func replayAtATimeStopsBeforeTheFirstLaterFrame() throws {
        let fixture = StreamFixture(seed: 11, events: 1_000)
        let reader = try RecordingReader(bytes: fixture.recording())
        for index in [0, 10, 400, 999] {
            let arrival = fixture.frames[index].arrival
            let seconds = Double(arrival - StreamFixture.start) / 1e9
            let replay = RecordingReplay.replay(reader, at: .seconds(seconds))
            // Seconds as a Double round to about a microsecond; frames are at least 1 ns apart.
            let expected = fixture.frames.prefix { $0.arrival <= StreamFixture.start + UInt64(seconds * 1e9) }.count
            #expect(replay.recordsApplied == UInt64(expected))
            let wall = StreamFixture.header.startWallNanos + (arrival - StreamFixture.start)
            let byWall = RecordingReplay.replay(reader, at: .wall(wall))
            #expect(byWall.recordsApplied == UInt64(index + 1))
        }
    }

    @Test func theEndHasTheLeaksOfTheLiveCollector() throws {
        let fixture = StreamFixture(seed: 12, events: 3_000)
        let reader = try RecordingReader(bytes: fixture.recording())
        let replay = RecordingReplay.replay(reader, at: .end)
        let (live, session) = try fixture.live(upTo: fixture.frames.count)
        #expect(replay.hasEnded)
        #expect(!live.leaks(session).isEmpty)
        #expect(replay.collector.leaks(replay.session) == live.leaks(session))
        #expect(replay.collector.tree(replay.session) == live.tree(session))
    }

    @Test func aRecordingThatStartsMidSessionRebuildsTheTree() throws {
        let fixture = StreamFixture(seed: 13, events: 2_000)
        let (live, session) = try fixture.live(upTo: 1_200)
        var header = StreamFixture.header
        header.startsMidSession = true
        header.startMonotonicNanos = fixture.frames[1_199].arrival
        var writer = RecordingWriter(header: header)
        for frame in live.resyncStream(session) ?? [] { writer.append(frame, arrivalNanos: header.startMonotonicNanos) }
        for frame in fixture.frames.dropFirst(1_200) { writer.append(frame.message, arrivalNanos: frame.arrival) }
        writer.finish(.normal, arrivalNanos: fixture.frames.last!.arrival + 1)
        let reader = try RecordingReader(bytes: writer.takeBytes())
        let replay = RecordingReplay.replay(reader, at: .end)
        #expect(replay.warnings.isEmpty)
        let (whole, wholeSession) = try fixture.live(upTo: fixture.frames.count)
        // The same nodes in the same states; only leak history from before the start is missing.
        let replayed = replay.collector.tree(replay.session)?.nodes.map { [$0.id, $0.parent ?? UInt64(0)] as [UInt64] } ?? []
        let expected = whole.tree(wholeSession)?.nodes.map { [$0.id, $0.parent ?? UInt64(0)] as [UInt64] } ?? []
        #expect(replayed == expected)
        #expect(replay.collector.tree(replay.session)?.nodes.map(\.status) == whole.tree(wholeSession)?.nodes.map(\.status))
    }

    /// A replayed tree is stamped with when it stood so: the time asked for, the last record
    /// applied for `event:N`, and the stream's end (its goodbye) once it ended, however late
    /// the time asked for; the wall clock through the header's pair, as the daemon maps it live.
    @Test func aReplayedTreeStandsAtTheTimeAskedForAndAtItsEndOnceEnded() throws {
        let fixture = StreamFixture(seed: 14, events: 500)
        let reader = try RecordingReader(bytes: fixture.recording())
        func wall(_ monotonic: UInt64) -> UInt64 { StreamFixture.header.startWallNanos + (monotonic - StreamFixture.start) }
        #expect(RecordingReplay.replay(reader, at: .event(100)).wallNanos == wall(fixture.frames[99].arrival))
        #expect(RecordingReplay.replay(reader, at: .event(0)).wallNanos == StreamFixture.header.startWallNanos)
        let between = fixture.frames[200].arrival + 1
        let atTime = RecordingReplay.replay(reader, at: .wall(wall(between)))
        #expect(!atTime.hasEnded && atTime.wallNanos == wall(between))
        let goodbye = try #require(fixture.frames.last { if case .goodbye = $0.message { true } else { false } })
        let end = RecordingReplay.replay(reader, at: .end)
        #expect(end.hasEnded && end.wallNanos == wall(goodbye.arrival))
        let hourLater = RecordingReplay.replay(reader, at: .wall(wall(goodbye.arrival) + 3_600_000_000_000))
        #expect(hourLater.wallNanos == end.wallNanos)
    }

    /// A replay that stops at a record the collector refuses knows the tree only up to the
    /// record before: that is when its tree stands, however late the time asked for.
    @Test func aReplayStoppedAtARefusedRecordStandsAtTheRecordBefore() throws {
        let fixture = StreamFixture(seed: 15, events: 300)
        let attach = try #require(fixture.frames.first { if case .nodeAttached = $0.message { true } else { false } })
        var writer = RecordingWriter(header: StreamFixture.header)
        for frame in fixture.frames.prefix(100) { writer.append(frame.message, arrivalNanos: frame.arrival) }
        let last = fixture.frames[99].arrival
        writer.append(attach.message, arrivalNanos: last + 10)
        writer.append(.goodbye(.normalExit), arrivalNanos: last + 20)
        writer.finish(.normal, arrivalNanos: last + 30)
        let reader = try RecordingReader(bytes: writer.takeBytes())
        func wall(_ monotonic: UInt64) -> UInt64 { StreamFixture.header.startWallNanos + (monotonic - StreamFixture.start) }
        for instant in [ReplayInstant.wall(wall(last) + 1_000_000_000), .end, .seconds(1e6)] {
            let replay = RecordingReplay.replay(reader, at: instant)
            #expect(!replay.warnings.isEmpty && !replay.hasEnded, "\(instant): \(replay.warnings)")
            #expect(replay.recordsApplied == 100)
            #expect(replay.wallNanos == wall(last), "\(instant)")
        }
    }

    @Test func instantsParse() {
        #expect(ReplayInstant(argument: "end") == .end)
        #expect(ReplayInstant(argument: "event:12") == .event(12))
        #expect(ReplayInstant(argument: "1.5") == .seconds(1.5))
        #expect(ReplayInstant(argument: "2s") == .seconds(2))
        #expect(ReplayInstant(argument: "500ms") == .seconds(0.5))
        #expect(ReplayInstant(argument: "event:x") == nil)
        #expect(ReplayInstant(argument: "-1") == nil)
        #expect(ReplayInstant(argument: "nan") == nil)
    }
}
