import NodescopeCollector
import NodescopeRecording
import NodescopeReplay
import NodescopeWire
import SeededRandom
import Testing

@Suite("The recording format: round trips, index, hostile bytes")
struct RecordingFormatTests {
    @Test func roundTripGivesBackEveryFrameWithItsArrival() throws {
        let fixture = StreamFixture(seed: 1, events: 3_000)
        let reader = try RecordingReader(bytes: fixture.recording())
        #expect(reader.warnings.isEmpty)
        #expect(reader.header == StreamFixture.header)
        #expect(reader.end == .normal)
        #expect(reader.recordCount == UInt64(fixture.frames.count + 1))
        #expect(reader.index.count == (fixture.frames.count + 1 + RecordingFormat.indexStride - 1) / RecordingFormat.indexStride)
        var records = reader.records()
        for frame in fixture.frames {
            let item = try #require(try records.next())
            #expect(item.content == .frame(frame.message))
            #expect(item.arrivalNanos == frame.arrival)
        }
        #expect(try records.next()?.content == .end(.normal))
        #expect(try records.next() == nil)
    }

    /// What the daemon writes: the frames of one read, copied as bytes into a pack with one
    /// arrival. The file is byte for byte the one made by encoding each message again.
    @Test func framesAppendedAsWireBytesWriteTheSameFileAsMessages() throws {
        let fixture = StreamFixture(seed: 9, events: 6_000)
        var random = SplitMix64(seed: 9)
        var byMessage = RecordingWriter(header: StreamFixture.header)
        var byPack = RecordingWriter(header: StreamFixture.header)
        var viaPack: [UInt8] = []
        var start = 0
        var reads = 0
        while start < fixture.frames.count {
            let end = min(fixture.frames.count, start + 1 + random.below(300))
            let arrival = fixture.frames[end - 1].arrival
            var pack = FramePack(arrivalNanos: arrival)
            for frame in fixture.frames[start..<end] {
                byMessage.append(frame.message, arrivalNanos: arrival)
                FrameEncoder.encoded(frame.message).withUnsafeBytes { pack.add($0) }
            }
            byPack.append(pack)
            reads += 1
            if reads % 7 == 0 {
                byMessage.appendGap(count: 3, arrivalNanos: arrival + 1)
                byPack.appendGap(count: 3, arrivalNanos: arrival + 1)
            }
            if reads % 5 == 0 { byPack.drainBytes { viaPack += $0 } }
            start = end
        }
        // Bytes that are not a frame are left out of a pack.
        var broken = FramePack(arrivalNanos: 0)
        [UInt8]([9, 0, 0, 0, 0x10]).withUnsafeBytes { broken.add($0) }
        [UInt8]([1, 0]).withUnsafeBytes { broken.add($0) }
        #expect(broken.isEmpty)
        byPack.append(broken)
        let last = (fixture.frames.last?.arrival ?? 0) + 10
        byMessage.finish(.normal, arrivalNanos: last)
        byPack.finish(.normal, arrivalNanos: last)
        byPack.drainBytes { viaPack += $0 }
        let expected = byMessage.takeBytes()
        #expect(viaPack == expected)
        let reader = try RecordingReader(bytes: viaPack)
        #expect(reader.warnings.isEmpty)
        #expect(reader.recordCount == byMessage.recordCount)
    }

    @Test func readingFromAnIndexEntryMatchesReadingFromTheStart() throws {
        let fixture = StreamFixture(seed: 2, events: 5_000)
        let reader = try RecordingReader(bytes: fixture.recording())
        for target: UInt64 in [0, 1, 1023, 1024, 1025, 3000, UInt64(fixture.frames.count - 1)] {
            var fromEntry = reader.records(from: reader.entry(before: target))
            var item = try fromEntry.next()
            while let current = item, current.number < target { item = try fromEntry.next() }
            #expect(item?.number == target)
            #expect(item?.content == .frame(fixture.frames[Int(target)].message))
            #expect(item?.arrivalNanos == fixture.frames[Int(target)].arrival)
        }
    }

    @Test func bytesPerEventStayUnderTheTarget() throws {
        let fixture = StreamFixture(seed: 3, events: 20_000)
        let bytes = fixture.recording()
        let events = fixture.frames.filter {
            switch $0.message {
            case .nodeAttached, .objectAdded, .stateChanged, .nodeDetached, .objectReleased: true
            default: false
            }
        }.count
        // Deterministic, not timed: the size of the format (docs/BENCHMARKS.md has the figure).
        #expect(Double(bytes.count) / Double(events) <= 48)
    }

    @Test func foreignAndBrokenHeadersAreClearErrors() throws {
        #expect(throws: RecordingError(.notARecording, "it is not a Nodescope recording (it does not start with NSREC)")) {
            try RecordingReader(bytes: [])
        }
        #expect(throws: RecordingError.self) { try RecordingReader(bytes: Array("{\"nodes\": []}".utf8)) }
        var other = StreamFixture(seed: 4, events: 10).recording()
        other[8] = 9
        do {
            _ = try RecordingReader(bytes: other)
            Issue.record("a recording of version 9 opened")
        } catch {
            #expect(error.code == .unsupportedVersion)
        }
        let whole = StreamFixture(seed: 4, events: 10).recording()
        for cut in 0..<30 {
            #expect(throws: RecordingError.self) { try RecordingReader(bytes: Array(whole.prefix(cut))) }
        }
    }

    @Test func aRecordingCutAnywhereOpensUpToItsLastWholeRecord() throws {
        let fixture = StreamFixture(seed: 5, events: 400)
        let whole = fixture.recording()
        let headerEnd = try RecordingReader(bytes: whole).index[0].byteOffset
        var random = SplitMix64(seed: 55)
        var cuts = Array(Int(headerEnd)..<min(whole.count, Int(headerEnd) + 300))
        cuts += (0..<300).map { _ in Int(headerEnd) + random.below(whole.count - Int(headerEnd)) }
        cuts += [whole.count - 1, whole.count - 16, whole.count - 17]
        for cut in cuts {
            let reader = try RecordingReader(bytes: Array(whole.prefix(cut)))
            #expect(!reader.warnings.isEmpty)
            #expect(reader.recordCount <= UInt64(fixture.frames.count + 1))
            let replay = RecordingReplay.replay(reader, at: .end)
            #expect(replay.recordsApplied == reader.recordCount)
            // What was read is what the collector had after those frames.
            let applied = Int(min(replay.recordsApplied, UInt64(fixture.frames.count)))
            let (live, session) = try fixture.live(upTo: applied)
            if replay.recordsApplied <= UInt64(fixture.frames.count) {
                #expect(replay.collector.tree(replay.session)?.nodes == live.tree(session)?.nodes)
            }
        }
    }

    @Test func corruptBytesNeverTrap() throws {
        let whole = StreamFixture(seed: 6, events: 300).recording()
        var random = SplitMix64(seed: 66)
        for _ in 0..<400 {
            var bytes = whole
            for _ in 0..<(1 + random.below(4)) {
                bytes[random.below(bytes.count)] = UInt8(truncatingIfNeeded: random.next())
            }
            guard let reader = try? RecordingReader(bytes: bytes) else { continue }
            _ = RecordingReplay.replay(reader, at: .end)
        }
        for _ in 0..<200 {
            let noise = (0..<random.below(400)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            guard let reader = try? RecordingReader(bytes: RecordingFormat.magic + [1, 0] + noise) else { continue }
            _ = RecordingReplay.replay(reader, at: .end)
        }
    }
}
