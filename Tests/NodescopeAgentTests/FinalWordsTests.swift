import NodesDebug
import NodescopeWire
import Testing

@testable import NodesAgent
@testable import NodesTracking

/// The agent's last send at a cut exit flush: the rest of the frame being written, never a
/// frame cut in the middle, then the goodbye.
@Suite("The agent's final words")
struct FinalWordsTests {
    static func frames() -> ([UInt8], [Int]) {
        var encoder = FrameEncoder()
        var bytes: [UInt8] = []
        var starts: [Int] = []
        for index in 0..<5 {
            starts.append(bytes.count)
            encoder.encode(
                .defineString(DefineStringFrame(stringID: UInt32(index + 1), value: String(repeating: "x", count: index * 7))), into: &bytes
            )
        }
        return (bytes, starts)
    }

    @Test func aFrameStartIsItsOwnEnd() {
        let (bytes, starts) = Self.frames()
        for start in starts { #expect(CollectorConnection.endOfFrame(at: start, in: bytes) == start) }
        #expect(CollectorConnection.endOfFrame(at: bytes.count, in: bytes) == bytes.count)
    }

    @Test func anOffsetInsideAFrameEndsWhereThatFrameEnds() {
        let (bytes, starts) = Self.frames()
        let ends = Array(starts.dropFirst()) + [bytes.count]
        for (start, end) in zip(starts, ends) {
            for offset in (start + 1)..<end {
                #expect(CollectorConnection.endOfFrame(at: offset, in: bytes) == end)
            }
        }
    }

    @Test func whatIsSentDecodesAsWholeFramesThenTheGoodbye() throws {
        let (bytes, starts) = Self.frames()
        let offset = starts[2] + 3
        var sent = Array(bytes[..<offset])
        sent += bytes[offset..<CollectorConnection.endOfFrame(at: offset, in: bytes)]
        sent += FrameEncoder.encoded(.goodbye(.flushIncomplete))
        var decoder = FrameDecoder()
        decoder.feed(sent)
        var messages: [WireMessage] = []
        while let message = try decoder.next() { messages.append(message) }
        #expect(messages.count == 4)
        #expect(messages.last == .goodbye(.flushIncomplete))
    }
}
