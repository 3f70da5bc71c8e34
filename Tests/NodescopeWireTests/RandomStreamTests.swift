import SeededRandom
import Testing

@testable import NodescopeWire

@Suite("Random message streams, split anywhere")
struct RandomStreamTests {
    static let seeds: [UInt64] = [1, 2, 3, 0xC0FFEE, 0xDEAD_BEEF_F00D]

    @Test("a random stream decodes equal when fed at once", arguments: seeds)
    func atOnce(seed: UInt64) {
        var generator = RandomMessages(seed: seed)
        let messages = generator.messages(count: 400)
        let result = decodeAll(encodeAll(messages))
        #expect(result.error == nil)
        #expect(result.messages == messages)
    }

    @Test("a random stream decodes equal when fed in random splits", arguments: seeds)
    func randomSplits(seed: UInt64) throws {
        var generator = RandomMessages(seed: seed)
        let messages = generator.messages(count: 400)
        let stream = encodeAll(messages)
        var rng = SplitMix64(seed: seed ^ 0x5EED)
        var decoder = FrameDecoder()
        var decoded: [WireMessage] = []
        var offset = 0
        while offset < stream.count {
            let size: Int
            switch rng.next() % 4 {
            case 0: size = 1
            case 1: size = Int(rng.next() % 16) + 1
            case 2: size = Int(rng.next() % 4_096) + 1
            default: size = Int(rng.next() % 100_000) + 1
            }
            let end = min(offset + size, stream.count)
            decoder.feed(stream[offset..<end])
            // Consumed bytes are gone: at most one partial frame plus the new chunk is held.
            #expect(decoder.storageByteCount < 4 + WireLimits.maxFrameLength + (end - offset))
            offset = end
            while let message = try decoder.next() {
                decoded.append(message)
            }
            // Only one partial frame is left buffered after draining.
            #expect(decoder.bufferedByteCount < 4 + WireLimits.maxFrameLength)
        }
        try decoder.finish()
        #expect(decoded == messages)
    }

    @Test("a random stream decodes equal when fed one byte at a time", arguments: seeds.prefix(2))
    func oneByteAtATime(seed: UInt64) throws {
        var generator = RandomMessages(seed: seed)
        let messages = generator.messages(count: 120)
        let stream = encodeAll(messages)
        var decoder = FrameDecoder()
        var decoded: [WireMessage] = []
        for byte in stream {
            decoder.feed(CollectionOfOne(byte))
            while let message = try decoder.next() {
                decoded.append(message)
            }
        }
        try decoder.finish()
        #expect(decoded == messages)
    }

    @Test("raw-memory feeding gives the same messages", arguments: seeds.prefix(2))
    func rawMemory(seed: UInt64) throws {
        var generator = RandomMessages(seed: seed)
        let messages = generator.messages(count: 200)
        let stream = encodeAll(messages)
        var decoder = FrameDecoder()
        var decoded: [WireMessage] = []
        var offset = 0
        while offset < stream.count {
            let end = min(offset + 1_000, stream.count)
            stream[offset..<end].withUnsafeBytes { decoder.feed($0) }
            offset = end
            while let message = try decoder.next() {
                decoded.append(message)
            }
        }
        #expect(decoded == messages)
    }

    @Test("the encoding is canonical: decoding then encoding gives the same bytes", arguments: seeds)
    func canonical(seed: UInt64) {
        var generator = RandomMessages(seed: seed)
        let stream = encodeAll(generator.messages(count: 300))
        let result = decodeAll(stream)
        #expect(encodeAll(result.messages) == stream)
    }

    @Test("corrupted streams never trap, and whatever decodes re-encodes to the bytes it came from", arguments: seeds)
    func corruption(seed: UInt64) {
        var generator = RandomMessages(seed: seed)
        var rng = SplitMix64(seed: seed &* 31)
        let clean = encodeAll(generator.messages(count: 60))
        for _ in 0..<200 {
            var stream = clean
            for _ in 0..<Int(rng.next() % 4 + 1) {
                let index = Int(rng.next() % UInt64(stream.count))
                stream[index] = UInt8(truncatingIfNeeded: rng.next())
            }
            if rng.next() % 3 == 0 {
                stream.removeLast(Int(rng.next() % UInt64(stream.count)))
            }
            let result = decodeAll(stream)
            let reencoded = encodeAll(result.messages)
            #expect(Array(stream.prefix(reencoded.count)) == reencoded)
        }
    }

    @Test("random bytes never trap")
    func garbage() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            let count = Int(rng.next() % 64)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if count >= 4, rng.next() % 2 == 0 {
                // Make the length plausible so payload decoding is reached more often.
                bytes[0] = UInt8(count - 4)
                bytes[1] = 0
                bytes[2] = 0
                bytes[3] = 0
            }
            _ = decodeAll(bytes)
        }
    }
}
