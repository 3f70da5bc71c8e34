import NodesDebug
import NodescopeWire
import Testing

@testable import NodesAgent
@testable import NodesTracking

#if canImport(Glibc)
import Glibc
#endif

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

    #if canImport(Glibc)
    /// A connection over one end of a socket pair whose send buffer is small (the other end is
    /// returned, for reading).
    static func smallConnection() throws -> (CollectorConnection, reader: Int32) {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        var size: Int32 = 4_096
        _ = setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        return (CollectorConnection(socket: UnixSocketClient(descriptor: pair[0])), pair[1])
    }

    /// Everything the reader can read now, decoded (throws on a frame cut in the middle).
    static func readAll(_ reader: Int32) throws -> [WireMessage] {
        _ = fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) | O_NONBLOCK)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(reader, &chunk, chunk.count)
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        var decoder = FrameDecoder()
        decoder.feed(bytes)
        var messages: [WireMessage] = []
        while let message = try decoder.next() { messages.append(message) }
        #expect(decoder.bufferedByteCount == 0, "a frame was cut")
        return messages
    }

    /// The deltas of applied changes are written from where they were encoded; a heartbeat
    /// encoded while nothing else waits follows them in the same write.
    @Test func deltasAndAHeartbeatBehindThemGoOutInOrder() throws {
        var (connection, reader) = try Self.smallConnection()
        defer { close(reader) }
        for sequence in 1...20 {
            connection.encodeStateChanged(sequence: UInt64(sequence), time: 5, node: NodeID(rawValue: 7), state: .active)
        }
        connection.encode(.heartbeat(monotonicNanos: 99))
        #expect(connection.write(waitMilliseconds: 0) == .all)
        connection.encodeReleased(sequence: 21, time: 6, node: NodeID(rawValue: 7), index: 0)
        #expect(connection.write(waitMilliseconds: 0) == .all)
        connection.close()
        let messages = try Self.readAll(reader)
        #expect(messages.count == 22)
        #expect(messages[20] == .heartbeat(monotonicNanos: 99))
        guard case .objectReleased(let released) = messages.last else {
            Issue.record("last: \(String(describing: messages.last))")
            return
        }
        #expect(released.sequence == 21)
        let sequences = messages.prefix(20).compactMap { message -> UInt64? in
            if case .stateChanged(let frame) = message { return frame.sequence }
            return nil
        }
        #expect(sequences == Array(1...20))
    }

    /// A socket that takes only part of the deltas written from where they were encoded: the
    /// rest goes later, in order, and the final words finish the frame cut by the socket, then
    /// say goodbye, never cutting a frame.
    @Test func deltasThatTheSocketTakesInPartGoOnInOrderAndEndInWholeFrames() throws {
        var (connection, reader) = try Self.smallConnection()
        defer { close(reader) }
        for sequence in 1...5_000 {
            connection.encodeStateChanged(sequence: UInt64(sequence), time: 5, node: NodeID(rawValue: 7), state: .active)
        }
        #expect(connection.write(waitMilliseconds: 0) == .partly)
        connection.encode(.heartbeat(monotonicNanos: 99))
        connection.sayFinally(.goodbye(.flushIncomplete), waitMilliseconds: 1_000)
        connection.close()
        let messages = try Self.readAll(reader)
        #expect(messages.last == .goodbye(.flushIncomplete))
        let sequences = messages.compactMap { message -> UInt64? in
            if case .stateChanged(let frame) = message { return frame.sequence }
            return nil
        }
        #expect(!sequences.isEmpty && sequences.count < 5_000)
        #expect(sequences == Array(1...UInt64(sequences.count)))
        #expect(!messages.contains(.heartbeat(monotonicNanos: 99)), "frames queued behind the cut one are given up")
    }
    #endif
}
